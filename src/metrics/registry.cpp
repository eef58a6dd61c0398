#include <duet/metrics/registry.hpp>

#include "exposition.hpp"
#include "process_facts.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace duet::metrics {

std::string_view to_string(outcome o) noexcept {
    switch (o) {
    case outcome::ok:
        return "ok";
    case outcome::tool_error:
        return "tool_error";
    case outcome::input_required:
        return "input_required";
    case outcome::error:
        return "error";
    case outcome::cancelled:
        return "cancelled";
    }
    return "error";
}

std::string_view to_string(era_label e) noexcept {
    switch (e) {
    case era_label::legacy:
        return "legacy";
    case era_label::modern:
        return "modern";
    case era_label::none:
        return "none";
    }
    return "none";
}

std::string label(std::string_view name, std::string_view value) {
    std::string out(name);
    out.append("=\"").append(detail::escape_label_value(value)).append("\"");
    return out;
}

void latency_histogram::observe(std::chrono::nanoseconds took) noexcept {
    double const seconds = std::chrono::duration<double>(took).count();
    auto const at = std::lower_bound(latency_buckets.begin(), latency_buckets.end(), seconds);
    buckets_[static_cast<std::size_t>(at - latency_buckets.begin())].fetch_add(1, std::memory_order_relaxed);
    sum_ns_.fetch_add(static_cast<std::uint64_t>(std::max<std::int64_t>(took.count(), 0)),
                      std::memory_order_relaxed);
}

latency_histogram::snapshot latency_histogram::read() const noexcept {
    snapshot s;
    std::uint64_t running = 0;
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
        running += buckets_[i].load(std::memory_order_relaxed);
        s.cumulative[i] = running;
    }
    s.sum_seconds = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
    return s;
}

registry::registry()
    : extras_(std::make_shared<registration::extras>()),
      start_time_seconds_(detail::process_start_time_seconds()) {}

std::size_t registry::slot(protocol::method_info const* m) const noexcept {
    if (!m)
        return method_slots - 1;
    return std::min(static_cast<std::size_t>(m->id), method_slots - 2);
}

void registry::request_done(protocol::method_info const* method, era_label era, outcome how,
                            std::chrono::nanoseconds took) noexcept {
    auto const row = slot(method) * era_label_count + static_cast<std::size_t>(era);
    requests_[row * outcome_count + static_cast<std::size_t>(how)].fetch_add(1, std::memory_order_relaxed);
    if (how != outcome::cancelled)
        latency_[row].observe(took);
}

void registry::tool_called(std::string_view tool, outcome how) {
    tool_row* row = &other_tools_;
    {
        std::lock_guard lock(tools_mutex_);
        if (auto it = tools_.find(tool); it != tools_.end())
            row = it->second.get();
        else if (!tool.empty() && how != outcome::error && how != outcome::cancelled &&
                 tools_.size() < max_tools)
            row = tools_.emplace(std::string(tool), std::make_unique<tool_row>()).first->second.get();
    }
    row->calls[static_cast<std::size_t>(how)].fetch_add(1, std::memory_order_relaxed);
}

struct registry::registration::extras {
    struct gauge {
        std::uint64_t id;
        std::string name, help, labels;
        std::function<double()> read;
    };
    struct collector {
        std::uint64_t id;
        std::function<std::vector<family>()> collect;
    };
    std::mutex mutex;
    std::uint64_t last_id = 0;
    std::vector<gauge> gauges;
    std::vector<collector> collectors;
};

registry::registration& registry::registration::operator=(registration&& other) noexcept {
    if (this != &other) {
        drop();
        from_ = std::move(other.from_);
        id_ = std::exchange(other.id_, 0);
    }
    return *this;
}

registry::registration::~registration() {
    drop();
}

void registry::registration::drop() noexcept {
    auto const from = from_.lock();
    if (!from || id_ == 0)
        return;
    std::lock_guard lock(from->mutex);
    std::erase_if(from->gauges, [&](auto const& g) { return g.id == id_; });
    std::erase_if(from->collectors, [&](auto const& c) { return c.id == id_; });
    id_ = 0;
}

registry::registration registry::add_gauge(std::string name, std::string help, std::string labels,
                                           std::function<double()> read) {
    std::lock_guard lock(extras_->mutex);
    auto const id = ++extras_->last_id;
    extras_->gauges.push_back({id, std::move(name), std::move(help), std::move(labels), std::move(read)});
    return registration(extras_, id);
}

registry::registration registry::add_collector(std::function<std::vector<family>()> collect) {
    std::lock_guard lock(extras_->mutex);
    auto const id = ++extras_->last_id;
    extras_->collectors.push_back({id, std::move(collect)});
    return registration(extras_, id);
}

std::string registry::render() const {
    detail::exposition out;
    auto const methods = protocol::method_table();
    auto method_name = [&](std::size_t slot_index) -> std::string_view {
        return slot_index < methods.size() ? methods[slot_index].name : std::string_view("other");
    };

    out.family("duet_requests_total", "Requests answered, by method, era and outcome.", "counter");
    for (std::size_t m = 0; m < method_slots; ++m)
        for (std::size_t e = 0; e < era_label_count; ++e)
            for (std::size_t o = 0; o < outcome_count; ++o)
                if (auto const n = requests_[(m * era_label_count + e) * outcome_count + o].load(
                        std::memory_order_relaxed))
                    out.sample("duet_requests_total",
                               {{"method", method_name(m)},
                                {"era", to_string(static_cast<era_label>(e))},
                                {"outcome", to_string(static_cast<outcome>(o))}},
                               static_cast<double>(n));

    out.family("duet_request_duration_seconds", "Time from a request's admission to its answer.",
               "histogram");
    for (std::size_t m = 0; m < method_slots; ++m)
        for (std::size_t e = 0; e < era_label_count; ++e) {
            auto const h = latency_[m * era_label_count + e].read();
            if (h.cumulative.back() == 0)
                continue;
            out.histogram("duet_request_duration_seconds",
                          {{"method", method_name(m)}, {"era", to_string(static_cast<era_label>(e))}},
                          latency_buckets, h.cumulative, h.sum_seconds);
        }

    out.family("duet_tool_calls_total", "tools/call requests by tool and outcome (unknown tools: other).",
               "counter");
    {
        std::lock_guard lock(tools_mutex_);
        auto write_row = [&](std::string_view name, tool_row const& row) {
            for (std::size_t o = 0; o < outcome_count; ++o)
                if (auto const n = row.calls[o].load(std::memory_order_relaxed))
                    out.sample("duet_tool_calls_total",
                               {{"tool", name}, {"outcome", to_string(static_cast<outcome>(o))}},
                               static_cast<double>(n));
        };
        for (auto const& [name, row] : tools_)
            write_row(name, *row);
        write_row("other", other_tools_);
    }

    auto counter = [&](char const* name, char const* help, double value) {
        out.family(name, help, "counter");
        out.sample(name, {}, value);
    };
    auto gauge = [&](char const* name, char const* help, double value) {
        out.family(name, help, "gauge");
        out.sample(name, {}, value);
    };
    auto load = [](auto const& a) {
        return static_cast<double>(a.load(std::memory_order_relaxed));
    };
    gauge("duet_http_connections_open", "HTTP connections open now.", load(http_.connections_open));
    counter("duet_http_connections_total", "HTTP connections accepted.", load(http_.connections_total));
    gauge("duet_http_sse_streams_open", "Server-sent event streams open now (listens, sessions, POSTs).",
          load(http_.sse_streams_open));
    gauge("duet_http_listens_open", "Modern subscriptions/listen streams open now.",
          load(http_.listens_open));
    counter("duet_http_request_bytes_total", "HTTP request body bytes read.", load(http_.request_bytes));
    counter("duet_http_response_bytes_total", "HTTP response body and event bytes written.",
            load(http_.response_bytes));
    out.family("duet_http_responses_total", "HTTP responses by status class.", "counter");
    for (std::size_t c = 0; c < http_.responses.size(); ++c)
        out.sample("duet_http_responses_total", {{"code", detail::status_class_label(c)}},
                   load(http_.responses[c]));

    {
        std::lock_guard lock(extras_->mutex);
        // Summed by name and labels, in name order so each family's samples are together.
        std::map<std::pair<std::string_view, std::string_view>, double> sums;
        std::map<std::string_view, std::string_view> help;
        for (auto const& g : extras_->gauges) {
            sums[{g.name, g.labels}] += g.read();
            help.emplace(g.name, g.help);
        }
        std::string_view current;
        for (auto const& [key, value] : sums) {
            if (key.first != current) {
                out.family(key.first, help[key.first], "gauge");
                current = key.first;
            }
            out.raw_sample(key.first, key.second, value);
        }
        for (auto const& c : extras_->collectors)
            for (auto const& f : c.collect()) {
                out.family(f.name, f.help, f.type);
                for (auto const& [labels, value] : f.samples)
                    out.raw_sample(f.name, labels, value);
            }
    }

    auto const process = detail::read_process_facts();
    gauge("process_resident_memory_bytes", "Resident memory size in bytes.", process.resident_bytes);
    gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", process.virtual_bytes);
    gauge("process_open_fds", "Open file descriptors.", process.open_fds);
    gauge("process_max_fds", "The limit of open file descriptors.", process.max_fds);
    counter("process_cpu_seconds_total", "User and system CPU time spent, in seconds.", process.cpu_seconds);
    gauge("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds.",
          start_time_seconds_);
    return std::move(out).text();
}

} // namespace duet::metrics
