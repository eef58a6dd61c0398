// Legacy Streamable HTTP sessions: one server::connection each, the id the client echoes, and the log of
// session-level messages (server requests and notifications) that the standalone GET stream delivers, with
// event ids so a broken stream resumes from `Last-Event-ID` within a bounded replay window.
#pragma once

#include <duet/server/connection.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace duet::transport::http {

/// 128 bits from the OS CSPRNG (OpenSSL RAND_bytes), as 32 lowercase hex digits: visible ASCII per the spec.
[[nodiscard]] std::string mint_session_id();

class legacy_session {
public:
    legacy_session(std::string id, std::size_t replay_limit)
        : id_(std::move(id)), replay_limit_(replay_limit) {}

    [[nodiscard]] std::string const& id() const noexcept { return id_; }

    std::shared_ptr<server::connection> conn;

    /// Appends a session-level message and wakes the attached stream. Oldest events beyond the replay window
    /// are dropped.
    void publish(std::string line);

    struct event {
        std::uint64_t id;
        std::string data;
    };
    /// Events after `last_seen` (0 = from the oldest kept).
    [[nodiscard]] std::vector<event> events_after(std::uint64_t last_seen) const;

    /// At most one standalone stream at a time: attach() refuses (returns 0) while one is attached, unless
    /// `take_over` (a resumption with Last-Event-ID: the client saw its stream break before the server did);
    /// then the previous stream is woken and sees it is no longer attached. Returns the new stream's token.
    [[nodiscard]] std::uint64_t attach(std::function<void()> wake, bool take_over = false);
    /// Detaches the stream `token` names, if it is still the attached one.
    void detach(std::uint64_t token);
    /// Whether the stream `token` names is the attached one.
    [[nodiscard]] bool attached(std::uint64_t token) const;
    /// Ends the session: wakes the stream so it closes.
    void end();
    [[nodiscard]] bool ended() const;

    void touch() { last_seen_ = std::chrono::steady_clock::now(); }
    [[nodiscard]] std::chrono::steady_clock::time_point last_seen() const { return last_seen_; }

private:
    std::string id_;
    std::size_t replay_limit_;
    mutable std::mutex mutex_;
    std::deque<event> log_;
    std::uint64_t next_event_id_ = 1;
    std::function<void()> wake_;
    std::uint64_t stream_ = 0; ///< the attached stream's token; 0: none
    std::uint64_t next_stream_ = 1;
    bool ended_ = false;
    std::atomic<std::chrono::steady_clock::time_point> last_seen_{std::chrono::steady_clock::now()};
};

class session_store {
public:
    explicit session_store(std::size_t max_sessions) : max_(max_sessions) {}

    /// Null when the store is full.
    [[nodiscard]] std::shared_ptr<legacy_session> create(std::size_t replay_limit);
    [[nodiscard]] std::shared_ptr<legacy_session> find(std::string const& id);
    std::shared_ptr<legacy_session> remove(std::string const& id);
    /// Sessions idle longer than `expiry`, removed from the store.
    std::vector<std::shared_ptr<legacy_session>> expire(std::chrono::milliseconds expiry);
    std::vector<std::shared_ptr<legacy_session>> all();
    [[nodiscard]] std::size_t size() const;

private:
    std::size_t max_;
    mutable std::mutex mutex_;
    std::map<std::string, std::shared_ptr<legacy_session>> sessions_;
};

} // namespace duet::transport::http
