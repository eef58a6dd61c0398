// File: tests/stdio/messages.hpp
//
// Builders for the JSON-RPC messages an MCP client sends, in both eras, shared by the stdio tests and the
// in-process server tests (tests/unit/server). Modern requests carry the per-request `_meta` envelope
// (DIGEST §2); legacy requests carry none and rely on the session `initialize` opened (DIGEST §11).
//
//     send(modern_request(7, "tools/list"));
//     send(initialize_request(1, "2025-11-25", {{"elicitation", json::object{}}}));
//     send(legacy_request(2, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "hi"}}}}));
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <string_view>

namespace duet::test {

inline constexpr std::string_view modern_version = "2026-07-28";
inline constexpr std::string_view key_protocol_version = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view key_client_capabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr std::string_view key_client_info = "io.modelcontextprotocol/clientInfo";
inline constexpr std::string_view key_log_level = "io.modelcontextprotocol/logLevel";
inline constexpr std::string_view key_server_info = "io.modelcontextprotocol/serverInfo";
inline constexpr std::string_view key_subscription_id = "io.modelcontextprotocol/subscriptionId";

/// The modern `_meta` envelope; `extra` adds keys such as progressToken or logLevel.
inline boost::json::object modern_meta(boost::json::object capabilities = {},
                                       boost::json::object extra = {}) {
    boost::json::object meta{
        {key_protocol_version, modern_version},
        {key_client_capabilities, std::move(capabilities)},
        {key_client_info, boost::json::object{{"name", "duet-tests"}, {"version", "1.0"}}}};
    for (auto& kv : extra)
        meta[kv.key()] = kv.value();
    return meta;
}

inline boost::json::object request(boost::json::value id, std::string_view method) {
    return boost::json::object{{"jsonrpc", "2.0"}, {"id", std::move(id)}, {"method", method}};
}

/// A modern request: `params` plus `_meta` (an explicit `_meta` in `params` is kept as given).
inline boost::json::object modern_request(boost::json::value id, std::string_view method,
                                          boost::json::object params = {},
                                          boost::json::object capabilities = {}) {
    if (!params.contains("_meta"))
        params["_meta"] = modern_meta(std::move(capabilities));
    auto r = request(std::move(id), method);
    r["params"] = std::move(params);
    return r;
}

/// A request without `_meta`: legacy inside a session; `params` is left out when empty.
inline boost::json::object legacy_request(boost::json::value id, std::string_view method,
                                          boost::json::object params = {}) {
    auto r = request(std::move(id), method);
    if (!params.empty())
        r["params"] = std::move(params);
    return r;
}

inline boost::json::object initialize_request(boost::json::value id, std::string_view version,
                                              boost::json::object capabilities = {}) {
    return legacy_request(std::move(id), "initialize",
                          {{"protocolVersion", version},
                           {"capabilities", std::move(capabilities)},
                           {"clientInfo", {{"name", "duet-tests"}, {"version", "1.0"}}}});
}

inline boost::json::object notification(std::string_view method, boost::json::object params = {}) {
    boost::json::object n{{"jsonrpc", "2.0"}, {"method", method}};
    if (!params.empty())
        n["params"] = std::move(params);
    return n;
}

inline boost::json::object initialized_notification() {
    return notification("notifications/initialized");
}

inline boost::json::object cancelled_notification(boost::json::value request_id) {
    return notification("notifications/cancelled",
                        {{"requestId", std::move(request_id)}, {"reason", "test"}});
}

/// A client's answer to a request the server sent it.
inline boost::json::object client_response(boost::json::value id, boost::json::object result) {
    return boost::json::object{{"jsonrpc", "2.0"}, {"id", std::move(id)}, {"result", std::move(result)}};
}

inline boost::json::object call_params(std::string_view tool, boost::json::object arguments = {}) {
    return boost::json::object{{"name", tool}, {"arguments", std::move(arguments)}};
}

/// `params` asking for progress under `token` (a legacy request's `_meta`).
inline boost::json::object with_progress(boost::json::object params, std::string_view token) {
    params["_meta"] = boost::json::object{{"progressToken", token}};
    return params;
}

// ---- reading what the server wrote
// --------------------------------------------------------------------------

inline bool is_response_to(boost::json::value const& m, boost::json::value const& id) {
    auto const* o = m.if_object();
    if (!o || o->contains("method") || !(o->contains("result") || o->contains("error")))
        return false;
    auto const* i = o->if_contains("id");
    // Same JSON type as well as the same value: 7 and "7" are different ids.
    return i && i->kind() == id.kind() && *i == id;
}

inline bool is_notification(boost::json::value const& m, std::string_view method) {
    auto const* o = m.if_object();
    if (!o || o->contains("id"))
        return false;
    auto const* me = o->if_contains("method");
    return me && me->is_string() && me->get_string() == method;
}

inline bool is_server_request(boost::json::value const& m, std::string_view method) {
    auto const* o = m.if_object();
    if (!o || !o->contains("id"))
        return false;
    auto const* me = o->if_contains("method");
    return me && me->is_string() && me->get_string() == method;
}

/// `params._meta[subscriptionId]` of a notification, or null.
inline boost::json::value subscription_id_of(boost::json::value const& m) {
    auto const* o = m.if_object();
    auto const* p = o ? o->if_contains("params") : nullptr;
    auto const* meta = p && p->is_object() ? p->get_object().if_contains("_meta") : nullptr;
    auto const* id =
        meta && meta->is_object() ? meta->get_object().if_contains(key_subscription_id) : nullptr;
    return id ? *id : boost::json::value{};
}

inline std::int64_t error_code(boost::json::value const& m) {
    auto const* e = m.as_object().if_contains("error");
    return e ? e->at("code").to_number<std::int64_t>() : 0;
}

} // namespace duet::test
