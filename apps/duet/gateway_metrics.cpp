#include "gateway_metrics.hpp"

#include <map>

namespace duet::apps {

namespace {

// `upstream="NAME"`, then `extra` (a label() of its own) when given.
std::string upstream_label(std::string const& name, std::string_view extra = {}) {
    auto out = metrics::label("upstream", name);
    if (!extra.empty())
        out.append(",").append(extra);
    return out;
}

} // namespace

std::vector<metrics::family>
gateway_families(std::vector<metered_upstream> const& upstreams,
                 std::vector<std::shared_ptr<gateway::merged_backend>> const& endpoints) {
    std::map<std::string, gateway::circuit_breaker::state, std::less<>> breakers;
    for (auto const& e : endpoints)
        for (auto const& h : e->health())
            breakers[h.name] = h.state;

    metrics::family forwarded{"duet_gateway_upstream_requests_total",
                              "Requests forwarded to each upstream, by how they ended.",
                              "counter",
                              {}};
    metrics::family in_flight{
        "duet_gateway_upstream_requests_in_flight", "Requests being forwarded now.", "gauge", {}};
    metrics::family reconnects{"duet_gateway_upstream_reconnects_total",
                               "Times the gateway's own connection to the upstream ended and came back.",
                               "counter",
                               {}};
    metrics::family waits{"duet_gateway_upstream_pool_waits_total",
                          "Calls that waited for a free upstream connection.",
                          "counter",
                          {}};
    metrics::family timeouts{"duet_gateway_upstream_pool_timeouts_total",
                             "Calls that found no free upstream connection in time.",
                             "counter",
                             {}};
    metrics::family parked{"duet_gateway_upstream_parked_rounds_total",
                           "Modern input rounds whose upstream call was held for the retry.",
                           "counter",
                           {}};
    metrics::family up{"duet_gateway_upstream_up",
                       "1 unless the upstream's circuit breaker has it marked down (open).",
                       "gauge",
                       {}};
    for (auto const& u : upstreams) {
        auto const s = u.backend->counts();
        auto const label = upstream_label(u.name);
        auto const d = [](std::uint64_t n) {
            return static_cast<double>(n);
        };
        forwarded.samples.emplace_back(upstream_label(u.name, metrics::label("outcome", "ok")),
                                       d(s.forwarded_ok));
        forwarded.samples.emplace_back(upstream_label(u.name, metrics::label("outcome", "error")),
                                       d(s.forwarded_error));
        forwarded.samples.emplace_back(upstream_label(u.name, metrics::label("outcome", "cancelled")),
                                       d(s.forwarded_cancelled));
        forwarded.samples.emplace_back(upstream_label(u.name, metrics::label("outcome", "input_required")),
                                       d(s.forwarded_input_required));
        in_flight.samples.emplace_back(label, d(s.calls_in_flight));
        reconnects.samples.emplace_back(label, d(s.reconnects));
        waits.samples.emplace_back(label, d(s.pool_waits));
        timeouts.samples.emplace_back(label, d(s.pool_timeouts));
        parked.samples.emplace_back(label, d(s.parked_rounds));
        auto const b = breakers.find(u.name);
        up.samples.emplace_back(
            label, b != breakers.end() && b->second == gateway::circuit_breaker::state::open ? 0 : 1);
    }
    return {std::move(forwarded), std::move(in_flight), std::move(reconnects), std::move(waits),
            std::move(timeouts),  std::move(parked),    std::move(up)};
}

} // namespace duet::apps
