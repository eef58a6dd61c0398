#include "stdio/stdio_client.hpp"

#include "stdio/messages.hpp"

#include <boost/json/serialize.hpp>

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
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace duet::test {

namespace json = boost::json;
using steady = std::chrono::steady_clock;

namespace {

int remaining_ms(steady::time_point deadline) {
    auto const left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()).count();
    return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1000));
}

std::string unique_stderr_path() {
    static std::atomic<int> counter{0};
    return testing::TempDir() + "duet-stdio-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) +
           ".stderr";
}

} // namespace

stdio_client::stdio_client(std::vector<std::string> extra_args, served_eras eras)
    : log_(eras), stderr_path_(unique_stderr_path()) {
    int in_pipe[2] = {-1, -1};
    int out_pipe[2] = {-1, -1};
    if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0) {
        ADD_FAILURE() << "pipe: " << std::strerror(errno);
        return;
    }
    std::vector<std::string> args{DUET_BINARY, "serve", "--stdio"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int const rc = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    in_ = in_pipe[1];
    out_ = out_pipe[0];
    if (rc != 0) {
        pid_ = -1;
        ADD_FAILURE() << "posix_spawn " << args[0] << ": " << std::strerror(rc);
        return;
    }
    ::fcntl(out_, F_SETFL, ::fcntl(out_, F_GETFL) | O_NONBLOCK);
    ::fcntl(in_, F_SETFL, ::fcntl(in_, F_GETFL) | O_NONBLOCK);
}

stdio_client::~stdio_client() {
    close_input();
    if (pid_ > 0 && !status_) {
        // Bounded: a healthy child exits at end of input; one that does not is killed (by its own pid).
        auto const deadline = steady::now() + std::chrono::seconds(10);
        while (!eof_ && pump(deadline)) {
        }
        int status = 0;
        bool exited = false;
        while (steady::now() < deadline) {
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                exited = true;
                break;
            }
            ::poll(nullptr, 0, 10); // bounded polling for the exit, not synchronization
        }
        if (!exited) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, &status, 0);
        }
    }
    if (out_ >= 0)
        ::close(out_);
    std::remove(stderr_path_.c_str());
}

void stdio_client::close_input() {
    if (in_ >= 0) {
        ::close(in_);
        in_ = -1;
    }
}

void stdio_client::close_output() {
    if (out_ >= 0) {
        ::close(out_);
        out_ = -1;
    }
    eof_ = true;
}

std::string stdio_client::stderr_text() const {
    std::ifstream f(stderr_path_);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

void stdio_client::take_lines() {
    std::size_t nl;
    while ((nl = pending_.find('\n')) != std::string::npos) {
        std::string line = pending_.substr(0, nl);
        pending_.erase(0, nl + 1);
        if (line.empty()) {
            ADD_FAILURE() << "the server wrote an empty line";
            continue;
        }
        log_.record_received(line);
    }
}

bool stdio_client::pump(steady::time_point deadline) {
    if (eof_ || out_ < 0)
        return false;
    pollfd p{out_, POLLIN, 0};
    int const n = ::poll(&p, 1, remaining_ms(deadline));
    if (n < 0 && errno == EINTR)
        return true;
    if (n <= 0)
        return steady::now() < deadline;
    char buf[64 * 1024];
    for (;;) {
        auto const got = ::read(out_, buf, sizeof buf);
        if (got > 0) {
            pending_.append(buf, static_cast<std::size_t>(got));
            continue;
        }
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        eof_ = true; // 0: the child closed its stdout
        break;
    }
    take_lines();
    if (eof_ && !pending_.empty()) {
        ADD_FAILURE() << "the server's output ended without a newline: " << pending_;
        pending_.clear();
    }
    return !eof_;
}

void stdio_client::send_raw(std::string_view bytes, json::value const& as) {
    if (auto const* many = as.if_array())
        for (auto const& m : *many)
            log_.record_sent(m);
    else if (!as.is_null())
        log_.record_sent(as);
    auto const deadline = steady::now() + default_wait;
    while (!bytes.empty()) {
        if (in_ < 0) {
            ADD_FAILURE() << "writing after the input was closed";
            return;
        }
        pollfd fds[2] = {{in_, POLLOUT, 0}, {eof_ ? -1 : out_, POLLIN, 0}};
        int const n = ::poll(fds, 2, remaining_ms(deadline));
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 && steady::now() >= deadline) {
            ADD_FAILURE() << "timed out writing to the server; its stderr:\n" << stderr_text();
            return;
        }
        if (fds[1].revents)
            pump(steady::now()); // drain its output so neither side blocks on a full pipe
        if (fds[0].revents & (POLLERR | POLLHUP)) {
            ADD_FAILURE() << "the server closed its input; its stderr:\n" << stderr_text();
            return;
        }
        if (fds[0].revents & POLLOUT) {
            auto const w = ::write(in_, bytes.data(), bytes.size());
            if (w > 0)
                bytes.remove_prefix(static_cast<std::size_t>(w));
            else if (w < 0 && errno != EAGAIN && errno != EINTR) {
                ADD_FAILURE() << "write to the server: " << std::strerror(errno);
                return;
            }
        }
    }
}

void stdio_client::send(json::value const& message) {
    send_raw(json::serialize(message) + "\n", message);
}

std::optional<std::size_t> stdio_client::wait_for(std::function<bool(json::value const&)> const& pred,
                                                  std::size_t from, std::chrono::milliseconds timeout) {
    auto const deadline = steady::now() + timeout;
    std::size_t i = from;
    for (;;) {
        auto const& all = log_.received();
        for (; i < all.size(); ++i)
            if (pred(all[i]))
                return i;
        if (eof_) {
            ADD_FAILURE() << "the server closed its output before the awaited message; its stderr:\n"
                          << stderr_text();
            return std::nullopt;
        }
        if (steady::now() >= deadline) {
            ADD_FAILURE() << "timed out waiting for a message from the server; its stderr:\n"
                          << stderr_text();
            return std::nullopt;
        }
        pump(deadline);
    }
}

json::value stdio_client::response(json::value const& id, std::chrono::milliseconds timeout) {
    auto const i = wait_for([&](json::value const& m) { return is_response_to(m, id); }, 0, timeout);
    if (!i) {
        ADD_FAILURE() << "no response to id " << id;
        return nullptr;
    }
    return messages()[*i];
}

int stdio_client::finish(std::chrono::milliseconds timeout) {
    close_input();
    auto const deadline = steady::now() + timeout;
    while (!eof_ && steady::now() < deadline)
        pump(deadline);
    if (!eof_) {
        ADD_FAILURE() << "the server did not close its output after end of input; its stderr:\n"
                      << stderr_text();
        return -1;
    }
    if (status_)
        return *status_;
    int status = 0;
    while (pid_ > 0) {
        auto const r = ::waitpid(pid_, &status, WNOHANG);
        if (r == pid_)
            break;
        if (r < 0 && errno != EINTR) {
            ADD_FAILURE() << "waitpid: " << std::strerror(errno);
            return -1;
        }
        if (steady::now() >= deadline) {
            ADD_FAILURE() << "the server did not exit after end of input";
            return -1;
        }
        ::poll(nullptr, 0, 10); // bounded polling for the exit status, not synchronization
    }
    if (!WIFEXITED(status)) {
        ADD_FAILURE() << "the server died of signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
                      << "; its stderr:\n"
                      << stderr_text();
        status_ = -1;
    } else {
        status_ = WEXITSTATUS(status);
    }
    return *status_;
}

void stdio_client::expect_schema_valid() {
    auto& validator = schema_validator::shared();
    if (!validator.available()) {
        std::cerr << "schema validation skipped: " << validator.unavailable_reason() << "\n";
        return;
    }
    EXPECT_GT(log_.expect_schema_valid(validator), 0u);
}

} // namespace duet::test
