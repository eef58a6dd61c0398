// One stream of a shared session (store/event_log.hpp) as a process sees it: a mirror of the Redis Stream
// that keeps its events, filled from the notes every append publishes (and from XRANGE when a note was
// missed), so that reading is local and any process's reader sees every process's events. Appends go to Redis
// first and come back through the notes: the mirror holds what Redis holds, in Redis' order.
#pragma once

#include <duet/store/event_log.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace duet::store::redis {

/// What a mirror asks of the session it belongs to.
class mirror_outbox {
public:
    virtual ~mirror_outbox() = default;
    /// Appends an entry to stream `number` in Redis: 'd' an event, 'f' the final event, 'n' the end
    /// without one.
    virtual void append(std::uint64_t number, char kind, std::string data) = 0;
    /// Tells every process holding the session (this one included): a reader attached ('A') or detached
    /// ('D'), a close request ('C').
    virtual void note(std::string text) = 0;
    /// Entries after `seq` are missing here: read them from Redis.
    virtual void refill(std::uint64_t number, std::uint64_t after) = 0;
    [[nodiscard]] virtual std::string const& tag() const = 0;
};

class mirror_log final : public event_log {
public:
    mirror_log(std::uint64_t number, std::size_t replay_limit, std::weak_ptr<mirror_outbox> out)
        : number_(number), limit_(replay_limit), out_(std::move(out)) {}

    [[nodiscard]] std::uint64_t number() const noexcept override { return number_; }
    void publish(std::string data) override;
    void complete(std::optional<std::string> last) override;
    [[nodiscard]] bool is_complete() const override;
    [[nodiscard]] std::vector<event> events_after(std::uint64_t seq) const override;
    [[nodiscard]] std::vector<event> take_events() override;
    [[nodiscard]] std::uint64_t last_seq() const override;
    [[nodiscard]] std::uint64_t attach(std::function<void()> wake, bool take_over) override;
    void detach(std::uint64_t token) override;
    [[nodiscard]] bool attached(std::uint64_t token) const override;
    [[nodiscard]] bool has_reader() const override;
    void wake() const override;
    void request_close() override;
    [[nodiscard]] bool take_close_request() override;

    // ---- what Redis says (the session's notes and reads) ------------------------------------------------

    /// Entry `seq` of the stream, in whatever order entries come: kept once. `noted` when it came in a note
    /// (a gap before it is then read from Redis).
    void take(std::uint64_t seq, char kind, std::string data, bool noted);
    /// A reader attached in process `tag` (taking the stream over, or not), or detached there.
    void reader_attached(std::string const& tag, bool take_over);
    void reader_detached(std::string const& tag);
    void close_requested();

    /// Who serves the stream (a process's tag) and what to write to it should that process end first.
    void set_origin(std::string owner, std::string on_loss);
    /// The loss answer to write, once, when this process reads the stream for a client while another, the one
    /// serving it, may have ended: the owner to check and the answer. Empty when none is due.
    [[nodiscard]] std::optional<std::pair<std::string, std::string>> loss_candidate(std::string const& me);
    /// The owner was found gone and the loss answer appended (or it completed meanwhile): never again.
    void loss_reported();

private:
    std::uint64_t const number_;
    std::size_t const limit_;
    std::weak_ptr<mirror_outbox> const out_;
    mutable std::mutex mutex_;
    std::map<std::uint64_t, std::string> events_; ///< kept events by sequence number
    std::uint64_t seen_ = 0;                      ///< the highest sequence number of any entry taken
    std::uint64_t last_event_ = 0;                ///< the highest of an event ('d' or 'f')
    bool complete_ = false;
    bool completing_ = false; ///< complete() was called here: what follows is ignored
    bool close_requested_ = false;
    std::function<void()> wake_;
    std::uint64_t reader_ = 0; ///< this process's reader; 0: none
    std::uint64_t next_reader_ = 1;
    std::string remote_reader_; ///< the process holding a reader elsewhere; empty: none
    std::string owner_;         ///< the process serving the stream's request
    std::string on_loss_;
    bool loss_reported_ = false;
};

} // namespace duet::store::redis
