/// @file duet/metrics/registry.hpp
///
/// What a process serves, counted for Prometheus: requests by method, era and outcome with their latency,
/// tool calls by tool, and what the transports hold open and carry; rendered in the Prometheus text format
/// (version 0.0.4) with the process's own memory, descriptors and CPU time.
///
///     auto metrics = std::make_shared<duet::metrics::registry>();
///     duet::server::server srv({.info = ..., .metrics = metrics});
///     duet::transport::http_server http(srv, {.metrics = metrics});
///     duet::transport::metrics_endpoint scrape(io, metrics, {.port = 9464}); // GET /metrics
///
/// Label values come from bounded sets only: method names from the method table (anything else is
/// "other"), tool names from the first max_tools tools that answered with a result (any other name is
/// "other", so a client inventing names cannot grow the output).
///
/// @par Thread safety
/// Every member may be called from any thread. Recording a request is a few relaxed atomic additions on
/// fixed arrays, with no lock and no allocation; a tool call also takes one short lock to find its row.
#pragma once

#include <duet/protocol/method_table.hpp>
#include <duet/protocol/version.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace duet::metrics {

/// How a request ended, as its client saw it.
enum class outcome : std::uint8_t {
    ok,             ///< a result
    tool_error,     ///< a tools/call result with isError: the tool ran and failed
    input_required, ///< a modern input_required round
    error,          ///< a JSON-RPC error (refused by admission, unknown, invalid, or a handler's error)
    cancelled,      ///< cancelled by its client or its disconnect: no answer
};
inline constexpr std::size_t outcome_count = 5;
[[nodiscard]] std::string_view to_string(outcome o) noexcept;

/// The era label of a request: its era, or `none` for one refused before its era was known.
enum class era_label : std::uint8_t { legacy, modern, none };
inline constexpr std::size_t era_label_count = 3;
[[nodiscard]] std::string_view to_string(era_label e) noexcept;
[[nodiscard]] constexpr era_label label_of(protocol::era e) noexcept {
    return e == protocol::era::legacy ? era_label::legacy : era_label::modern;
}

/// Upper bounds of the latency histograms' buckets, in seconds (the +Inf bucket is implicit): 100 µs to a
/// minute, so a cached list and a tool waiting on a person both land in a bucket that tells them apart.
inline constexpr std::array<double, 16> latency_buckets{
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60};

/// A histogram of durations with latency_buckets, lock-free.
class latency_histogram {
public:
    void observe(std::chrono::nanoseconds took) noexcept;

    struct snapshot {
        std::array<std::uint64_t, latency_buckets.size() + 1> cumulative{}; ///< last: +Inf, the count
        double sum_seconds = 0;
    };
    [[nodiscard]] snapshot read() const noexcept;

private:
    std::array<std::atomic<std::uint64_t>, latency_buckets.size() + 1> buckets_{}; ///< not cumulative
    std::atomic<std::uint64_t> sum_ns_{0};
};

/// What an HTTP server holds open and carries (http_options::metrics); gauges go up and down.
struct http_counters {
    std::atomic<std::int64_t> connections_open{0};
    std::atomic<std::uint64_t> connections_total{0};
    std::atomic<std::int64_t> sse_streams_open{0};
    std::atomic<std::int64_t> listens_open{0};    ///< modern subscriptions/listen streams
    std::atomic<std::uint64_t> request_bytes{0};  ///< bodies read
    std::atomic<std::uint64_t> response_bytes{0}; ///< bodies and SSE events written
    /// HTTP responses by status class: 1xx … 5xx (index 0 … 4).
    std::array<std::atomic<std::uint64_t>, 5> responses{};
    void responded(unsigned status) noexcept {
        if (status >= 100 && status < 600)
            responses[status / 100 - 1].fetch_add(1, std::memory_order_relaxed);
    }
};

/// `name="value"`, the value escaped as the text format wants it (backslash, double quote, newline): a label
/// of a family's sample or a gauge. Join several with commas.
[[nodiscard]] std::string label(std::string_view name, std::string_view value);

/// One metric family another part of the process adds (registry::add_collector), written as it is.
struct family {
    std::string name; ///< e.g. duet_gateway_upstream_restarts_total
    std::string help;
    std::string type; ///< counter | gauge
    /// Each sample: its labels, label() joined by commas (may be empty), and value.
    std::vector<std::pair<std::string, double>> samples;
};

class registry {
public:
    /// Distinct tool names kept as label values.
    static constexpr std::size_t max_tools = 200;

    registry();
    registry(registry const&) = delete;
    registry& operator=(registry const&) = delete;

    /// One request answered (or cancelled): `method` null for a method the table lacks.
    void request_done(protocol::method_info const* method, era_label era, outcome how,
                      std::chrono::nanoseconds took) noexcept;
    /// One tools/call of `tool`, after request_done.
    void tool_called(std::string_view tool, outcome how);

    [[nodiscard]] http_counters& http() noexcept { return http_; }

    /// Keeps what add_gauge or add_collector added until it is destroyed (or the registry is).
    class registration {
    public:
        registration() = default;
        registration(registration&&) noexcept = default;
        registration& operator=(registration&& other) noexcept;
        ~registration();

    private:
        friend class registry;
        struct extras;
        registration(std::weak_ptr<extras> from, std::uint64_t id) : from_(std::move(from)), id_(id) {}
        void drop() noexcept;
        std::weak_ptr<extras> from_;
        std::uint64_t id_ = 0;
    };

    /// A gauge read when scraped (legacy sessions, upstreams), while the registration lives: the value `read`
    /// returns then. `name` must be a valid metric name; `labels` is `name="value"` text, escaped (may be
    /// empty). Gauges of one name are one family (the first one's help); those of one name and labels are
    /// summed, so two servers in one process add up.
    [[nodiscard]] registration add_gauge(std::string name, std::string help, std::string labels,
                                         std::function<double()> read);
    /// Families computed when scraped, by a part of the process this library does not know (the gateway),
    /// while the registration lives.
    [[nodiscard]] registration add_collector(std::function<std::vector<family>()> collect);

    /// Everything, in the Prometheus text format 0.0.4 (Content-Type: text/plain; version=0.0.4).
    [[nodiscard]] std::string render() const;

    /// What a scrape is answered with.
    static constexpr std::string_view content_type = "text/plain; version=0.0.4; charset=utf-8";

private:
    static constexpr std::size_t method_slots =
        protocol::method_count + 1; ///< the table's methods, `other` last
    std::size_t slot(protocol::method_info const* m) const noexcept;

    std::array<std::atomic<std::uint64_t>, method_slots * era_label_count * outcome_count> requests_{};
    std::array<latency_histogram, method_slots * era_label_count> latency_{};
    http_counters http_;

    struct tool_row {
        std::array<std::atomic<std::uint64_t>, outcome_count> calls{};
    };
    mutable std::mutex tools_mutex_;
    std::map<std::string, std::unique_ptr<tool_row>, std::less<>> tools_;
    tool_row other_tools_;

    std::shared_ptr<registration::extras> extras_;
    double start_time_seconds_;
};

} // namespace duet::metrics
