// File: apps/duet/gateway_gate.hpp
//
// The gateway's rate limits as the HTTP server's request gate (transport::http_options::request_gate): a
// token bucket per caller (the verified token's subject, else its client, else the client certificate's
// subject, else the peer address) over every request, and one per tool over tools/call, shared by all
// callers. Over either: 429 with Retry-After, and a JSON-RPC error naming the limit. A reload swaps the
// limits in while requests are gated.
#pragma once

#include <duet/gateway/limits.hpp>
#include <duet/transport/http_server.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace duet::apps {

class rate_gate {
public:
    /// The limits from now on; unchanged rates keep their buckets.
    void set(std::optional<gateway::rate> per_caller, std::map<std::string, gateway::rate> per_tool);
    /// The request gate: thread-safe, never blocks.
    [[nodiscard]] std::optional<transport::gate_refusal> check(transport::gate_facts const& facts) const;

private:
    struct limits {
        std::shared_ptr<gateway::rate_limiter> per_caller;
        std::map<std::string, std::shared_ptr<gateway::rate_limiter>, std::less<>> per_tool;
    };
    mutable std::mutex mutex_;
    std::shared_ptr<limits const> limits_ = std::make_shared<limits>();
};

} // namespace duet::apps
