// File: tests/support/child_process.hpp
//
// A child process for the suites that drive the real `duet` binary (tests/stdio over pipes, tests/http for
// what only a process shows, SIGTERM drains): spawned with posix_spawn, its stdout always a pipe, its stdin a
// pipe or /dev/null, its stderr a file in the test's temporary directory (shown when a wait fails, removed
// afterwards). It is signalled and reaped by its own pid only; the destructor kills (SIGKILL) one still
// running. Every wait is bounded.
//
//     child_process child({DUET_BINARY, "serve", "--stdio"}, child_process::input::pipe);
//     ::write(child.in(), ...); ::read(child.out(), ...);
//     child.close_in();
//     EXPECT_EQ(child.wait_exit(std::chrono::seconds(60)), 0);
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace duet::test {

/// Milliseconds left until `deadline` for poll(2): 0 when past, at most 1000 so callers re-check often.
[[nodiscard]] int poll_ms_until(std::chrono::steady_clock::time_point deadline);

class child_process {
public:
    enum class input { pipe, null };

    /// Spawns `argv` (argv[0] is the program's path); a test failure when it cannot be started (running()
    /// is then false).
    child_process(std::vector<std::string> argv, input in);
    ~child_process();
    child_process(child_process const&) = delete;
    child_process& operator=(child_process const&) = delete;

    [[nodiscard]] bool running() const noexcept { return pid_ > 0 && !status_; }
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }
    /// Our end of its stdin (-1 when null or closed) and of its stdout (-1 once closed).
    [[nodiscard]] int in() const noexcept { return in_; }
    [[nodiscard]] int out() const noexcept { return out_; }
    void close_in();
    void close_out();

    void signal(int sig);
    /// Waits until `deadline` for the exit: the exit status; -1 with a test failure when it did not exit in
    /// time or died of a signal. Remembered: later calls return the same.
    int wait_exit(std::chrono::steady_clock::time_point deadline);
    int wait_exit(std::chrono::milliseconds timeout) {
        return wait_exit(std::chrono::steady_clock::now() + timeout);
    }
    /// Whether it exited by `deadline`, quietly (for a destructor's bounded courtesy wait).
    bool exited_by(std::chrono::steady_clock::time_point deadline);

    [[nodiscard]] std::string stderr_text() const;
    /// The first line it prints on stdout (a server's URL), without its newline, waiting until `deadline`;
    /// empty when it prints none before it exits or the time is up.
    [[nodiscard]] std::string first_stdout_line(std::chrono::steady_clock::time_point deadline);

private:
    pid_t pid_ = -1;
    int in_ = -1;
    int out_ = -1;
    std::optional<int> status_;
    int raw_status_ = 0;
    std::string stderr_path_;
};

} // namespace duet::test
