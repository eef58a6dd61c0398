/// @file duet/store/memory.hpp
///
/// The in-memory stores: one process's sessions and event logs (the default of transport::http_server) and
/// event bus (the default of server::server).
#pragma once

#include <duet/store/event_bus.hpp>
#include <duet/store/session_store.hpp>

#include <cstddef>
#include <memory>

namespace duet::store {

struct memory_limits {
    std::size_t max_sessions = 10000;
    /// Events each stream keeps for Last-Event-ID resumption (also what waits there for a slow reader).
    std::size_t replay_events = 256;
    /// POST streams a session keeps for resumption; beyond it the oldest no client reads is dropped.
    std::size_t resumable_streams = 32;
};

[[nodiscard]] std::shared_ptr<session_store> make_memory_session_store(memory_limits limits);

/// Delivers each publish to the topic's subscribers on the publishing thread, before publish() returns.
[[nodiscard]] std::shared_ptr<event_bus> make_memory_event_bus();

} // namespace duet::store
