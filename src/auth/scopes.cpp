#include <duet/auth/scopes.hpp>

#include <algorithm>

namespace duet::auth {

namespace {

void add_unique(std::vector<std::string>& out, std::string_view scope) {
    if (!scope.empty() && std::find(out.begin(), out.end(), scope) == out.end())
        out.emplace_back(scope);
}

} // namespace

std::vector<std::string> split_scopes(std::string_view text) {
    std::vector<std::string> out;
    while (!text.empty()) {
        auto const space = text.find(' ');
        add_unique(out, text.substr(0, space));
        if (space == std::string_view::npos)
            break;
        text.remove_prefix(space + 1);
    }
    return out;
}

std::string join_scopes(std::span<std::string const> scopes) {
    std::string out;
    for (auto const& s : scopes) {
        if (!out.empty())
            out += ' ';
        out += s;
    }
    return out;
}

std::optional<std::vector<std::string>>
select_scopes(std::optional<std::string_view> challenged,
              std::optional<std::vector<std::string>> const& resource_scopes_supported) {
    if (challenged)
        return split_scopes(*challenged);
    if (resource_scopes_supported) {
        std::vector<std::string> out;
        for (auto const& s : *resource_scopes_supported)
            add_unique(out, s);
        return out;
    }
    return std::nullopt;
}

std::vector<std::string> step_up_scopes(std::span<std::string const> held, std::string_view challenged) {
    std::vector<std::string> out;
    for (auto const& s : held)
        add_unique(out, s);
    for (auto const& s : split_scopes(challenged))
        add_unique(out, s);
    return out;
}

bool covers(std::span<std::string const> scopes, std::span<std::string const> wanted) {
    return std::all_of(wanted.begin(), wanted.end(), [&](auto const& w) {
        return std::find(scopes.begin(), scopes.end(), w) != scopes.end();
    });
}

} // namespace duet::auth
