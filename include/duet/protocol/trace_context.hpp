/// @file duet/protocol/trace_context.hpp
///
/// W3C Trace Context (https://www.w3.org/TR/trace-context/) as MCP requests carry it: `traceparent` and
/// `tracestate` in `params._meta` (as the Python SDK and OpenTelemetry's MCP conventions put them, so they
/// cross stdio too) or as HTTP headers. Pure: parsing, choosing, and the context a next hop gets.
///
///     auto trace = protocol::trace_of(request.params, http_facts);   // _meta first, then the headers
///     if (trace) log(trace->trace_id());
///     auto next = protocol::child_of(*trace, span_id);                 // same trace, this hop as parent
#pragma once

#include <duet/protocol/admission.hpp>

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace duet::protocol {

struct trace_context {
    /// "00-TRACEID-PARENTID-FLAGS": 32 and 16 lowercase hex digits, never all zeros, and 2 for the flags.
    std::string traceparent;
    /// The vendors' list as received (at most 512 characters, else dropped); may be empty.
    std::string tracestate;

    [[nodiscard]] std::string_view trace_id() const noexcept {
        return std::string_view(traceparent).substr(3, 32);
    }
    [[nodiscard]] std::string_view parent_id() const noexcept {
        return std::string_view(traceparent).substr(36, 16);
    }
    [[nodiscard]] bool sampled() const noexcept { return (traceparent.back() - '0') & 1; }
};

/// A traceparent normalized to version 00; none when it is not one (the spec: then the trace starts anew,
/// and tracestate goes with it). A later version's first four fields are read, as the spec asks.
[[nodiscard]] std::optional<std::string> parse_traceparent(std::string_view text);

/// The trace a request carries: `params._meta.traceparent` (with its tracestate) when valid, else the HTTP
/// request's `traceparent` header (with its `tracestate`); none when neither is valid.
[[nodiscard]] std::optional<trace_context> trace_of(boost::json::value const& params, http_facts const* http);

/// What the next hop gets: the same trace and flags under `span_id` (16 lowercase hex digits, not all
/// zeros: the span of the hop that passes it on), and the same tracestate.
[[nodiscard]] trace_context child_of(trace_context const& parent, std::string_view span_id);

} // namespace duet::protocol
