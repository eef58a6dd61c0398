// Linux's batch scheduling class for a thread while it serves many requests at once.
//
// A gateway shares its core with the server it stands in front of more often than not (a container with one
// CPU, a stdio child, a local HTTP server). Every answer that server writes wakes the gateway, and a woken
// thread of the normal class preempts the server in the middle of its batch: one switch per request, each
// process finding the other's data in the caches, the pair at half the server's own rate. A thread of the
// batch class (SCHED_BATCH) is woken all the same but waits for the running task to block or use up its
// slice, so the server answers a whole batch and the gateway relays it in one turn. Waiting is only worth it
// when requests queue anyway: a lone request would wait for the neighbour's slice. Hence the hysteresis:
// batch from busy_enter_at requests in flight on the thread, normal again at busy_leave_at or fewer.
#pragma once

#include <cstddef>

namespace duet::support {

class busy_batching_hold;

/// One request in flight on the calling thread until the hold ends (on any thread).
[[nodiscard]] busy_batching_hold hold_busy_thread();

/// In a child between fork and exec: back to the normal class when the forking thread was batched for being
/// busy (a child does not inherit a load it never had). Async-signal-safe.
void restore_scheduling_in_child() noexcept;

/// In flight at which a thread turns to the batch class, and at which it turns back.
inline constexpr std::size_t busy_enter_at = 8;
inline constexpr std::size_t busy_leave_at = 2;

/// Whether the calling thread is in the batch class for being busy (tests).
[[nodiscard]] bool thread_batched_for_load() noexcept;

namespace detail {
struct busy_thread;
}

class busy_batching_hold {
public:
    busy_batching_hold(busy_batching_hold&& other) noexcept : thread_(other.thread_) {
        other.thread_ = nullptr;
    }
    busy_batching_hold& operator=(busy_batching_hold&&) = delete;
    busy_batching_hold(busy_batching_hold const&) = delete;
    ~busy_batching_hold();

private:
    friend busy_batching_hold hold_busy_thread();
    explicit busy_batching_hold(detail::busy_thread* t) noexcept : thread_(t) {}
    detail::busy_thread* thread_;
};

} // namespace duet::support
