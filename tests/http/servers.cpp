#include "http/servers.hpp"

#include <duet/server/content.hpp>

#include "demo_server.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

std::vector<std::string> serve_http_args(std::vector<std::string> extra_args) {
    std::vector<std::string> args{DUET_BINARY, "serve", "--port", "0"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    return args;
}

} // namespace

child_server::child_server(std::vector<std::string> extra_args)
    : child_(serve_http_args(std::move(extra_args)), child_process::input::null) {
    if (!child_.running())
        return;
    // The first stdout line is the URL.
    std::string line;
    auto const deadline = steady::now() + http_wait;
    while (line.find('\n') == std::string::npos) {
        if (steady::now() >= deadline) {
            ADD_FAILURE() << "the server printed no URL in time; its stderr:\n" << stderr_text();
            return;
        }
        pollfd p{child_.out(), POLLIN, 0};
        int const n = ::poll(&p, 1, poll_ms_until(deadline));
        if (n < 0 && errno != EINTR) {
            ADD_FAILURE() << "poll: " << std::strerror(errno);
            return;
        }
        if (n <= 0)
            continue;
        char buf[256];
        auto const got = ::read(child_.out(), buf, sizeof buf);
        if (got == 0) {
            ADD_FAILURE() << "the server closed its stdout before printing a URL; its stderr:\n"
                          << stderr_text();
            return;
        }
        if (got > 0)
            line.append(buf, static_cast<std::size_t>(got));
    }
    url_ = line.substr(0, line.find('\n'));
    if (!url_.starts_with("https://"))
        ep_ = endpoint::parse(url_);
}

child_server::~child_server() = default;

void child_server::signal(int sig) {
    child_.signal(sig);
}

int child_server::wait_exit(std::chrono::milliseconds timeout) {
    return child_.wait_exit(timeout);
}

std::string child_server::stderr_text() const {
    return child_.stderr_text();
}

duet_exit run_duet_to_exit(std::vector<std::string> args) {
    args.insert(args.begin(), DUET_BINARY);
    child_process child(std::move(args), child_process::input::null);
    char buf[4096];
    while (::read(child.out(), buf, sizeof buf) > 0) {
    }
    duet_exit r;
    r.exit_code = child.wait_exit(std::chrono::seconds(30));
    r.err = child.stderr_text();
    return r;
}

} // namespace duet::test::http
