#include "http/servers.hpp"

#include <duet/server/content.hpp>

#include "demo_server.hpp"

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

extern char** environ;

namespace duet::test::http {

using steady = std::chrono::steady_clock;

// ---- inproc_server --------------------------------------------------------------------------------------

inproc_server::inproc_server(transport::http_options options, protocol::era_support eras)
    : srv_(apps::make_demo_server(eras)) {
    options.host = options.host.empty() ? "127.0.0.1" : options.host;
    options.port = 0;
    http_ = std::make_unique<transport::http_server>(*srv_, std::move(options));
    if (auto ec = http_->listen()) {
        ADD_FAILURE() << "listen: " << ec.message();
        return;
    }
    ep_ = endpoint::parse(http_->url());
    thread_ = std::thread([this] { http_->run(); });
}

inproc_server::~inproc_server() {
    stop();
}

void inproc_server::stop() {
    if (!thread_.joinable())
        return;
    // Bounded by the server's drain deadline: run() returns once every connection closed, or at the deadline.
    http_->stop();
    thread_.join();
}

void add_runtime_tool(server::server& srv, std::string const& name) {
    srv.add_tool(
        server::tool{.name = name, .description = "Added while the server runs"},
        [](boost::json::object const&, server::request_context&) { return server::tool_result::text("ok"); });
}

// ---- child_server ---------------------------------------------------------------------------------------

namespace {

std::string unique_stderr_path() {
    static std::atomic<int> counter{0};
    return testing::TempDir() + "duet-http-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) +
           ".stderr";
}

int remaining_ms(steady::time_point deadline) {
    auto const left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()).count();
    return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1000));
}

} // namespace

child_server::child_server(std::vector<std::string> extra_args) : stderr_path_(unique_stderr_path()) {
    int out_pipe[2] = {-1, -1};
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
        ADD_FAILURE() << "pipe: " << std::strerror(errno);
        return;
    }
    std::vector<std::string> args{DUET_BINARY, "serve", "--port", "0"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int const rc = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out_pipe[1]);
    out_ = out_pipe[0];
    if (rc != 0) {
        pid_ = -1;
        ADD_FAILURE() << "posix_spawn " << args[0] << ": " << std::strerror(rc);
        return;
    }

    // The first stdout line is the URL.
    std::string line;
    auto const deadline = steady::now() + http_wait;
    while (line.find('\n') == std::string::npos) {
        if (steady::now() >= deadline) {
            ADD_FAILURE() << "the server printed no URL in time; its stderr:\n" << stderr_text();
            return;
        }
        pollfd p{out_, POLLIN, 0};
        int const n = ::poll(&p, 1, remaining_ms(deadline));
        if (n < 0 && errno != EINTR) {
            ADD_FAILURE() << "poll: " << std::strerror(errno);
            return;
        }
        if (n <= 0)
            continue;
        char buf[256];
        auto const got = ::read(out_, buf, sizeof buf);
        if (got == 0) {
            ADD_FAILURE() << "the server closed its stdout before printing a URL; its stderr:\n"
                          << stderr_text();
            return;
        }
        if (got > 0)
            line.append(buf, static_cast<std::size_t>(got));
    }
    ep_ = endpoint::parse(line.substr(0, line.find('\n')));
}

child_server::~child_server() {
    if (pid_ > 0 && !status_) {
        ::kill(pid_, SIGKILL); // our own child, by its pid
        int status = 0;
        ::waitpid(pid_, &status, 0);
    }
    if (out_ >= 0)
        ::close(out_);
    std::remove(stderr_path_.c_str());
}

void child_server::signal(int sig) {
    if (pid_ > 0 && !status_)
        ::kill(pid_, sig);
}

int child_server::wait_exit(std::chrono::milliseconds timeout) {
    if (status_)
        return *status_;
    if (pid_ <= 0)
        return -1;
    auto const deadline = steady::now() + timeout;
    int status = 0;
    for (;;) {
        auto const r = ::waitpid(pid_, &status, WNOHANG);
        if (r == pid_)
            break;
        if (r < 0 && errno != EINTR) {
            ADD_FAILURE() << "waitpid: " << std::strerror(errno);
            return -1;
        }
        if (steady::now() >= deadline) {
            ADD_FAILURE() << "the server did not exit in time; its stderr:\n" << stderr_text();
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

std::string child_server::stderr_text() const {
    std::ifstream f(stderr_path_);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

} // namespace duet::test::http
