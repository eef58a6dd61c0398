// File: tests/gateway/gateway_process.hpp
//
// `duet gateway` as a child process for the gateway suites: started on port 0 in front of an upstream, its
// URL read from the first stdout line, stopped with SIGTERM when the test ends.
//
//     gateway_process gw("--legacy-only");                 // the demo server restricted to one era
//     gateway_process gw("stdio:node server.mjs", {"--era", "legacy"});
//     mcp_http c(gw.ep());
#pragma once

#include "http/http_client.hpp"
#include "support/child_process.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace duet::test::gateway {

inline constexpr auto wait_limit = std::chrono::seconds(30);

/// The demo server on stdio, restricted to one era by `flag` (--legacy-only, --modern-only).
std::string demo_upstream(std::string const& flag);

/// The one (or last) message of a reply; a test failure when there is none.
boost::json::value only_message(http::reply const& r);

/// The pinned Node of tests/interop; empty when it is not installed.
std::string pinned_node();

/// The first line a server child prints on stdout (its URL), waiting up to wait_limit; empty when it prints
/// none before it exits or the time is up.
std::string first_stdout_line(child_process& child);

class gateway_process {
public:
    /// `duet gateway --port 0 --upstream UPSTREAM <extra>`. A bare era flag stands for the demo server
    /// restricted to that era.
    explicit gateway_process(std::string upstream, std::vector<std::string> extra = {});
    /// `duet gateway --port 0 <args>` (several --upstream, say).
    explicit gateway_process(std::vector<std::string> args);
    ~gateway_process();
    gateway_process(gateway_process const&) = delete;
    gateway_process& operator=(gateway_process const&) = delete;

    /// The endpoint of the http:// URL it printed (the first upstream's, for several); empty for https://.
    [[nodiscard]] http::endpoint const& ep() const noexcept { return ep_; }
    /// The URL it printed.
    [[nodiscard]] std::string const& url() const noexcept { return url_; }
    [[nodiscard]] std::string stderr_text() const { return child_.stderr_text(); }
    [[nodiscard]] pid_t pid() const noexcept { return child_.pid(); }
    /// SIGTERM (the drain), then its exit status once it exited: -1 when it did not in time or died of a
    /// signal.
    int stop();
    /// Its log lines saying it forwarded `method` to the upstream `name` (each forwarded request logs one as
    /// it is answered: "duet gateway: METHOD ERA -> ERA upstream=NAME=TARGET status=...").
    [[nodiscard]] std::size_t forwarded(std::string const& method, std::string const& name) const;
    /// Waits until it logged `count` requests of `method` forwarded to `name`; false when not in time.
    bool wait_forwarded(std::string const& method, std::string const& name, std::size_t count) const;
    /// Waits until its stderr contains `text`; false when it does not in time.
    bool wait_for_log(std::string const& text,
                      std::chrono::milliseconds limit =
                          std::chrono::duration_cast<std::chrono::milliseconds>(wait_limit)) const;

private:
    void read_url();

    child_process child_;
    std::string url_;
    http::endpoint ep_;
};

} // namespace duet::test::gateway
