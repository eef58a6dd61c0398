// Whether this kernel lets an unprivileged thread take Linux's batch scheduling class (a sandbox may refuse
// sched_setscheduler), for the tests of busy batching (src/support/busy_batching.hpp) to skip themselves
// where it cannot happen. Probed on a thread of its own, so the caller's class is never changed.
#pragma once

#include <gtest/gtest.h>

#include <sched.h>

#include <thread>

namespace duet::test {

inline bool kernel_allows_batch_class() {
    bool allowed = false;
    std::thread([&] {
        sched_param p{};
        allowed = ::sched_setscheduler(0, SCHED_BATCH, &p) == 0;
    }).join();
    return allowed;
}

} // namespace duet::test

#define DUET_SKIP_WITHOUT_BATCH_CLASS()                                                                      \
    if (!::duet::test::kernel_allows_batch_class())                                                          \
    GTEST_SKIP() << "this kernel refuses SCHED_BATCH to an unprivileged thread"
