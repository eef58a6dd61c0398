#include "head_fields.hpp"

#include <duet/protocol/header_codec.hpp>

#include <string>

namespace duet::transport::http {

namespace bhttp = boost::beast::http;

namespace {

// Whether `n` is a header admission reads: MCP-Protocol-Version, Mcp-Method, Mcp-Name or an Mcp-Param-*.
bool is_mcp_header(std::string_view n) {
    if (n.size() < 8 || (n[0] != 'M' && n[0] != 'm'))
        return false;
    switch (n.size()) {
    case 8:
        return protocol::iequals(n, "Mcp-Name");
    case 10:
        return protocol::iequals(n, "Mcp-Method");
    case 20:
        if (protocol::iequals(n, "MCP-Protocol-Version"))
            return true;
        break;
    default:
        break;
    }
    return n.size() > 10 && protocol::iequals(n.substr(0, 10), "Mcp-Param-");
}

} // namespace

std::optional<std::string_view> header(request const& req, bhttp::field name) {
    for (auto const& field : req)
        if (field.name() == name)
            return field.value();
    return std::nullopt;
}

std::optional<std::string_view> header(request const& req, std::string_view name) {
    for (auto const& field : req)
        if (protocol::iequals(field.name_string(), name))
            return field.value();
    return std::nullopt;
}

bool accepts(request const& req, std::string_view type) {
    auto const a = header(req, bhttp::field::accept);
    if (!a)
        return false;
    return a->find(type) != std::string_view::npos || a->find("*/*") != std::string_view::npos;
}

protocol::http_facts facts_of(request const& req, std::shared_ptr<protocol::caller_identity const> caller) {
    protocol::http_facts f;
    f.caller = std::move(caller);
    for (auto const& field : req) {
        if (field.name() != bhttp::field::unknown)
            continue; // none of admission's headers is one Beast knows
        auto const n = field.name_string();
        if (protocol::iequals(n, "traceparent")) {
            f.traceparent = std::string(field.value());
            continue;
        }
        if (protocol::iequals(n, "tracestate")) {
            f.tracestate = std::string(field.value());
            continue;
        }
        if (is_mcp_header(n)) {
            // A modern request's three, and room for one Mcp-Param-*, in one allocation.
            if (f.headers.empty())
                f.headers.reserve(4);
            f.headers.push_back({std::string(n), std::string(field.value())});
        }
    }
    return f;
}

} // namespace duet::transport::http
