// A real redis-server for the suites that share state through Redis: started on a free loopback port with no
// persistence, stopped (SIGKILL, as a crash would) and started again on the same port by tests of what
// happens while Redis is away. Absent redis-server (scripts/bootstrap installs it), the test skips with that
// reason.
//
//     if (auto why = redis_server::missing(); !why.empty()) GTEST_SKIP() << why;
//     redis_server redis;
//     auto where = redis.options("test-prefix:");
#pragma once

#include <duet/store/redis.hpp>

#include "support/child_process.hpp"
#include "support/loopback_port.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <string>

namespace duet::test {

class redis_server {
public:
    static constexpr char const* program = "/usr/bin/redis-server";

    /// Why no test can start one here: empty when it can.
    [[nodiscard]] static std::string missing() {
        if (::access(program, X_OK) != 0)
            return std::string(program) + " is not installed (scripts/bootstrap installs redis-server)";
        return {};
    }

    redis_server() : port_(free_loopback_port()) { start(); }
    ~redis_server() { kill(); }
    redis_server(redis_server const&) = delete;
    redis_server& operator=(redis_server const&) = delete;

    [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
    [[nodiscard]] std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
    [[nodiscard]] store::redis_options options(std::string prefix) const {
        store::redis_options o;
        o.port = port_;
        o.key_prefix = std::move(prefix);
        o.min_backoff = std::chrono::milliseconds(20);
        o.max_backoff = std::chrono::milliseconds(200);
        return o;
    }

    /// Starts it (again) on the same port and returns once it answers PING.
    void start() {
        process_ = std::make_unique<child_process>(
            std::vector<std::string>{program, "--port", std::to_string(port_), "--bind", "127.0.0.1",
                                     "--save", "", "--appendonly", "no", "--loglevel", "warning"},
            child_process::input::null);
        auto const where = options("");
        bool const up = wait_until(
            [&] { return store::redis_unreachable(where, std::chrono::milliseconds(200)).empty(); },
            std::chrono::seconds(20), std::chrono::milliseconds(20));
        if (!up)
            ADD_FAILURE() << "redis-server did not answer on port " << port_ << ": "
                          << process_->stderr_text();
    }

    /// Kills it at once, as a crash would; what it held is gone.
    void kill() {
        if (!process_ || !process_->running())
            return;
        process_->signal(SIGKILL);
        process_->exited_by(std::chrono::steady_clock::now() + std::chrono::seconds(10));
        process_.reset();
    }

private:
    std::uint16_t port_;
    std::unique_ptr<child_process> process_;
};

} // namespace duet::test
