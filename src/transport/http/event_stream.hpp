// One resumable SSE stream of a legacy session (DIGEST §9 "Resumability"): the session's standalone GET
// stream (number 0) or the stream of one POST request. Every event gets a sequence number; the newest
// `replay_limit` are kept, so a client whose connection broke resumes with `Last-Event-ID` and receives what
// followed, on that stream only (the spec forbids replaying another stream's messages). That window is also
// the stream's write-queue bound: a reader that falls further behind loses the oldest events. One reader
// (an HTTP response) is attached at a time.
//
// @par Thread safety
// Every member may be called from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::transport::http {

class event_stream {
public:
    event_stream(std::uint64_t number, std::size_t replay_limit) : number_(number), limit_(replay_limit) {}

    [[nodiscard]] std::uint64_t number() const noexcept { return number_; }

    /// Appends an event and wakes the reader. Ignored once the stream is complete.
    void publish(std::string data);
    /// Nothing follows: `last` (a POST stream's response; none when the request got no answer) is the final
    /// event. Wakes the reader.
    void complete(std::optional<std::string> last);
    [[nodiscard]] bool is_complete() const;

    struct event {
        std::uint64_t seq;
        std::string data;
    };
    /// The kept events after `seq` (0: from the first).
    [[nodiscard]] std::vector<event> events_after(std::uint64_t seq) const;
    /// Moves every kept event out (for a stream that is done with: its events will not be replayed).
    [[nodiscard]] std::vector<event> take_events();
    /// The sequence number of the newest event; 0 before the first.
    [[nodiscard]] std::uint64_t last_seq() const;

    /// Attaches a reader, woken by `wake` whenever there is something new for it. Refused (0) while another
    /// reader is attached, unless `take_over` (a resumption: the client saw its stream break before the
    /// server did); the superseded reader is woken and finds itself detached. Returns the reader's token.
    [[nodiscard]] std::uint64_t attach(std::function<void()> wake, bool take_over);
    void detach(std::uint64_t token);
    [[nodiscard]] bool attached(std::uint64_t token) const;
    [[nodiscard]] bool has_reader() const;
    /// Wakes the attached reader, if any.
    void wake() const;

    /// The handler asks the reader to end its response now, the request going on (SEP-1699 polling: the
    /// client resumes after the `retry` delay). Taken once by the reader.
    void request_close();
    [[nodiscard]] bool take_close_request();

private:
    std::uint64_t const number_;
    std::size_t const limit_;
    mutable std::mutex mutex_;
    std::deque<event> log_;
    std::uint64_t last_seq_ = 0;
    bool complete_ = false;
    bool close_requested_ = false;
    std::function<void()> wake_;
    std::uint64_t reader_ = 0; ///< the attached reader's token; 0: none
    std::uint64_t next_reader_ = 1;
};

/// The SSE id of event `seq` of stream `stream`: "<stream>-<seq>". Sequence 0 names the point before the
/// first event (a priming event's id).
[[nodiscard]] std::string format_event_id(std::uint64_t stream, std::uint64_t seq);

struct event_position {
    std::uint64_t stream;
    std::uint64_t seq;
};
/// The inverse of format_event_id; nullopt for anything else.
[[nodiscard]] std::optional<event_position> parse_event_id(std::string_view id);

} // namespace duet::transport::http
