/// @file duet/jsonrpc/id.hpp
///
/// The id of a JSON-RPC request: a string or an integer (MCP forbids null ids on requests). The value keeps
/// the JSON type it arrived with, because MCP echoes ids with the same type (a listen's subscription id is
/// the request id "with the same JSON type").
///
///     request_id a{7};            // serializes as 7
///     request_id b{"abc"};        // serializes as "abc"
///     a == request_id{7};         // true; 7 and "7" are different ids
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace duet::jsonrpc {

/// A JSON-RPC request id: integer or string. Value type, cheap to copy for integer ids.
class request_id {
public:
    request_id(std::int64_t n) noexcept : value_(n) {}
    request_id(int n) noexcept : value_(std::int64_t{n}) {}
    request_id(std::string s) noexcept : value_(std::move(s)) {}
    request_id(std::string_view s) : value_(std::string(s)) {}
    request_id(char const* s) : value_(std::string(s)) {}

    /// Reads an id from JSON. Strings and integers (that fit in int64) are ids; null, booleans, fractions,
    /// arrays and objects are not.
    [[nodiscard]] static std::optional<request_id> from_json(boost::json::value const& v);

    [[nodiscard]] bool is_integer() const noexcept { return std::holds_alternative<std::int64_t>(value_); }
    [[nodiscard]] bool is_string() const noexcept { return std::holds_alternative<std::string>(value_); }
    [[nodiscard]] std::int64_t as_integer() const { return std::get<std::int64_t>(value_); }
    [[nodiscard]] std::string const& as_string() const { return std::get<std::string>(value_); }

    [[nodiscard]] boost::json::value to_json() const;
    /// A short human-readable form for logs: 7 or "abc".
    [[nodiscard]] std::string to_string() const;

    friend bool operator==(request_id const&, request_id const&) = default;
    friend auto operator<=>(request_id const&, request_id const&) = default;

private:
    friend struct std::hash<request_id>;
    std::variant<std::int64_t, std::string> value_;
};

} // namespace duet::jsonrpc

template<>
struct std::hash<duet::jsonrpc::request_id> {
    std::size_t operator()(duet::jsonrpc::request_id const& id) const noexcept {
        return std::hash<std::variant<std::int64_t, std::string>>{}(id.value_);
    }
};
