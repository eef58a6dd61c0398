#include <duet/server/uri_template.hpp>

namespace duet::server {

namespace {

struct piece {
    bool variable = false;
    bool reserved = false; // {+var}
    std::string text;      // literal text, or the variable name
};

std::optional<std::vector<piece>> split(std::string_view t) {
    std::vector<piece> out;
    std::size_t i = 0;
    while (i < t.size()) {
        auto const open = t.find('{', i);
        if (open == std::string_view::npos) {
            out.push_back({false, false, std::string(t.substr(i))});
            break;
        }
        if (open > i)
            out.push_back({false, false, std::string(t.substr(i, open - i))});
        auto const close = t.find('}', open);
        if (close == std::string_view::npos)
            return std::nullopt;
        std::string_view name = t.substr(open + 1, close - open - 1);
        bool reserved = false;
        if (!name.empty() && name.front() == '+') {
            reserved = true;
            name.remove_prefix(1);
        }
        if (name.empty())
            return std::nullopt;
        out.push_back({true, reserved, std::string(name)});
        i = close + 1;
    }
    return out;
}

bool match_from(std::vector<piece> const& pieces, std::size_t p, std::string_view uri, std::size_t u,
                std::map<std::string, std::string>& vars) {
    if (p == pieces.size())
        return u == uri.size();
    auto const& pc = pieces[p];
    if (!pc.variable) {
        if (uri.substr(u, pc.text.size()) != pc.text)
            return false;
        return match_from(pieces, p + 1, uri, u + pc.text.size(), vars);
    }
    // Try the longest value first so a trailing variable takes the rest.
    std::size_t end = u;
    while (end < uri.size()) {
        char const c = uri[end];
        if (!pc.reserved && (c == '/' || c == '?' || c == '#' || c == ','))
            break;
        ++end;
    }
    for (std::size_t e = end; e > u; --e) {
        vars[pc.text] = std::string(uri.substr(u, e - u));
        if (match_from(pieces, p + 1, uri, e, vars))
            return true;
    }
    vars.erase(pc.text);
    return false;
}

} // namespace

std::optional<std::map<std::string, std::string>> match_uri_template(std::string_view uri_template,
                                                                     std::string_view uri) {
    auto pieces = split(uri_template);
    if (!pieces)
        return std::nullopt;
    std::map<std::string, std::string> vars;
    if (!match_from(*pieces, 0, uri, 0, vars))
        return std::nullopt;
    return vars;
}

std::vector<std::string> uri_template_variables(std::string_view uri_template) {
    std::vector<std::string> names;
    if (auto pieces = split(uri_template))
        for (auto const& p : *pieces)
            if (p.variable)
                names.push_back(p.text);
    return names;
}

} // namespace duet::server
