#include <duet/protocol/envelope.hpp>
#include <duet/protocol/header_codec.hpp>
#include <duet/protocol/method_table.hpp>
#include <duet/protocol/request_headers.hpp>

namespace duet::protocol {

namespace {

boost::json::value const* argument_at(boost::json::value const& params,
                                      std::vector<std::string> const& path) {
    auto const* p = params.if_object();
    auto const* cur = p ? p->if_contains("arguments") : nullptr;
    for (auto const& key : path) {
        auto const* o = cur ? cur->if_object() : nullptr;
        cur = o ? o->if_contains(key) : nullptr;
    }
    return cur;
}

} // namespace

std::optional<std::string> param_header_value(boost::json::value const& argument) {
    if (argument.is_string())
        return encode_header_value(argument.get_string());
    if (argument.is_bool())
        return std::string(argument.get_bool() ? "true" : "false");
    if (argument.is_int64())
        return std::to_string(argument.get_int64());
    if (argument.is_uint64())
        return std::to_string(argument.get_uint64());
    return std::nullopt;
}

std::vector<http_header> modern_request_headers(jsonrpc::request const& request,
                                                std::span<param_header const> bindings) {
    std::vector<http_header> out;
    auto const claim = read_version_claim(request.params);
    if (claim.what == version_claim::kind::text)
        out.push_back({"MCP-Protocol-Version", encode_header_value(claim.text)});
    out.push_back({"Mcp-Method", encode_header_value(request.method)});
    auto const* row = find_method(request.method);
    auto const* params = request.params.if_object();
    if (row && params && row->mcp_name != name_source::none) {
        auto const* name = params->if_contains(name_param(row->mcp_name));
        if (name && name->is_string())
            out.push_back({"Mcp-Name", encode_header_value(name->get_string())});
    }
    if (row && row->id == method_id::tools_call) {
        for (auto const& b : bindings) {
            auto const* value = argument_at(request.params, b.path);
            if (!value || value->is_null())
                continue;
            if (auto text = param_header_value(*value))
                out.push_back({"Mcp-Param-" + b.header, std::move(*text)});
        }
    }
    return out;
}

} // namespace duet::protocol
