/// @file duet/protocol/param_headers.hpp
///
/// Tool arguments mirrored into HTTP headers (DIGEST §9): a property whose schema carries `"x-mcp-header":
/// "Region"` travels, when present and not null, as `Mcp-Param-Region`. This file reads those annotations out
/// of a tool's inputSchema and enforces their constraints, so a server refuses a bad tool at registration and
/// a client drops it from a list.
///
///     auto bindings = collect_param_headers(tool["inputSchema"].as_object());
///     // -> result: [{header:"Region", path:{"region"}, type:string}] or an error naming the violation
#pragma once

#include <boost/json/object.hpp>
#include <boost/system/result.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace duet::protocol {

/// The JSON type a mirrored argument may have.
enum class param_type : std::uint8_t { string, integer, boolean };

/// One argument mirrored into an `Mcp-Param-{header}` header.
struct param_header {
    std::string header;            ///< the part after "Mcp-Param-", as declared
    std::vector<std::string> path; ///< property names from `arguments` down to the value
    param_type type = param_type::string;

    friend bool operator==(param_header const&, param_header const&) = default;
};

/// Why an `x-mcp-header` annotation is invalid.
struct param_header_error {
    std::string message;
};

[[noreturn]] void throw_exception_from_error(param_header_error const& e, boost::source_location const& loc);

/// Every `x-mcp-header` binding of an inputSchema, checked: non-empty RFC 9110 token, unique ignoring case,
/// on an integer, string or boolean property, reachable only through a chain of `properties`.
[[nodiscard]] boost::system::result<std::vector<param_header>, param_header_error>
collect_param_headers(boost::json::object const& input_schema);

} // namespace duet::protocol
