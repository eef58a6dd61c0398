#include <duet/client/negotiation.hpp>
#include <duet/protocol/errors.hpp>

namespace duet::client {

namespace json = boost::json;
using protocol::version;

result<version> legacy_offer(std::optional<version> pinned) {
    if (!pinned)
        return protocol::latest_handshake_version;
    if (protocol::is_modern_version(*pinned))
        return make_error(errc::usage,
                          "a legacy connect cannot use " + std::string(protocol::to_string(*pinned)) +
                              ": modern versions have no initialize handshake (use the modern or "
                              "auto mode)");
    return *pinned;
}

result<version> modern_offer(std::optional<version> pinned) {
    if (!pinned)
        return protocol::latest_modern_version;
    if (protocol::is_handshake_version(*pinned))
        return make_error(errc::usage,
                          "a modern connect cannot use " + std::string(protocol::to_string(*pinned)) +
                              ": it is reached through initialize (use the legacy or auto mode)");
    return *pinned;
}

result<version> accepted_handshake_version(json::value const& initialize_result) {
    auto const* o = initialize_result.if_object();
    auto const* v = o ? o->if_contains("protocolVersion") : nullptr;
    if (!v || !v->is_string())
        return make_error(errc::protocol_violation, "the InitializeResult names no protocolVersion");
    auto const parsed = protocol::parse_version(v->get_string());
    if (!parsed)
        return make_error(errc::version_rejected, "the server settled on " + std::string(v->get_string()) +
                                                      ", a version this client does not know");
    if (protocol::is_modern_version(*parsed))
        return make_error(errc::version_rejected, "the server answered initialize with " +
                                                      std::string(v->get_string()) +
                                                      ", a modern version that no handshake can negotiate");
    return *parsed;
}

bool is_modern_error(jsonrpc::error_object const& e, unsigned http_status) noexcept {
    switch (static_cast<protocol::errc>(e.code)) {
    case protocol::errc::header_mismatch:
    case protocol::errc::missing_required_client_capability:
    case protocol::errc::unsupported_protocol_version:
        return true;
    case protocol::errc::method_not_found:
        return http_status == 404;
    default:
        return false;
    }
}

namespace {

std::optional<version> newest_in(json::value const& error_data, protocol::era wanted) {
    auto const* o = error_data.if_object();
    auto const* supported = o ? o->if_contains("supported") : nullptr;
    auto const* list = supported ? supported->if_array() : nullptr;
    if (!list)
        return std::nullopt;
    std::optional<version> best;
    for (auto const& v : *list) {
        if (!v.is_string())
            continue;
        auto const parsed = protocol::parse_version(v.get_string());
        if (parsed && protocol::era_of(*parsed) == wanted && (!best || *parsed > *best))
            best = parsed;
    }
    return best;
}

} // namespace

std::optional<version> retry_version(json::value const& error_data) {
    return newest_in(error_data, protocol::era::modern);
}

std::optional<version> handshake_fallback(json::value const& error_data) {
    return newest_in(error_data, protocol::era::legacy);
}

result_kind kind_of(json::object const& result) noexcept {
    auto const* t = result.if_contains("resultType");
    if (!t)
        return result_kind::complete;
    if (!t->is_string())
        return result_kind::invalid;
    if (t->get_string() == "complete")
        return result_kind::complete;
    if (t->get_string() == "input_required")
        return result_kind::input_required;
    if (t->get_string() == "task")
        return result_kind::task;
    return result_kind::invalid;
}

json::object retry_params(json::object original, json::object input_responses,
                          json::value const* request_state) {
    original.erase("inputResponses");
    original.erase("requestState");
    if (!input_responses.empty())
        original["inputResponses"] = std::move(input_responses);
    if (request_state)
        original["requestState"] = *request_state;
    return original;
}

} // namespace duet::client
