/// @file duet/gateway/exposure.hpp
///
/// What of an upstream `duet gateway` shows its clients: per kind (tools, prompts, resources), allow and deny
/// globs over the upstream's names (resources: URIs, templates: URI templates), renames, and description
/// overrides. A hidden tool is not listed and a call to it is "unknown tool", never forwarded.
///
///     exposure_policy p;
///     p.tools.allow = {"read_*", "list_*"};
///     p.tools.deny = {"read_secrets"};
///     p.tools.rename = {{"read_file", "read"}};
///     exposed_name(p.tools, "read_file");   // "read"
///     exposed_name(p.tools, "write_file");  // nullopt: hidden
///     upstream_name(p.tools, "read");       // "read_file"
///
/// Pure: no I/O.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::gateway {

/// `*` matches any run of characters (none included), `?` exactly one; everything else matches itself.
[[nodiscard]] bool glob_match(std::string_view pattern, std::string_view text) noexcept;

/// Whether `pattern` is a glob this module takes: not empty, and no character outside printable ASCII.
[[nodiscard]] bool valid_glob(std::string_view pattern) noexcept;

struct kind_policy {
    /// Empty: everything is allowed; else only names matching one of these.
    std::vector<std::string> allow;
    /// Names matching one of these are hidden, allowed or not.
    std::vector<std::string> deny;
    /// Upstream name -> the name clients see (tools and prompts; not resources).
    std::map<std::string, std::string> rename;
    /// Upstream name -> the description clients see instead of the upstream's.
    std::map<std::string, std::string> describe;

    [[nodiscard]] bool empty() const noexcept {
        return allow.empty() && deny.empty() && rename.empty() && describe.empty();
    }
};

struct exposure_policy {
    kind_policy tools;
    kind_policy prompts;
    kind_policy resources; ///< allow/deny over resource URIs and template URI templates; no renames

    [[nodiscard]] bool empty() const noexcept {
        return tools.empty() && prompts.empty() && resources.empty();
    }
};

/// Whether the upstream's `name` is shown at all (allow, then deny).
[[nodiscard]] bool admitted(kind_policy const& p, std::string_view name) noexcept;

/// The name clients see for the upstream's `name`; nullopt when it is hidden.
[[nodiscard]] std::optional<std::string> exposed_name(kind_policy const& p, std::string_view name);

/// The upstream's name for the name a client used; nullopt when no admitted upstream name is shown so (a
/// hidden name, or an upstream name that a rename replaced).
[[nodiscard]] std::optional<std::string> upstream_name(kind_policy const& p, std::string_view exposed);

/// What is wrong with `p` in words (an invalid glob, a rename to an empty name or two names renamed to one,
/// a rename of a name the policy hides), else nullopt. `kind` names it in the message ("tools").
[[nodiscard]] std::optional<std::string> check_policy(kind_policy const& p, std::string_view kind);

} // namespace duet::gateway
