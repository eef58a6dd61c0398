/// @file duet/store/event_log.hpp
///
/// One resumable SSE stream of a legacy session (DIGEST §9 "Resumability"): the session's standalone GET
/// stream (number 0) or the stream of one POST request. Every event gets a sequence number; the newest ones,
/// within the store's replay window, are kept, so a client whose connection broke resumes with
/// `Last-Event-ID` and receives what followed, on that stream only (the spec forbids replaying another
/// stream's messages). That window is also the stream's write-queue bound: a reader that falls further behind
/// loses the oldest events. One reader (an HTTP response) is attached at a time.
///
/// What crosses the interface can cross a process: stream numbers, sequence numbers, reader tokens and
/// serialized messages as strings. The one exception is a reader's wake-up, a callback into the process the
/// reader runs in; a shared implementation calls it when its notification (e.g. pub/sub) arrives there.
///
/// @par Thread safety
/// Every member may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace duet::store {

class event_log {
public:
    virtual ~event_log() = default;

    /// The stream's number within its session (0: the standalone stream).
    [[nodiscard]] virtual std::uint64_t number() const noexcept = 0;

    /// Appends an event and wakes the reader. Ignored once the stream is complete.
    virtual void publish(std::string data) = 0;
    /// Nothing follows: `last` (a POST stream's response; none when the request got no answer) is the final
    /// event. Wakes the reader.
    virtual void complete(std::optional<std::string> last) = 0;
    [[nodiscard]] virtual bool is_complete() const = 0;

    struct event {
        std::uint64_t seq;
        std::string data;
    };
    /// The kept events after `seq` (0: from the first).
    [[nodiscard]] virtual std::vector<event> events_after(std::uint64_t seq) const = 0;
    /// Moves every kept event out (for a stream that is done with: its events will not be replayed).
    [[nodiscard]] virtual std::vector<event> take_events() = 0;
    /// The sequence number of the newest event; 0 before the first.
    [[nodiscard]] virtual std::uint64_t last_seq() const = 0;

    /// Attaches a reader, woken by `wake` whenever there is something new for it. Refused (0) while another
    /// reader is attached, unless `take_over` (a resumption: the client saw its stream break before the
    /// server did); the superseded reader is woken and finds itself detached. Returns the reader's token.
    [[nodiscard]] virtual std::uint64_t attach(std::function<void()> wake, bool take_over) = 0;
    virtual void detach(std::uint64_t token) = 0;
    [[nodiscard]] virtual bool attached(std::uint64_t token) const = 0;
    [[nodiscard]] virtual bool has_reader() const = 0;
    /// Wakes the attached reader, if any.
    virtual void wake() const = 0;

    /// The handler asks the reader to end its response now, the request going on (SEP-1699 polling: the
    /// client resumes after the `retry` delay). Taken once by the reader.
    virtual void request_close() = 0;
    [[nodiscard]] virtual bool take_close_request() = 0;
};

} // namespace duet::store
