#include <duet/protocol/header_codec.hpp>
#include <duet/protocol/param_headers.hpp>

#include <boost/throw_exception.hpp>

#include <stdexcept>
#include <string_view>

namespace duet::protocol {

namespace {

constexpr std::string_view annotation = "x-mcp-header";

// RFC 9110 tchar.
bool is_token(std::string_view s) noexcept {
    if (s.empty())
        return false;
    for (unsigned char c : s) {
        bool const alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (!alnum && std::string_view("!#$%&'*+-.^_`|~").find(char(c)) == std::string_view::npos)
            return false;
    }
    return true;
}

std::string where(std::vector<std::string> const& path) {
    std::string s = "arguments";
    for (auto const& p : path) {
        s += '.';
        s += p;
    }
    return s;
}

// Annotations anywhere other than a `properties` chain are unreachable and therefore invalid.
bool contains_annotation(boost::json::value const& v) {
    if (auto const* o = v.if_object()) {
        if (o->contains(annotation))
            return true;
        for (auto const& kv : *o)
            if (contains_annotation(kv.value()))
                return true;
    } else if (auto const* a = v.if_array()) {
        for (auto const& e : *a)
            if (contains_annotation(e))
                return true;
    }
    return false;
}

using error = param_header_error;

boost::system::result<void, error> walk(boost::json::object const& schema, std::vector<std::string>& path,
                                        std::vector<param_header>& out) {
    for (auto const& kv : schema) {
        if (kv.key() == "properties" && kv.value().is_object())
            continue; // walked below; any other "properties" value holds nothing reachable
        if (kv.key() == annotation && !path.empty())
            continue; // checked by the caller, which knows the property's type
        if (contains_annotation(kv.value()))
            return error{"x-mcp-header under \"" + std::string(kv.key()) + "\" at " + where(path) +
                         " is not reachable through properties alone"};
    }
    auto const* props = schema.if_contains("properties");
    if (!props)
        return {};
    auto const* po = props->if_object();
    if (!po)
        return {};
    for (auto const& kv : *po) {
        auto const* child = kv.value().if_object();
        if (!child) {
            if (contains_annotation(kv.value()))
                return error{"x-mcp-header in the non-schema property \"" + std::string(kv.key()) + "\" at " +
                             where(path) + " is not reachable through properties alone"};
            continue;
        }
        path.emplace_back(kv.key());
        if (auto const* h = child->if_contains(annotation)) {
            if (!h->is_string() || !is_token(h->get_string()))
                return error{"x-mcp-header at " + where(path) + " must be a non-empty HTTP token"};
            auto const* type = child->if_contains("type");
            std::string_view const t = type && type->is_string() ? std::string_view(type->get_string()) : "";
            param_type pt;
            if (t == "string")
                pt = param_type::string;
            else if (t == "integer")
                pt = param_type::integer;
            else if (t == "boolean")
                pt = param_type::boolean;
            else
                return error{"x-mcp-header at " + where(path) +
                             " is only allowed on a string, integer or boolean property"};
            std::string name(h->get_string());
            for (auto const& existing : out)
                if (iequals(existing.header, name))
                    return error{"x-mcp-header \"" + name + "\" is declared twice (names ignore case)"};
            out.push_back(param_header{std::move(name), path, pt});
        }
        if (auto r = walk(*child, path, out); !r)
            return r;
        path.pop_back();
    }
    return {};
}

} // namespace

void throw_exception_from_error(param_header_error const& e, boost::source_location const& loc) {
    boost::throw_exception(std::invalid_argument(e.message), loc);
}

boost::system::result<std::vector<param_header>, param_header_error>
collect_param_headers(boost::json::object const& input_schema) {
    if (input_schema.contains(annotation))
        return error{"x-mcp-header on the root of inputSchema annotates no argument"};
    std::vector<param_header> out;
    std::vector<std::string> path;
    if (auto r = walk(input_schema, path, out); !r)
        return r.error();
    return out;
}

} // namespace duet::protocol
