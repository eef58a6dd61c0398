/// @file duet/store/event_bus.hpp
///
/// What every process serving one endpoint must hear: a server's announcements (list_changed,
/// resources/updated), published where the change happened and delivered to every subscriber of the topic,
/// which fans them out to its own process's legacy sessions and listen streams. Topics and payloads are
/// strings, so a shared bus (Redis pub/sub) carries them as they are.
///
/// @par Thread safety
/// Every member may be called from any thread. A handler runs on the thread that delivers (the publisher's,
/// in memory) and must hand off anything slow.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace duet::store {

class event_bus {
public:
    virtual ~event_bus() = default;

    using handler = std::function<void(std::string_view payload)>;
    /// Delivers every later publish on `topic` to `h` until unsubscribe(). Returns the subscription's token.
    [[nodiscard]] virtual std::uint64_t subscribe(std::string topic, handler h) = 0;
    /// Publishes that begin after it returns do not reach the handler (one already delivering on another
    /// thread may finish).
    virtual void unsubscribe(std::uint64_t token) = 0;
    virtual void publish(std::string_view topic, std::string_view payload) = 0;
};

/// Blocks until a marker published on a topic of its own comes back to this process, or `timeout` passes:
/// true when it came, so that the subscriptions made before the call are live (a shared bus confirms one
/// process's subscriptions in order). For a process that should serve only once announcements reach it; never
/// call it from a thread the bus delivers on.
[[nodiscard]] bool await_round_trip(event_bus& bus, std::chrono::milliseconds timeout);

} // namespace duet::store
