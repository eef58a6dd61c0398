// The store implementations every store test runs against: each a factory of a session_store within given
// limits, of an event_bus and of a task_store. A shared store (Redis) joins the list with a factory of its
// own, and the same tests pin it.
#pragma once

#include <duet/store/memory.hpp>
#include <duet/store/session_store.hpp>
#include <duet/store/task_store.hpp>

#include "redis_kind.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace duet::store::checks {

struct memory_kind {
    static std::shared_ptr<session_store> make(memory_limits limits) {
        return make_memory_session_store(limits);
    }
    static std::shared_ptr<event_bus> make_bus() { return make_memory_event_bus(); }
    /// A task store whose clock is `now` (empty: the system clock).
    static std::shared_ptr<task_store>
    make_task_store(std::function<std::chrono::system_clock::time_point()> now = {}) {
        return make_memory_task_store(std::move(now));
    }
    /// Its tests move time by hand rather than wait for it.
    static constexpr bool task_clock_settable = true;
    /// Returns once what was published so far has been delivered: at once in memory, where publish()
    /// delivers before it returns; a shared bus waits for a marker of its own to come back.
    static void settle(event_bus&) {}
    static std::string unavailable() { return {}; }
};

using store_kinds = ::testing::Types<memory_kind>;
/// The event bus is shared through Redis already; sessions and event logs are not yet.
using bus_kinds = ::testing::Types<memory_kind, redis_kind>;
/// Tasks are shared through Redis too.
using task_kinds = ::testing::Types<memory_kind, redis_kind>;

inline std::vector<std::uint64_t> seqs(std::vector<event_log::event> const& events) {
    std::vector<std::uint64_t> out;
    for (auto const& e : events)
        out.push_back(e.seq);
    return out;
}

} // namespace duet::store::checks
