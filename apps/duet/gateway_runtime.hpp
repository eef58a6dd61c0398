// File: apps/duet/gateway_runtime.hpp
//
// `duet gateway` running: its upstreams (one backend each), the endpoints in front of them (each upstream at
// PATH/NAME, or every one merged at PATH with --merge), the rate limits, /healthz and /readyz, and the
// reload of its config file (SIGHUP, or the file changing): upstreams added start, removed ones drain and
// close, changed ones restart, the others keep their sessions, listens and calls; a file with errors is
// refused in words and the running configuration stays.
#pragma once

#include <duet/client/connect_mode.hpp>
#include <duet/gateway/merged_backend.hpp>
#include <duet/gateway/upstream_backend.hpp>
#include <duet/server/server.hpp>
#include <duet/transport/http_server.hpp>

#include "gateway_cli.hpp"
#include "gateway_gate.hpp"
#include "gateway_metrics.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/system/result.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace duet::apps {

/// What the gateway will serve, checked before anything starts: the flags over the config file, the
/// upstreams (one entry each), and the listener's options. OAuth providers and token verifiers are made on
/// the io_context, which need not run yet.
struct gateway_plan {
    gateway_cli cli;
    std::vector<std::string> disabled; ///< the file's upstreams marked disabled
    std::vector<upstream_entry> upstreams;
    transport::http_options http;
    client::connect_mode mode = client::connect_mode::auto_detect;
    bool one_thread = false;
    /// The upstream connections' executor: the io_context itself when one thread serves, else a strand.
    boost::asio::any_io_executor upstream_ex;
};

/// The plan for `flags` (and the config file they name), or a usage error's text, one line per error.
[[nodiscard]] boost::system::result<gateway_plan, std::string> plan_gateway(gateway_cli const& flags,
                                                                            boost::asio::io_context& io);

class gateway_runtime {
public:
    /// `shared`: what --store made (the front sessions' store is in plan.http already).
    gateway_runtime(boost::asio::io_context& io, gateway_cli flags, gateway_plan plan,
                    server::server_options shared);
    ~gateway_runtime();
    gateway_runtime(gateway_runtime const&) = delete;
    gateway_runtime& operator=(gateway_runtime const&) = delete;

    /// Starts every upstream and the HTTP server, and prints each endpoint's URL on stdout. 0, or the exit
    /// code to leave with (2 usage, 3 an upstream or the store unreachable, 1 cannot listen), said on stderr.
    [[nodiscard]] int start();
    /// Serves until SIGINT or SIGTERM, then closes every upstream.
    void run();

private:
    struct live_upstream {
        upstream_entry entry;
        std::shared_ptr<gateway::upstream_backend> backend;
    };
    struct endpoint {
        std::string path;
        std::string upstream; ///< unmerged: the one upstream it serves
        std::shared_ptr<gateway::merged_backend> merged;
        std::unique_ptr<server::server> srv;
    };

    [[nodiscard]] gateway::gateway_options backend_options(upstream_entry const& u) const;
    [[nodiscard]] gateway::merged_member member_of(live_upstream const& u) const;
    [[nodiscard]] std::unique_ptr<endpoint>
    make_endpoint(std::string path, std::vector<live_upstream const*> members, std::string upstream);
    [[nodiscard]] transport::probe_answer readiness() const;
    void publish_endpoints();

    [[nodiscard]] static boost::asio::awaitable<void> async_watch_signal(gateway_runtime* self);
    [[nodiscard]] static boost::asio::awaitable<void> async_watch_file(gateway_runtime* self);
    [[nodiscard]] static boost::asio::awaitable<void> async_reload(gateway_runtime* self, std::string why);
    [[nodiscard]] static boost::asio::awaitable<void> async_apply(gateway_runtime* self, gateway_plan next,
                                                                  std::string why);
    void reshape_endpoints();
    void close_upstreams();
    [[nodiscard]] static boost::asio::awaitable<void>
    async_retire(gateway_runtime* self, std::shared_ptr<gateway::upstream_backend> backend);

    boost::asio::io_context& io_;
    gateway_cli flags_;
    gateway_plan plan_;
    server::server_options shared_;
    std::shared_ptr<rate_gate> gate_ = std::make_shared<rate_gate>();

    std::map<std::string, live_upstream> upstreams_; ///< by name
    std::vector<std::string> order_;                 ///< names, as the plan gives them
    std::vector<std::unique_ptr<endpoint>> endpoints_;
    /// Endpoints of upstreams a reload removed: their paths are gone, their servers kept to the end for
    /// the sessions and calls that were under way.
    std::vector<std::unique_ptr<endpoint>> retired_;
    std::optional<transport::http_server> http_;

    mutable std::mutex ready_mutex_; ///< what /readyz and a metrics scrape read, from other threads
    std::vector<std::shared_ptr<gateway::merged_backend>> ready_backends_;
    std::vector<metered_upstream> metered_;

    /// Where reloads, and the retirements they start, run one at a time: what they change is theirs alone.
    boost::asio::strand<boost::asio::io_context::executor_type> control_;
    boost::asio::signal_set hangup_;
    boost::asio::steady_timer file_timer_;
    std::optional<std::filesystem::file_time_type> file_stamp_;
    bool reloading_ = false;
    bool reload_again_ = false;
    bool stopping_ = false;
    /// Backends a reload replaced, closing once their calls are done.
    std::vector<std::shared_ptr<gateway::upstream_backend>> retiring_;
    /// Last, so that it goes first: a scrape never reads what is being destroyed.
    metrics::registry::registration metrics_collector_;
};

} // namespace duet::apps
