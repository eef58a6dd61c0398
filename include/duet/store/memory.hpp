/// @file duet/store/memory.hpp
///
/// The in-memory stores: one process's sessions and event logs (the default of transport::http_server) and
/// event bus and tasks (the defaults of server::server).
#pragma once

#include <duet/store/event_bus.hpp>
#include <duet/store/session_store.hpp>
#include <duet/store/task_store.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
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

/// One process's tasks (the default of server::server). `now` says what time it is (tests move it); empty:
/// the system clock.
[[nodiscard]] std::shared_ptr<task_store>
make_memory_task_store(std::function<std::chrono::system_clock::time_point()> now = {});

} // namespace duet::store
