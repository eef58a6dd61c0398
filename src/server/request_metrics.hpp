// What a request's answer counts in server_options::metrics (its method, era, outcome and latency, and for
// tools/call its tool) and says in the debug log. Recorded where every answer leaves the server library: the
// connection for answers given at once, dispatch for those whose handler suspended.
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/metrics/registry.hpp>
#include <duet/protocol/trace_context.hpp>
#include <duet/server/connection.hpp>

#include <chrono>
#include <string_view>

namespace duet::server::detail {

/// A request being answered, as far as admission got with it.
struct observed_request {
    protocol::method_info const* method = nullptr; ///< null: not a method of the table
    metrics::era_label era = metrics::era_label::none;
    std::chrono::steady_clock::time_point started;
    std::string_view session; ///< the legacy session's id, when the transport named one
};

/// How `a` ends the request for its client.
[[nodiscard]] metrics::outcome outcome_of(protocol::method_info const* method, connection::answer const& a);

/// Records one answered request in `metrics` (when not null) and, at debug level, as a "request" log event;
/// `params` are the request's (for tools/call, the tool's name), `trace` its trace (null: none).
void record_answer(metrics::registry* metrics, observed_request const& seen, boost::json::value const& params,
                   protocol::trace_context const* trace, connection::answer const& a);

/// Whether answers are recorded at all: metrics are kept, or requests are logged.
[[nodiscard]] bool answers_recorded(metrics::registry const* metrics) noexcept;

} // namespace duet::server::detail
