/// @file duet/protocol/schema/describe.hpp
///
/// C++ types as JSON Schema, and JSON to and from those types: the machinery behind typed tools. The one
/// place Boost.Describe is used, so C++26 reflection can replace it later without touching callers.
///
///     struct forecast_args {
///         std::string state;                 // required
///         std::optional<double> latitude;    // optional: left out of "required"
///     };
///     BOOST_DESCRIBE_STRUCT(forecast_args, (), (state, latitude))
///
///     schema_of<forecast_args>()
///       -> {"type":"object","properties":{"state":{"type":"string"},"latitude":{"type":"number"}},
///           "required":["state"]}
///     decode<forecast_args>(json)   // result<forecast_args, decode_error>, never throws on bad input
///     encode(value)                  // boost::json::value
///
/// Supported: bool, integers, floating point, std::string, std::optional<T>, std::vector<T>,
/// std::map<std::string, T>, described structs, described enums (as string enums), and boost::json::value
/// (any JSON). Anything else fails to compile.
#pragma once

#include <boost/describe/enum.hpp>
#include <boost/describe/enumerators.hpp>
#include <boost/describe/members.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/system/result.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace duet::schema {

/// Why a JSON value is not a T. `path` locates the offending value ("state", "items[2].name"); empty for the
/// root.
struct decode_error {
    std::string path;
    std::string message;

    /// "path: message", or the message alone at the root.
    [[nodiscard]] std::string to_string() const { return path.empty() ? message : path + ": " + message; }
};

[[noreturn]] void throw_exception_from_error(decode_error const& e, boost::source_location const& loc);

namespace detail {

template<class T>
struct is_optional : std::false_type {};
template<class T>
struct is_optional<std::optional<T>> : std::true_type {};

template<class T>
struct is_vector : std::false_type {};
template<class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};

template<class T>
struct is_string_map : std::false_type {};
template<class T, class C, class A>
struct is_string_map<std::map<std::string, T, C, A>> : std::true_type {};

template<class T>
constexpr bool is_described_struct =
    boost::describe::has_describe_members<T>::value&& std::is_class_v<T> && !std::is_union_v<T>;

template<class T>
constexpr bool is_described_enum = boost::describe::has_describe_enumerators<T>::value;

template<class T>
constexpr bool is_integer = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template<class T>
constexpr bool always_false = false;

template<class T>
using members = boost::describe::describe_members<T, boost::describe::mod_public>;

inline std::string join(std::string const& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
}

} // namespace detail

/// The JSON Schema (2020-12) of T.
template<class T>
[[nodiscard]] boost::json::object schema_of() {
    using namespace detail;
    if constexpr (std::is_same_v<T, bool>) {
        return {{"type", "boolean"}};
    } else if constexpr (is_integer<T>) {
        return {{"type", "integer"}};
    } else if constexpr (std::is_floating_point_v<T>) {
        return {{"type", "number"}};
    } else if constexpr (std::is_same_v<T, std::string>) {
        return {{"type", "string"}};
    } else if constexpr (std::is_same_v<T, boost::json::value>) {
        return {};
    } else if constexpr (is_optional<T>::value) {
        return schema_of<typename T::value_type>();
    } else if constexpr (is_vector<T>::value) {
        return {{"type", "array"}, {"items", schema_of<typename T::value_type>()}};
    } else if constexpr (is_string_map<T>::value) {
        return {{"type", "object"}, {"additionalProperties", schema_of<typename T::mapped_type>()}};
    } else if constexpr (is_described_enum<T>) {
        boost::json::array names;
        boost::mp11::mp_for_each<boost::describe::describe_enumerators<T>>(
            [&](auto e) { names.emplace_back(e.name); });
        return {{"type", "string"}, {"enum", std::move(names)}};
    } else if constexpr (is_described_struct<T>) {
        boost::json::object properties;
        boost::json::array required;
        boost::mp11::mp_for_each<members<T>>([&](auto m) {
            using member = std::remove_cvref_t<decltype(std::declval<T&>().*m.pointer)>;
            properties[m.name] = schema_of<member>();
            if constexpr (!is_optional<member>::value)
                required.emplace_back(m.name);
        });
        boost::json::object s{{"type", "object"}, {"properties", std::move(properties)}};
        if (!required.empty())
            s["required"] = std::move(required);
        return s;
    } else {
        static_assert(always_false<T>,
                      "duet::schema: this type has no JSON Schema mapping; use a supported type "
                      "or describe it with BOOST_DESCRIBE_STRUCT / BOOST_DESCRIBE_ENUM");
    }
}

/// Reads a T from JSON. Never throws on bad input; unknown object members are ignored.
template<class T>
[[nodiscard]] boost::system::result<T, decode_error> decode(boost::json::value const& v,
                                                            std::string const& path = {}) {
    using namespace detail;
    auto fail = [&](std::string message) {
        return decode_error{path, std::move(message)};
    };
    if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_bool())
            return fail("expected a boolean");
        return v.get_bool();
    } else if constexpr (is_integer<T>) {
        if (v.is_int64()) {
            auto const n = v.get_int64();
            if (std::in_range<T>(n))
                return static_cast<T>(n);
        } else if (v.is_uint64()) {
            auto const n = v.get_uint64();
            if (std::in_range<T>(n))
                return static_cast<T>(n);
        } else if (v.is_double()) {
            double const d = v.get_double();
            if (std::isfinite(d) && std::trunc(d) == d && d >= double(std::numeric_limits<T>::min()) &&
                d <= double(std::numeric_limits<T>::max()))
                return static_cast<T>(d);
            return fail("expected an integer");
        } else {
            return fail("expected an integer");
        }
        return fail("integer out of range");
    } else if constexpr (std::is_floating_point_v<T>) {
        if (!v.is_number())
            return fail("expected a number");
        return static_cast<T>(v.to_number<double>());
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (!v.is_string())
            return fail("expected a string");
        // In place: decode_error is an aggregate of strings, so a std::string converts to either alternative.
        return boost::system::result<T, decode_error>(boost::system::in_place_value, v.get_string());
    } else if constexpr (std::is_same_v<T, boost::json::value>) {
        return v;
    } else if constexpr (is_optional<T>::value) {
        if (v.is_null())
            return T{};
        auto inner = decode<typename T::value_type>(v, path);
        if (!inner)
            return inner.error();
        return T{std::move(*inner)};
    } else if constexpr (is_vector<T>::value) {
        auto const* a = v.if_array();
        if (!a)
            return fail("expected an array");
        T out;
        out.reserve(a->size());
        for (std::size_t i = 0; i < a->size(); ++i) {
            auto e = decode<typename T::value_type>((*a)[i], path + "[" + std::to_string(i) + "]");
            if (!e)
                return e.error();
            out.push_back(std::move(*e));
        }
        return out;
    } else if constexpr (is_string_map<T>::value) {
        auto const* o = v.if_object();
        if (!o)
            return fail("expected an object");
        T out;
        for (auto const& kv : *o) {
            auto e = decode<typename T::mapped_type>(kv.value(), join(path, kv.key()));
            if (!e)
                return e.error();
            out.emplace(std::string(kv.key()), std::move(*e));
        }
        return out;
    } else if constexpr (is_described_enum<T>) {
        if (!v.is_string())
            return fail("expected a string");
        std::optional<T> found;
        boost::mp11::mp_for_each<boost::describe::describe_enumerators<T>>([&](auto e) {
            if (v.get_string() == e.name)
                found = e.value;
        });
        if (!found)
            return fail("\"" + std::string(v.get_string()) + "\" is not one of the allowed values");
        return *found;
    } else if constexpr (is_described_struct<T>) {
        auto const* o = v.if_object();
        if (!o)
            return fail("expected an object");
        T out{};
        std::optional<decode_error> error;
        boost::mp11::mp_for_each<members<T>>([&](auto m) {
            if (error)
                return;
            using member = std::remove_cvref_t<decltype(out.*m.pointer)>;
            auto const* field = o->if_contains(m.name);
            if (!field) {
                if constexpr (!is_optional<member>::value)
                    error = decode_error{join(path, m.name), "is required"};
                return;
            }
            auto decoded = decode<member>(*field, join(path, m.name));
            if (!decoded)
                error = decoded.error();
            else
                out.*m.pointer = std::move(*decoded);
        });
        if (error)
            return *error;
        return out;
    } else {
        static_assert(always_false<T>, "duet::schema: this type cannot be decoded from JSON");
    }
}

/// Writes a T as JSON. Empty optionals are left out of objects.
template<class T>
[[nodiscard]] boost::json::value encode(T const& value) {
    using namespace detail;
    if constexpr (std::is_same_v<T, bool> || is_integer<T> || std::is_floating_point_v<T> ||
                  std::is_same_v<T, std::string> || std::is_same_v<T, boost::json::value>) {
        return boost::json::value(value);
    } else if constexpr (is_optional<T>::value) {
        return value ? encode(*value) : boost::json::value(nullptr);
    } else if constexpr (is_vector<T>::value) {
        boost::json::array a;
        a.reserve(value.size());
        for (auto const& e : value)
            a.push_back(encode(e));
        return a;
    } else if constexpr (is_string_map<T>::value) {
        boost::json::object o;
        for (auto const& [k, e] : value)
            o[k] = encode(e);
        return o;
    } else if constexpr (is_described_enum<T>) {
        char const* name = "";
        boost::mp11::mp_for_each<boost::describe::describe_enumerators<T>>([&](auto e) {
            if (value == e.value)
                name = e.name;
        });
        return boost::json::value(name);
    } else if constexpr (is_described_struct<T>) {
        boost::json::object o;
        boost::mp11::mp_for_each<members<T>>([&](auto m) {
            using member = std::remove_cvref_t<decltype(value.*m.pointer)>;
            if constexpr (is_optional<member>::value) {
                if (!(value.*m.pointer))
                    return;
            }
            o[m.name] = encode(value.*m.pointer);
        });
        return o;
    } else {
        static_assert(always_false<T>, "duet::schema: this type cannot be encoded as JSON");
    }
}

} // namespace duet::schema
