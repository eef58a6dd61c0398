// The gateway's pure translations (duet/gateway/translate.hpp).
#include <duet/gateway/translate.hpp>
#include <duet/protocol/meta_keys.hpp>
#include <duet/protocol/tasks.hpp>

#include <boost/json/array.hpp>

#include <algorithm>
#include <cctype>

namespace duet::gateway {

namespace json = boost::json;

namespace {

std::string text_at(json::object const& o, std::string_view key) {
    auto const* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string{};
}

} // namespace

server::implementation_info implementation_from_json(json::object const& info) {
    server::implementation_info i;
    i.name = text_at(info, "name");
    if (i.name.empty())
        i.name = "unknown";
    i.version = text_at(info, "version");
    if (i.version.empty())
        i.version = "unknown";
    i.title = text_at(info, "title");
    i.description = text_at(info, "description");
    i.website_url = text_at(info, "websiteUrl");
    if (auto const* icons = info.if_contains("icons"); icons && icons->is_array())
        i.icons = icons->get_array();
    return i;
}

boost::system::result<json::object, protocol::error_object>
upstream_params(protocol::method_id method, json::object const& in, bool lenient_args) {
    // Built member by member rather than copied and then pruned: this runs for every forwarded request, and
    // what it leaves out (the envelope) is most of what a modern request's params hold.
    json::object params;
    params.reserve(in.size());
    for (auto const& kv : in) {
        auto const key = kv.key();
        if (key == "requestState" || key == "inputResponses")
            continue;
        if (key != "_meta") {
            params.emplace(key, kv.value());
            continue;
        }
        auto const* meta = kv.value().if_object();
        if (!meta)
            continue; // not an object: absent metadata (ERA-POLICY step 1)
        json::object kept;
        for (auto const& m : *meta) {
            auto const k = m.key();
            // The envelope is the gateway's own to write upstream, and so is the trace: the client passes on
            // the gateway's hop as the parent (request_options::trace).
            if (k != protocol::meta_key::protocol_version && k != protocol::meta_key::client_capabilities &&
                k != protocol::meta_key::client_info && k != protocol::meta_key::log_level &&
                k != protocol::meta_key::progress_token && k != protocol::meta_key::traceparent &&
                k != protocol::meta_key::tracestate)
                kept.emplace(k, m.value());
        }
        if (!kept.empty())
            params.emplace("_meta", std::move(kept));
    }
    if (method == protocol::method_id::tools_call && params.contains("payload")) {
        if (!lenient_args)
            return protocol::invalid_params(
                "Invalid params: tool arguments belong in \"arguments\", not \"payload\" (this gateway runs "
                "without --lenient-args)");
        if (params.contains("arguments"))
            return protocol::invalid_params(
                "Invalid params: both \"arguments\" and \"payload\" given; send the arguments once");
        auto payload = params.at("payload");
        if (!payload.is_object())
            return protocol::invalid_params("Invalid params: \"payload\" must be an object of arguments");
        params.erase("payload");
        params["arguments"] = std::move(payload);
    }
    return params;
}

protocol::cache_hints take_result_hints(json::object& result) {
    protocol::cache_hints hints;
    if (auto const* ttl = result.if_contains("ttlMs")) {
        if (ttl->is_int64() && ttl->get_int64() >= 0)
            hints.ttl_ms = ttl->get_int64();
        else if (ttl->is_uint64())
            hints.ttl_ms = static_cast<std::int64_t>(std::min<std::uint64_t>(ttl->get_uint64(), INT64_MAX));
    }
    if (auto const* scope = result.if_contains("cacheScope"); scope && *scope == "public")
        hints.scope = protocol::cache_scope::public_cache;
    result.erase("ttlMs");
    result.erase("cacheScope");
    result.erase("resultType");
    if (auto* meta = result.if_contains("_meta"); meta && meta->is_object()) {
        meta->get_object().erase(protocol::meta_key::server_info);
        if (meta->get_object().empty())
            result.erase("_meta");
    }
    return hints;
}

bool is_resource_not_found(protocol::error_object const& e) noexcept {
    if (e.code == static_cast<std::int32_t>(protocol::errc::resource_not_found))
        return true;
    if (e.code != static_cast<std::int32_t>(protocol::errc::invalid_params))
        return false;
    if (e.data.is_object() && e.data.get_object().contains("uri"))
        return true;
    // The TypeScript SDK's servers say it in words only: -32602 "Resource URI not found".
    auto says = [&](std::string_view words) {
        auto const same = [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        };
        return std::search(e.message.begin(), e.message.end(), words.begin(), words.end(), same) !=
               e.message.end();
    };
    return says("resource") && says("not found");
}

std::optional<protocol::error_object> respell_not_found(protocol::error_object const& upstream,
                                                        json::object const& read_params,
                                                        protocol::era downstream) {
    auto const* uri = read_params.if_contains("uri");
    if (!uri || !uri->is_string() || !is_resource_not_found(upstream))
        return std::nullopt;
    return protocol::resource_not_found(downstream, uri->get_string());
}

namespace {
constexpr std::string_view unavailable_prefix = "Internal error: the upstream server ";
constexpr std::string_view unavailable_verb = " did not answer: ";
} // namespace

protocol::error_object upstream_unavailable(std::string_view upstream, std::string_view what) {
    std::string message(unavailable_prefix);
    message += upstream;
    message += unavailable_verb;
    message += what;
    return protocol::make_error(protocol::errc::internal_error, std::move(message));
}

bool is_upstream_unavailable(protocol::error_object const& e) noexcept {
    return e.code == static_cast<std::int32_t>(protocol::errc::internal_error) &&
           std::string_view(e.message).starts_with(unavailable_prefix) &&
           std::string_view(e.message).find(unavailable_verb) != std::string_view::npos;
}

} // namespace duet::gateway
