// The store implementations every store test runs against: each a factory of a session_store within given
// limits and of an event_bus. A shared store (Redis) joins the list with a factory of its own, and the same
// tests pin it.
#pragma once

#include <duet/store/memory.hpp>
#include <duet/store/session_store.hpp>

#include "redis_kind.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace duet::store::checks {

struct memory_kind {
    static std::shared_ptr<session_store> make(memory_limits limits) {
        return make_memory_session_store(limits);
    }
    static std::shared_ptr<event_bus> make_bus() { return make_memory_event_bus(); }
    /// Returns once what was published so far has been delivered: at once in memory, where publish()
    /// delivers before it returns; a shared bus waits for a marker of its own to come back.
    static void settle(event_bus&) {}
    static std::string unavailable() { return {}; }
};

using store_kinds = ::testing::Types<memory_kind>;
/// The event bus is shared through Redis already; sessions and event logs are not yet.
using bus_kinds = ::testing::Types<memory_kind, redis_kind>;

inline std::vector<std::uint64_t> seqs(std::vector<event_log::event> const& events) {
    std::vector<std::uint64_t> out;
    for (auto const& e : events)
        out.push_back(e.seq);
    return out;
}

} // namespace duet::store::checks
