// File: tests/http/servers.hpp
//
// The two ways the Streamable HTTP tests run the demo server (apps/duet/demo_server.cpp):
//
//  - inproc_server: duet::transport::http_server on port 0 in a background thread of the test process, so a
//    test can change the server at runtime (add a tool: list_changed) and pick options the binary has no flag
//    for (body limit, bearer token, allowed hosts). The destructor drains it and joins the thread.
//  - child_server: the real `duet serve --port 0` binary (DUET_BINARY), whose first stdout line is its URL;
//    for what only a process can show (SIGTERM drains, then exit status 0, HTTPS with --tls-cert).
//
//     inproc_server s;                       // listening when constructed
//     s.srv().add_tool(...);                 // announces list_changed to sessions and listens
//     child_server c;                        // spawned, URL read with a bounded wait
//     c.signal(SIGTERM); EXPECT_EQ(c.wait_exit(), 0);
#pragma once

#include <duet/protocol/admission.hpp>
#include <duet/server/server.hpp>
#include <duet/transport/http_server.hpp>

#include "http/http_client.hpp"
#include "support/child_process.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace duet::test::http {

/// Server options under which every SSE stream tells clients to come back after `retry` (SEP-1699 polling).
inline transport::http_options polling_options(std::chrono::milliseconds retry) {
    transport::http_options o;
    o.sse_retry = retry;
    return o;
}

class inproc_server {
public:
    /// The demo server on `options` (the port is forced to 0), serving from a background thread.
    explicit inproc_server(transport::http_options options = {},
                           protocol::era_support eras = protocol::era_support::both);
    ~inproc_server();
    inproc_server(inproc_server const&) = delete;
    inproc_server& operator=(inproc_server const&) = delete;

    [[nodiscard]] server::server& srv() noexcept { return *srv_; }
    [[nodiscard]] endpoint const& ep() const noexcept { return ep_; }

    /// Drains the server (as SIGTERM would) and waits for its thread; idempotent.
    void stop();

private:
    std::unique_ptr<server::server> srv_;
    std::unique_ptr<transport::http_server> http_;
    std::thread thread_;
    endpoint ep_;
};

/// Registers a tool named `name` (echoes "ok") on a running server: every legacy session and every modern
/// listen that asked for it hears notifications/tools/list_changed.
void add_runtime_tool(server::server& srv, std::string const& name);

/// How a `duet` command that ran to its end ended, and what it said on stderr.
struct duet_exit {
    int exit_code = -1; ///< -1 (and a test failure) when it did not exit in time
    std::string err;
};

/// Runs `DUET_BINARY args...` with stdin closed, to its end (stdout read and dropped).
[[nodiscard]] duet_exit run_duet_to_exit(std::vector<std::string> args);

class child_server {
public:
    /// Spawns `DUET_BINARY serve --port 0 <extra_args...>` and reads its URL (a test failure when it does not
    /// print one in time).
    explicit child_server(std::vector<std::string> extra_args = {});
    ~child_server();
    child_server(child_server const&) = delete;
    child_server& operator=(child_server const&) = delete;

    /// The endpoint of an http:// URL (empty for https://, which this suite's client does not speak).
    [[nodiscard]] endpoint const& ep() const noexcept { return ep_; }
    /// The URL it printed, http:// or https://.
    [[nodiscard]] std::string const& url() const noexcept { return url_; }

    void signal(int sig);
    /// Waits for the process to exit; its exit status, or -1 (and a test failure) when it did not exit in
    /// time or died of a signal.
    int wait_exit(std::chrono::milliseconds timeout = http_wait);
    [[nodiscard]] std::string stderr_text() const;

private:
    child_process child_;
    std::string url_;
    endpoint ep_;
};

} // namespace duet::test::http
