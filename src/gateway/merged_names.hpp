// File: src/gateway/merged_names.hpp (private)
//
// The names of an endpoint that serves one or more upstreams (merged_backend): a member's tools and prompts
// are shown as PREFIX + name after its exposure policy's filters and renames, and a name a client sends is
// routed back to its member and the upstream's own name. Also the merged lists' cursors, which say which
// member a page came from. Pure: no I/O.
#pragma once

#include <duet/gateway/exposure.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace duet::gateway::detail {

/// One member as naming sees it.
struct named_member {
    std::string prefix; ///< NAME + separator, or empty (one member, unprefixed)
    exposure_policy const* exposure;
};

enum class name_kind : unsigned char { tool, prompt };

[[nodiscard]] kind_policy const& policy_of(exposure_policy const& e, name_kind k) noexcept;

/// The name clients see for the upstream name `name` of `m`; nullopt when its policy hides it.
[[nodiscard]] std::optional<std::string> shown_name(named_member const& m, name_kind k,
                                                    std::string_view name);

struct routed_name {
    std::size_t member;
    std::string upstream; ///< the upstream's own name
};

/// The member and upstream name a client's `shown` name stands for; nullopt when none shows it. A longer
/// prefix is tried first, so member "a" never takes what member "a__b" shows.
[[nodiscard]] std::optional<routed_name> route_name(std::span<named_member const> members, name_kind k,
                                                    std::string_view shown);

enum class list_kind : unsigned char { tools, prompts, resources, templates };

/// A page of a member's list as clients see it: hidden items left out, tools' and prompts' names shown and
/// descriptions overridden. An item without its name (or URI) is left out: it could not be routed.
[[nodiscard]] boost::json::array shown_items(named_member const& m, list_kind k, boost::json::array items);

/// A merged list's cursor: the member whose page comes next (by name, so that a cursor outlives a reload
/// that adds or removes members) and that member's own cursor (empty: its first page). Opaque to clients,
/// checked when it comes back.
struct merged_cursor {
    std::string member;
    std::string inner;
};
[[nodiscard]] std::string encode_cursor(merged_cursor const& c);
/// nullopt: not a cursor this endpoint gave.
[[nodiscard]] std::optional<merged_cursor> decode_cursor(std::string_view text);

} // namespace duet::gateway::detail
