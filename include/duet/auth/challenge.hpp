/// @file duet/auth/challenge.hpp
///
/// The challenges of a `WWW-Authenticate` field (RFC 9110 §11.6.1, RFC 6750 §3): a scheme, then either one
/// token68 or a list of name=value parameters whose values may be quoted strings. Several fields, or several
/// challenges in one field, are one comma-separated list; schemes and parameter names are case-insensitive.
///
///     auto c = parse_challenges({R"(Bearer error="insufficient_scope", scope="a b")"});
///     c->front().scheme == "Bearer"; *c->front().param("SCOPE") == "a b"
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace duet::auth {

struct challenge {
    std::string scheme;  ///< as sent ("Bearer")
    std::string token68; ///< the token68 form, when it was used instead of parameters
    std::vector<std::pair<std::string, std::string>> params; ///< names as sent, values unquoted

    /// The first parameter named `name` (case-insensitive).
    [[nodiscard]] std::optional<std::string_view> param(std::string_view name) const noexcept;
    [[nodiscard]] bool is(std::string_view scheme_name) const noexcept;
};

/// What a parse found, or why it stopped: the challenges read before the first malformed one are kept, as
/// a client is better served by a `Bearer` challenge it could read than by none.
struct challenge_list {
    std::vector<challenge> challenges;
    std::string error; ///< empty when every field parsed
};

/// Whether `text` is a token68 (RFC 9110 §11.2), which is also RFC 6750's b64token: one or more of A-Z a-z
/// 0-9 - . _ ~ + /, then any "=" padding. What a bearer token must be to travel in an Authorization field.
[[nodiscard]] bool is_token68(std::string_view text) noexcept;

/// Parses the values of every `WWW-Authenticate` field of one response, in order.
[[nodiscard]] challenge_list parse_challenges(std::span<std::string const> field_values);

/// The first Bearer challenge, if any.
[[nodiscard]] challenge const* find_bearer(std::span<challenge const> challenges) noexcept;

} // namespace duet::auth
