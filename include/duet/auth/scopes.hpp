/// @file duet/auth/scopes.hpp
///
/// Which scopes an authorization request asks for (the spec's "Scope Selection Strategy"): the challenge's
/// `scope` when the 401 carried one, else every scope the protected resource metadata lists, else none (the
/// `scope` parameter is then left out). A 403 `insufficient_scope` steps up to the union of what is held and
/// what the challenge names, so a token never loses a scope by being replaced.
///
///     select_scopes("files:read", std::nullopt)          == {"files:read"}
///     select_scopes(std::nullopt, {{"a", "b"}})           == {"a", "b"}
///     step_up_scopes({"a"}, "a b")                        == {"a", "b"}
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace duet::auth {

/// A space-separated scope string (RFC 6749 §3.3) as a list, duplicates dropped, order kept.
[[nodiscard]] std::vector<std::string> split_scopes(std::string_view text);
[[nodiscard]] std::string join_scopes(std::span<std::string const> scopes);

/// The scopes of a first authorization; nullopt: send no `scope` parameter.
[[nodiscard]] std::optional<std::vector<std::string>>
select_scopes(std::optional<std::string_view> challenged,
              std::optional<std::vector<std::string>> const& resource_scopes_supported);

/// The scopes of a step-up authorization: `held` then those of `challenged` not yet in it.
[[nodiscard]] std::vector<std::string> step_up_scopes(std::span<std::string const> held,
                                                      std::string_view challenged);

/// Whether `scopes` holds every scope of `wanted`.
[[nodiscard]] bool covers(std::span<std::string const> scopes, std::span<std::string const> wanted);

} // namespace duet::auth
