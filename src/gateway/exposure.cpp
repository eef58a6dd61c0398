#include <duet/gateway/exposure.hpp>

#include <algorithm>
#include <set>

namespace duet::gateway {

bool glob_match(std::string_view pattern, std::string_view text) noexcept {
    // Iterative with one backtrack point: the last '*' seen, and where in `text` it last resumed.
    std::size_t p = 0, t = 0;
    std::size_t star = std::string_view::npos, resume = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
            ++p;
            ++t;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

bool valid_glob(std::string_view pattern) noexcept {
    return !pattern.empty() &&
           std::all_of(pattern.begin(), pattern.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

namespace {

bool any_match(std::vector<std::string> const& globs, std::string_view name) noexcept {
    return std::any_of(globs.begin(), globs.end(), [&](auto const& g) { return glob_match(g, name); });
}

} // namespace

bool admitted(kind_policy const& p, std::string_view name) noexcept {
    if (!p.allow.empty() && !any_match(p.allow, name))
        return false;
    return !any_match(p.deny, name);
}

std::optional<std::string> exposed_name(kind_policy const& p, std::string_view name) {
    if (!admitted(p, name))
        return std::nullopt;
    if (auto it = p.rename.find(std::string(name)); it != p.rename.end())
        return it->second;
    return std::string(name);
}

std::optional<std::string> upstream_name(kind_policy const& p, std::string_view exposed) {
    for (auto const& [from, to] : p.rename)
        if (to == exposed)
            return admitted(p, from) ? std::optional<std::string>(from) : std::nullopt;
    // Not a rename's target: the upstream name itself, unless a rename moved it elsewhere.
    if (p.rename.contains(std::string(exposed)) || !admitted(p, exposed))
        return std::nullopt;
    return std::string(exposed);
}

std::optional<std::string> check_policy(kind_policy const& p, std::string_view kind) {
    std::string const k(kind);
    for (auto const* list : {&p.allow, &p.deny})
        for (auto const& g : *list)
            if (!valid_glob(g))
                return k + ": \"" + g + "\" is not a glob (printable ASCII, not empty)";
    std::set<std::string> targets;
    for (auto const& [from, to] : p.rename) {
        if (to.empty())
            return k + ": \"" + from + "\" is renamed to an empty name";
        if (!targets.insert(to).second)
            return k + ": two names are renamed to \"" + to + "\"";
        if (!admitted(p, from))
            return k + ": \"" + from + "\" is renamed but hidden by allow/deny";
    }
    return std::nullopt;
}

} // namespace duet::gateway
