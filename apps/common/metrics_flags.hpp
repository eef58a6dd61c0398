// File: apps/common/metrics_flags.hpp
//
// --metrics-port N and --metrics-host: a Prometheus scrape endpoint (GET /metrics) on a port of its own,
// counting what the process serves (duet/metrics/registry.hpp). Off unless asked for: counting costs little,
// but nothing is counted that nobody reads.
//
//     duet::apps::metrics_flags metrics;
//     duet::apps::add_metrics_flags(*serve, metrics);
//     ... after parsing, before the servers are made:
//     auto scrape = duet::apps::start_metrics(metrics, options, http);   // sets options.metrics,
//     http.metrics if (!scrape) { print(scrape.error()); return 1; }
#pragma once

#include <duet/log/log.hpp>
#include <duet/metrics/registry.hpp>
#include <duet/server/server.hpp>
#include <duet/transport/http_server.hpp>
#include <duet/transport/metrics_endpoint.hpp>

#include <boost/system/result.hpp>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace duet::apps {

struct metrics_flags {
    std::optional<std::uint16_t> port; ///< none: no metrics
    std::string host = "127.0.0.1";
};

inline void add_metrics_flags(CLI::App& app, metrics_flags& flags) {
    app.add_option(
        "--metrics-port", flags.port,
        "Serve Prometheus metrics at http://HOST:PORT/metrics (0 picks a free port; off by default)");
    app.add_option("--metrics-host", flags.host,
                   "Address the metrics port binds (default 127.0.0.1: a scraper elsewhere is a decision)");
}

/// Starts the scrape endpoint when asked for, and makes `options` and `http` count into its registry; null
/// when not asked for. The endpoint's URL goes to stderr.
[[nodiscard]] inline boost::system::result<std::unique_ptr<transport::metrics_endpoint>, std::string>
start_metrics(metrics_flags const& flags, server::server_options& options, transport::http_options* http) {
    if (!flags.port)
        return std::unique_ptr<transport::metrics_endpoint>();
    auto registry = std::make_shared<metrics::registry>();
    options.metrics = registry;
    if (http)
        http->metrics = registry;
    auto endpoint =
        std::make_unique<transport::metrics_endpoint>(registry, transport::metrics_endpoint_options{
                                                                    .host = flags.host,
                                                                    .port = *flags.port,
                                                                });
    if (auto ec = endpoint->listen())
        return "cannot serve metrics on " + flags.host + ":" + std::to_string(*flags.port) + ": " +
               ec.message();
    log::write({.name = "metrics", .message = "metrics at " + endpoint->url()});
    return endpoint;
}

} // namespace duet::apps
