/// @file duet/jsonrpc/json_text.hpp
///
/// The JSON text of a value, as everything Duet sends or prints writes it. Byte for byte what
/// boost::json::serialize writes (no whitespace, members in their order, UTF-8 passed through, double quotes,
/// `\` and control characters escaped), except for doubles: Boost 1.81 writes 5.0 as `5E0` and 0.1 as `1E-1`,
/// which no peer expects. A double is written as JavaScript and Python write it: the fewest digits that read
/// back as the same double, laid out as JSON.stringify does.
///
///     to_json_text(boost::json::value(5.0));    // "5"
///     to_json_text(boost::json::value(0.1));    // "0.1"
///     to_json_text(boost::json::value(1e21));   // "1e+21"
///     to_json_text(boost::json::value(-0.0));   // "0"
///     to_json_text(boost::json::value(NAN));    // "null": JSON has no NaN or infinity
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <string_view>

namespace duet::jsonrpc {

[[nodiscard]] std::string to_json_text(boost::json::value const& v);
[[nodiscard]] std::string to_json_text(boost::json::object const& o);
[[nodiscard]] std::string to_json_text(boost::json::array const& a);

/// The same text, appended to `out` (no allocation when `out` has the room).
void append_json_text(std::string& out, boost::json::value const& v);
void append_json_text(std::string& out, boost::json::object const& o);
void append_json_text(std::string& out, boost::json::array const& a);

/// `s` as a JSON string: quoted and escaped. (Not an overload of the above: a boost::json::string converts
/// to both a value and a string_view.)
void append_json_string(std::string& out, std::string_view s);

} // namespace duet::jsonrpc
