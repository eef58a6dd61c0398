// File: tests/support/wait.hpp
//
// Waiting for an event rather than for a time: a test polls the condition the event makes true, with an
// overall limit far beyond what even a loaded machine needs, so that only a hang ever waits that long. A
// fixed sleep guesses how long the event takes, and a loaded machine (an ASan build sharing two busy cores)
// can always take longer.
//
//     ASSERT_TRUE(wait_until([&] { return c.server_end_closed(); }, 10s)) << "the server never closed";
#pragma once

#include <chrono>
#include <thread>

namespace duet::test {

/// Polls `done` every `step` until it holds (true) or `limit` has passed (false).
template<class Predicate>
bool wait_until(Predicate&& done, std::chrono::milliseconds limit,
                std::chrono::milliseconds step = std::chrono::milliseconds(5)) {
    auto const deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= deadline)
            return false;
        std::this_thread::sleep_for(step);
    }
    return true;
}

} // namespace duet::test
