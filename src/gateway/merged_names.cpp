#include "merged_names.hpp"

#include <algorithm>
#include <vector>

namespace duet::gateway::detail {

namespace json = boost::json;

kind_policy const& policy_of(exposure_policy const& e, name_kind k) noexcept {
    return k == name_kind::tool ? e.tools : e.prompts;
}

std::optional<std::string> shown_name(named_member const& m, name_kind k, std::string_view name) {
    auto shown = exposed_name(policy_of(*m.exposure, k), name);
    if (!shown)
        return std::nullopt;
    return m.prefix + *shown;
}

std::optional<routed_name> route_name(std::span<named_member const> members, name_kind k,
                                      std::string_view shown) {
    std::vector<std::size_t> order(members.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return members[a].prefix.size() > members[b].prefix.size();
    });
    for (auto i : order) {
        auto const& m = members[i];
        if (!shown.starts_with(m.prefix))
            continue;
        if (auto up = upstream_name(policy_of(*m.exposure, k), shown.substr(m.prefix.size())))
            return routed_name{i, std::move(*up)};
    }
    return std::nullopt;
}

json::array shown_items(named_member const& m, list_kind k, json::array items) {
    bool const named = k == list_kind::tools || k == list_kind::prompts;
    std::string_view const key = named ? "name" : k == list_kind::resources ? "uri" : "uriTemplate";
    auto const& policy = k == list_kind::tools     ? m.exposure->tools
                         : k == list_kind::prompts ? m.exposure->prompts
                                                   : m.exposure->resources;
    json::array out;
    out.reserve(items.size());
    for (auto& item : items) {
        auto* o = item.if_object();
        auto* id = o ? o->if_contains(key) : nullptr;
        if (!id || !id->is_string())
            continue;
        std::string const upstream(id->get_string());
        auto shown = exposed_name(policy, upstream);
        if (!shown)
            continue;
        if (named) {
            (*o)["name"] = m.prefix + *shown;
            if (auto d = policy.describe.find(upstream); d != policy.describe.end())
                (*o)["description"] = d->second;
        }
        out.push_back(std::move(item));
    }
    return out;
}

std::string encode_cursor(merged_cursor const& c) {
    return "m" + c.member + ":" + c.inner;
}

std::optional<merged_cursor> decode_cursor(std::string_view text) {
    // Member names hold no ':' (letters, digits, '-', '_', '.'); the inner cursor may.
    auto const colon = text.find(':');
    if (!text.starts_with('m') || colon == std::string_view::npos)
        return std::nullopt;
    return merged_cursor{std::string(text.substr(1, colon - 1)), std::string(text.substr(colon + 1))};
}

} // namespace duet::gateway::detail
