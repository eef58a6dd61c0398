#include <duet/server/argument_check.hpp>

#include <algorithm>
#include <cmath>
#include <string_view>

namespace duet::server {

argument_check::argument_check(boost::json::object const& schema) {
    if (auto const* req = schema.if_contains("required"); req && req->is_array())
        for (auto const& r : req->get_array())
            if (r.is_string())
                required_.emplace_back(r.get_string());
    auto const* props = schema.if_contains("properties");
    if (!props || !props->is_object())
        return;
    for (auto const& kv : props->get_object()) {
        auto const* prop = kv.value().if_object();
        auto const* type = prop ? prop->if_contains("type") : nullptr;
        if (!type || !type->is_string())
            continue;
        std::string_view const t = type->get_string();
        kind const k = t == "string"    ? kind::string
                       : t == "boolean" ? kind::boolean
                       : t == "number"  ? kind::number
                       : t == "integer" ? kind::integer
                       : t == "object"  ? kind::object
                       : t == "array"   ? kind::array
                       : t == "null"    ? kind::null
                                        : kind::other;
        typed_.push_back({std::string(kv.key()), std::string(t), k});
    }
    std::sort(typed_.begin(), typed_.end(), [](auto const& a, auto const& b) { return a.name < b.name; });
}

std::optional<std::string> argument_check::problem(boost::json::object const& args) const {
    for (auto const& r : required_)
        if (!args.contains(r))
            return "missing required argument \"" + r + "\"";
    if (typed_.empty())
        return std::nullopt;
    for (auto const& kv : args) {
        std::string_view const key = kv.key();
        auto it = std::lower_bound(typed_.begin(), typed_.end(), key,
                                   [](typed_property const& p, std::string_view k) { return p.name < k; });
        if (it == typed_.end() || it->name != key)
            continue;
        auto const& v = kv.value();
        bool ok = false;
        switch (it->k) {
        case kind::string:
            ok = v.is_string();
            break;
        case kind::boolean:
            ok = v.is_bool();
            break;
        case kind::number:
            ok = v.is_number();
            break;
        case kind::integer:
            // A double with no fractional part is an integer (JSON Schema), however large: std::trunc, not a
            // cast to an integer type, which is undefined beyond its range (1e300).
            ok = v.is_int64() || v.is_uint64() ||
                 (v.is_double() && std::trunc(v.get_double()) == v.get_double());
            break;
        case kind::object:
            ok = v.is_object();
            break;
        case kind::array:
            ok = v.is_array();
            break;
        case kind::null:
            ok = v.is_null();
            break;
        case kind::other:
            break;
        }
        if (!ok)
            return "argument \"" + std::string(key) + "\" must be of type " + it->type;
    }
    return std::nullopt;
}

} // namespace duet::server
