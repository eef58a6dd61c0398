// File: apps/duet/gateway_metrics.hpp
//
// The gateway's own metric families, per upstream (the label is the upstream's name, a set the config file
// bounds; empty for the one unnamed upstream): requests forwarded by outcome, calls in flight, reconnects,
// pool waits and timeouts, input rounds parked, and whether its circuit breaker has it marked down. Read at
// each scrape (metrics::registry::add_collector) from a snapshot the runtime replaces whenever its upstreams
// change.
#pragma once

#include <duet/gateway/merged_backend.hpp>
#include <duet/gateway/upstream_backend.hpp>
#include <duet/metrics/registry.hpp>

#include <memory>
#include <string>
#include <vector>

namespace duet::apps {

struct metered_upstream {
    std::string name;
    std::shared_ptr<gateway::upstream_backend> backend;
};

/// The families for `upstreams`; `endpoints` tell each upstream's breaker state (by member name).
[[nodiscard]] std::vector<metrics::family>
gateway_families(std::vector<metered_upstream> const& upstreams,
                 std::vector<std::shared_ptr<gateway::merged_backend>> const& endpoints);

} // namespace duet::apps
