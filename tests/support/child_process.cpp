#include "support/child_process.hpp"

#include "support/files.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace duet::test {

using steady = std::chrono::steady_clock;

namespace {

std::string unique_stderr_path() {
    static std::atomic<int> counter{0};
    return testing::TempDir() + "duet-child-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) +
           ".stderr";
}

} // namespace

int poll_ms_until(steady::time_point deadline) {
    auto const left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()).count();
    return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1000));
}

child_process::child_process(std::vector<std::string> argv, input in) : stderr_path_(unique_stderr_path()) {
    int in_pipe[2] = {-1, -1};
    int out_pipe[2] = {-1, -1};
    if ((in == input::pipe && ::pipe2(in_pipe, O_CLOEXEC) != 0) || ::pipe2(out_pipe, O_CLOEXEC) != 0) {
        ADD_FAILURE() << "pipe: " << std::strerror(errno);
        return;
    }
    std::vector<char*> args;
    for (auto& a : argv)
        args.push_back(a.data());
    args.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (in == input::pipe)
        posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
    else
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int const rc = ::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (in == input::pipe) {
        ::close(in_pipe[0]);
        in_ = in_pipe[1];
    }
    ::close(out_pipe[1]);
    out_ = out_pipe[0];
    if (rc != 0) {
        pid_ = -1;
        ADD_FAILURE() << "posix_spawn " << argv.front() << ": " << std::strerror(rc);
    }
}

child_process::~child_process() {
    close_in();
    if (running()) {
        ::kill(pid_, SIGKILL); // our own child, by its pid
        ::waitpid(pid_, &raw_status_, 0);
    }
    close_out();
    std::remove(stderr_path_.c_str());
}

void child_process::close_in() {
    if (in_ >= 0) {
        ::close(in_);
        in_ = -1;
    }
}

void child_process::close_out() {
    if (out_ >= 0) {
        ::close(out_);
        out_ = -1;
    }
}

void child_process::signal(int sig) {
    if (running())
        ::kill(pid_, sig);
}

bool child_process::exited_by(steady::time_point deadline) {
    if (!running())
        return pid_ > 0;
    for (;;) {
        auto const r = ::waitpid(pid_, &raw_status_, WNOHANG);
        if (r == pid_) {
            status_ = WIFEXITED(raw_status_) ? WEXITSTATUS(raw_status_) : -1;
            return true;
        }
        if (r < 0 && errno != EINTR)
            return false;
        if (steady::now() >= deadline)
            return false;
        ::poll(nullptr, 0, 10); // bounded polling for the exit status, not synchronization
    }
}

int child_process::wait_exit(steady::time_point deadline) {
    if (status_)
        return *status_;
    if (pid_ <= 0)
        return -1;
    if (!exited_by(deadline)) {
        ADD_FAILURE() << "the process did not exit in time; its stderr:\n" << stderr_text();
        return -1;
    }
    if (!WIFEXITED(raw_status_))
        ADD_FAILURE() << "the process died of signal "
                      << (WIFSIGNALED(raw_status_) ? WTERMSIG(raw_status_) : 0) << "; its stderr:\n"
                      << stderr_text();
    return *status_;
}

std::string child_process::stderr_text() const {
    return read_file(stderr_path_);
}

std::string child_process::first_stdout_line(std::chrono::steady_clock::time_point deadline) {
    std::string text;
    while (running() && text.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
        pollfd p{out_, POLLIN, 0};
        if (::poll(&p, 1, poll_ms_until(deadline)) <= 0)
            continue;
        char buf[256];
        auto const got = ::read(out_, buf, sizeof buf);
        if (got <= 0)
            break;
        text.append(buf, static_cast<std::size_t>(got));
    }
    auto const nl = text.find('\n');
    return nl == std::string::npos ? std::string() : text.substr(0, nl);
}

} // namespace duet::test
