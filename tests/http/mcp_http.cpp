#include "http/mcp_http.hpp"

#include <duet/protocol/header_codec.hpp>

#include "stdio/messages.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <iostream>

namespace duet::test::http {

using protocol::iequals;

namespace json = boost::json;

namespace {

json::object const* params_of(json::value const& message) {
    auto const* o = message.if_object();
    auto const* p = o ? o->if_contains("params") : nullptr;
    return p ? p->if_object() : nullptr;
}

json::value const* claimed_version(json::value const& message) {
    auto const* p = params_of(message);
    auto const* meta = p ? p->if_contains("_meta") : nullptr;
    auto const* m = meta ? meta->if_object() : nullptr;
    return m ? m->if_contains(key_protocol_version) : nullptr;
}

} // namespace

std::string base64(std::string_view bytes) {
    static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        auto const n = (unsigned(static_cast<unsigned char>(bytes[i])) << 16) |
                       (unsigned(static_cast<unsigned char>(bytes[i + 1])) << 8) |
                       unsigned(static_cast<unsigned char>(bytes[i + 2]));
        out += alphabet[(n >> 18) & 63];
        out += alphabet[(n >> 12) & 63];
        out += alphabet[(n >> 6) & 63];
        out += alphabet[n & 63];
    }
    if (auto const left = bytes.size() - i; left > 0) {
        auto n = unsigned(static_cast<unsigned char>(bytes[i])) << 16;
        if (left == 2)
            n |= unsigned(static_cast<unsigned char>(bytes[i + 1])) << 8;
        out += alphabet[(n >> 18) & 63];
        out += alphabet[(n >> 12) & 63];
        out += left == 2 ? alphabet[(n >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

std::string header_value(std::string_view value) {
    bool unsafe = value.starts_with(' ') || value.ends_with(' ') || value.starts_with("=?base64?");
    for (char c : value) {
        auto const u = static_cast<unsigned char>(c);
        unsafe = unsafe || u < 0x20 || u >= 0x7f;
    }
    return unsafe ? "=?base64?" + base64(value) + "?=" : std::string(value);
}

std::vector<header_field> modern_headers(json::value const& message) {
    std::vector<header_field> out;
    auto const* version = claimed_version(message);
    if (version && version->is_string())
        out.push_back({"MCP-Protocol-Version", std::string(version->get_string())});
    auto const* o = message.if_object();
    auto const* method = o ? o->if_contains("method") : nullptr;
    if (method && method->is_string()) {
        out.push_back({"Mcp-Method", std::string(method->get_string())});
        std::string_view const m = method->get_string();
        auto const* p = params_of(message);
        json::value const* name = nullptr;
        if (p && (m == "tools/call" || m == "prompts/get"))
            name = p->if_contains("name");
        else if (p && m == "resources/read")
            name = p->if_contains("uri");
        if (name && name->is_string())
            out.push_back({"Mcp-Name", header_value(name->get_string())});
    }
    return out;
}

request_spec post_spec(std::string body, std::vector<header_field> headers) {
    request_spec spec;
    spec.method = "POST";
    spec.headers = {{"Accept", std::string(accept_both)}, {"Content-Type", "application/json"}};
    spec.body = std::move(body);
    for (auto& h : headers)
        set_header(spec, h.name, std::move(h.value));
    return spec;
}

void set_header(request_spec& spec, std::string_view name, std::string value) {
    remove_header(spec, name);
    spec.headers.push_back({std::string(name), std::move(value)});
}

void remove_header(request_spec& spec, std::string_view name) {
    std::erase_if(spec.headers, [&](header_field const& h) { return iequals(h.name, name); });
}

std::int64_t code_of(json::value const& response) {
    auto const* o = response.if_object();
    auto const* e = o ? o->if_contains("error") : nullptr;
    auto const* c = e && e->is_object() ? e->get_object().if_contains("code") : nullptr;
    return c && c->is_int64() ? c->get_int64() : 0;
}

// ---- mcp_http -------------------------------------------------------------------------------------------

mcp_http::mcp_http(endpoint ep, served_eras eras) : ep_(std::move(ep)), log_(eras) {}

std::vector<header_field> mcp_http::session_headers() const {
    std::vector<header_field> out;
    if (session_)
        out.push_back({"Mcp-Session-Id", *session_});
    // The version header exists from 2025-06-18 on (DIGEST §9).
    if (session_ && !version_.empty() && version_ != "2025-03-26" && version_ != "2024-11-05")
        out.push_back({"MCP-Protocol-Version", version_});
    return out;
}

request_spec mcp_http::spec_for(json::value const& message, std::vector<header_field> const& extra) const {
    auto headers = claimed_version(message) ? modern_headers(message) : session_headers();
    auto spec = post_spec(json::serialize(message), std::move(headers));
    for (auto const& h : defaults_)
        set_header(spec, h.name, h.value);
    for (auto const& h : extra)
        set_header(spec, h.name, h.value);
    return spec;
}

void mcp_http::record_reply(reply const& r) {
    if (r.is_sse()) {
        for (auto const& e : r.events())
            if (!e.priming())
                log_.record_received(e.data);
    } else if (!r.body.empty()) {
        log_.record_received(r.body);
    }
}

reply mcp_http::send(request_spec const& spec, json::value const& as) {
    if (auto const* many = as.if_array())
        for (auto const& m : *many)
            log_.record_sent(m);
    else if (!as.is_null())
        log_.record_sent(as);
    auto r = exchange(ep_, spec);
    record_reply(r);
    return r;
}

reply mcp_http::post(json::value const& message, std::vector<header_field> const& extra) {
    return send(spec_for(message, extra), message);
}

std::unique_ptr<response_stream> mcp_http::open(json::value const& message,
                                                std::vector<header_field> const& extra) {
    log_.record_sent(message);
    return std::make_unique<response_stream>(ep_, spec_for(message, extra));
}

std::unique_ptr<response_stream> mcp_http::open_spec(request_spec const& spec) {
    return std::make_unique<response_stream>(ep_, spec);
}

json::value mcp_http::next(response_stream& s) {
    auto e = s.next();
    if (!e)
        return nullptr;
    return log_.record_received(e->data);
}

json::value mcp_http::next_server_request(response_stream& s, std::string_view method) {
    for (;;) {
        auto m = next(s);
        if (m.is_null() || is_server_request(m, method))
            return m;
    }
}

std::vector<json::value> mcp_http::rest(response_stream& s) {
    std::vector<json::value> out;
    for (auto e = s.next(); e; e = s.next())
        out.push_back(log_.record_received(e->data));
    return out;
}

reply mcp_http::initialize(std::string_view version, json::object capabilities, bool send_initialized) {
    auto const init = initialize_request("init", version, std::move(capabilities));
    session_.reset();
    auto spec = post_spec(json::serialize(init));
    for (auto const& h : defaults_)
        set_header(spec, h.name, h.value);
    auto r = send(spec, init);
    if (auto id = r.header("Mcp-Session-Id"))
        session_ = *id;
    else
        ADD_FAILURE() << "initialize minted no Mcp-Session-Id: " << r.status << " " << r.body;
    auto const body = r.json();
    auto const* result = body.is_object() ? body.get_object().if_contains("result") : nullptr;
    auto const* pv =
        result && result->is_object() ? result->get_object().if_contains("protocolVersion") : nullptr;
    version_ = pv && pv->is_string() ? std::string(pv->get_string()) : std::string{};
    if (send_initialized && session_) {
        auto const done = post(initialized_notification());
        EXPECT_EQ(done.status, 202u) << done.body;
    }
    return r;
}

void mcp_http::expect_schema_valid() {
    log_.expect_schema_valid();
}

request_spec stream_spec(mcp_http const& c, std::vector<header_field> const& extra) {
    request_spec spec;
    spec.method = "GET";
    spec.headers = c.session_headers();
    spec.headers.push_back({"Accept", "text/event-stream"});
    for (auto const& h : extra)
        set_header(spec, h.name, h.value);
    return spec;
}

json::object listen_request(json::value id) {
    return modern_request(std::move(id), "subscriptions/listen",
                          {{"notifications", {{"toolsListChanged", true}}}});
}

} // namespace duet::test::http
