#include "request_metrics.hpp"

#include <duet/log/log.hpp>

#include <string>

namespace duet::server::detail {

metrics::outcome outcome_of(protocol::method_info const* method, connection::answer const& a) {
    using metrics::outcome;
    if (!a.message) // an open listen answers when it ends; anything else without an answer was cancelled
        return method && method->id == protocol::method_id::subscriptions_listen ? outcome::ok
                                                                                 : outcome::cancelled;
    auto const* response = std::get_if<jsonrpc::response>(&*a.message);
    if (!response)
        return outcome::error;
    if (!method || (!method->may_require_input && method->id != protocol::method_id::tools_call))
        return outcome::ok;
    auto const* result = response->result.if_object();
    if (!result)
        return outcome::ok;
    if (auto const* kind = result->if_contains("resultType");
        kind && kind->is_string() && kind->get_string() == "input_required")
        return outcome::input_required;
    if (method->id == protocol::method_id::tools_call)
        if (auto const* failed = result->if_contains("isError");
            failed && failed->is_bool() && failed->get_bool())
            return outcome::tool_error;
    return outcome::ok;
}

bool answers_recorded(metrics::registry const* metrics) noexcept {
    return metrics || log::enabled(log::level::debug);
}

void record_answer(metrics::registry* metrics, observed_request const& seen, boost::json::value const& params,
                   protocol::trace_context const* trace, connection::answer const& a) {
    auto const how = outcome_of(seen.method, a);
    auto const took = std::chrono::steady_clock::now() - seen.started;
    if (log::enabled(log::level::debug)) {
        auto const method = seen.method ? seen.method->name : std::string_view("other");
        auto const era = metrics::to_string(seen.era);
        auto const ms = std::chrono::duration<double, std::milli>(took).count();
        auto text = std::string(method) + " " + std::string(era) + " " + std::string(to_string(how)) + " " +
                    std::to_string(ms) + "ms";
        if (trace)
            text.append(" trace=").append(trace->trace_id());
        log::write({.severity = log::level::debug,
                    .name = "request",
                    .message = text,
                    .method = method,
                    .era = era,
                    .session = seen.era == metrics::era_label::legacy ? seen.session : std::string_view(),
                    .outcome = to_string(how),
                    .latency_ms = ms,
                    .trace_id = trace ? trace->trace_id() : std::string_view()});
    }
    if (!metrics)
        return;
    metrics->request_done(seen.method, seen.era, how, took);
    if (!seen.method || seen.method->id != protocol::method_id::tools_call)
        return;
    auto const* p = params.if_object();
    auto const* name = p ? p->if_contains("name") : nullptr;
    metrics->tool_called(
        name && name->is_string() ? std::string_view(name->get_string()) : std::string_view(), how);
}

} // namespace duet::server::detail
