#include "request_metrics.hpp"

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

void record_answer(metrics::registry& metrics, observed_request const& seen, boost::json::value const& params,
                   connection::answer const& a) {
    auto const how = outcome_of(seen.method, a);
    metrics.request_done(seen.method, seen.era, how, std::chrono::steady_clock::now() - seen.started);
    if (!seen.method || seen.method->id != protocol::method_id::tools_call)
        return;
    auto const* p = params.if_object();
    auto const* name = p ? p->if_contains("name") : nullptr;
    metrics.tool_called(name && name->is_string() ? std::string_view(name->get_string()) : std::string_view(),
                        how);
}

} // namespace duet::server::detail
