#include "support/busy_batching.hpp"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace duet::support {

namespace detail {

// A thread's count. It lives as long as the thread; a hold may end on another thread (a strand moves a
// coroutine), so the count is atomic and the class is set by the thread's id, not for the caller.
struct busy_thread {
    pid_t tid = 0;
    std::atomic<std::size_t> in_flight{0};
    std::mutex switching; // one class change at a time, in the order the counts crossed
    // Written under `switching`; read without it, also by a forked child (async-signal-safe: lock-free).
    std::atomic<bool> batched{false};
    bool left_alone = false; // its class was not the normal one, or the kernel refused: never changed
};

} // namespace detail

namespace {

thread_local detail::busy_thread this_thread;
static_assert(std::atomic<bool>::is_always_lock_free);

bool set_class(pid_t tid, int policy) {
    sched_param p{};
    p.sched_priority = 0;
    return ::sched_setscheduler(tid, policy, &p) == 0;
}

void settle(detail::busy_thread& t) {
    std::lock_guard lock(t.switching);
    if (t.left_alone)
        return;
    auto const n = t.in_flight.load(std::memory_order_relaxed);
    if (!t.batched.load(std::memory_order_relaxed) && n >= busy_enter_at) {
        if (::sched_getscheduler(t.tid) != SCHED_OTHER || !set_class(t.tid, SCHED_BATCH)) {
            t.left_alone = true;
            return;
        }
        t.batched.store(true, std::memory_order_relaxed);
    } else if (t.batched.load(std::memory_order_relaxed) && n <= busy_leave_at) {
        if (!set_class(t.tid, SCHED_OTHER)) {
            t.left_alone = true; // stays batched; a kernel that refuses once would refuse again
            return;
        }
        t.batched.store(false, std::memory_order_relaxed);
    }
}

} // namespace

busy_batching_hold hold_busy_thread() {
    auto& t = this_thread;
    if (t.tid == 0)
        t.tid = static_cast<pid_t>(::syscall(SYS_gettid));
    if (t.in_flight.fetch_add(1, std::memory_order_relaxed) + 1 == busy_enter_at)
        settle(t);
    return busy_batching_hold(&t);
}

busy_batching_hold::~busy_batching_hold() {
    if (!thread_)
        return;
    if (thread_->in_flight.fetch_sub(1, std::memory_order_relaxed) - 1 == busy_leave_at)
        settle(*thread_);
}

void restore_scheduling_in_child() noexcept {
    if (this_thread.batched.load(std::memory_order_relaxed))
        set_class(0, SCHED_OTHER);
}

bool thread_batched_for_load() noexcept {
    return this_thread.batched.load(std::memory_order_relaxed);
}

} // namespace duet::support
