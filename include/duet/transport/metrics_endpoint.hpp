/// @file duet/transport/metrics_endpoint.hpp
///
/// The Prometheus scrape endpoint: GET (or HEAD) /metrics on a port of its own, answered with
/// metrics::registry::render(). It serves on a thread of its own, so a scrape never waits behind MCP traffic
/// and MCP traffic never waits behind a scrape. Binds 127.0.0.1 by default; a scraper elsewhere needs
/// `host` set on purpose (what it shows names tools and methods, no secrets).
///
///     duet::transport::metrics_endpoint scrape(metrics, {.port = 9464});
///     if (auto ec = scrape.listen()) ...;        // binds and starts serving; scrape.url() names it
#pragma once

#include <duet/metrics/registry.hpp>

#include <boost/system/error_code.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace duet::transport {

struct metrics_endpoint_options {
    std::string host = "127.0.0.1";
    std::uint16_t port = 9464; ///< 0 picks a free port
    std::string path = "/metrics";
};

class metrics_endpoint {
public:
    metrics_endpoint(std::shared_ptr<metrics::registry const> metrics, metrics_endpoint_options options);
    /// Stops serving and joins its thread.
    ~metrics_endpoint();
    metrics_endpoint(metrics_endpoint const&) = delete;
    metrics_endpoint& operator=(metrics_endpoint const&) = delete;

    /// Binds, listens and starts serving. On success port() and url() are known.
    [[nodiscard]] boost::system::error_code listen();
    [[nodiscard]] std::uint16_t port() const noexcept;
    /// "http://127.0.0.1:PORT/metrics".
    [[nodiscard]] std::string url() const;

    class impl;

private:
    std::unique_ptr<impl> impl_;
};

} // namespace duet::transport
