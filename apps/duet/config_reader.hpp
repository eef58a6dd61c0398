// File: apps/duet/config_reader.hpp
//
// The walk of a JSON config file (gateway_config.cpp): every value read with its key path, every error
// collected as "PATH: what is wrong" rather than stopping at the first, unknown keys refused naming those
// known, secrets read by reference (env:VAR, file:PATH) and paths taken from the file's directory.
#pragma once

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace duet::apps::config {

namespace json = boost::json;
namespace fs = std::filesystem;

// A key as a path shows it: bare when it is a plain word, else quoted in brackets (`mcpServers["a b"]`).
inline std::string member_path(std::string const& parent, std::string_view key) {
    bool const plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '$';
    });
    if (!plain)
        return parent + "[" + json::serialize(json::string(key)) + "]";
    return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

inline std::string element_path(std::string const& parent, std::size_t i) {
    return parent + "[" + std::to_string(i) + "]";
}

inline std::string joined(std::vector<std::string_view> const& words) {
    std::string out;
    for (auto const& w : words) {
        if (!out.empty())
            out += ", ";
        out += w;
    }
    return out;
}

// What one key of an object is read by: its value and its path.
struct key_reader {
    std::string_view key;
    std::function<void(json::value const&, std::string const&)> read;
};

// Walks the file's values, each with its key path, collecting every error ("PATH: what is wrong") instead of
// stopping at the first.
class reader {
public:
    explicit reader(fs::path dir) : dir_(std::move(dir)) {}

    std::vector<std::string> errors;

    void fail(std::string const& path, std::string const& what) {
        errors.push_back(path.empty() ? what : path + ": " + what);
    }

    // Each key of `o` to its reader; a key none reads is an error, naming those there are.
    void walk(json::value const& v, std::string const& path, std::vector<key_reader> const& readers) {
        auto const* o = object(v, path);
        if (!o)
            return;
        for (auto const& kv : *o) {
            auto const p = member_path(path, kv.key());
            auto const it = std::find_if(readers.begin(), readers.end(),
                                         [&](key_reader const& r) { return r.key == kv.key(); });
            if (it != readers.end()) {
                it->read(kv.value(), p);
                continue;
            }
            std::vector<std::string_view> known;
            for (auto const& r : readers)
                known.push_back(r.key);
            fail(p, "unknown key (expected one of: " + joined(known) + ")");
        }
    }

    json::object const* object(json::value const& v, std::string const& path) {
        if (auto const* o = v.if_object())
            return o;
        fail(path, "expected an object");
        return nullptr;
    }

    std::optional<std::string> string(json::value const& v, std::string const& path) {
        if (auto const* s = v.if_string())
            return std::string(*s);
        fail(path, "expected a string");
        return std::nullopt;
    }

    std::optional<std::string> nonempty_string(json::value const& v, std::string const& path) {
        auto s = string(v, path);
        if (s && s->empty()) {
            fail(path, "may not be empty");
            return std::nullopt;
        }
        return s;
    }

    // One of `choices`.
    std::optional<std::string> choice(json::value const& v, std::string const& path,
                                      std::vector<std::string_view> const& choices) {
        auto s = string(v, path);
        if (s && std::find(choices.begin(), choices.end(), *s) == choices.end()) {
            fail(path, json::serialize(v) + " is not one of " + joined(choices));
            return std::nullopt;
        }
        return s;
    }

    std::optional<bool> boolean(json::value const& v, std::string const& path) {
        if (auto const* b = v.if_bool())
            return *b;
        fail(path, "expected true or false");
        return std::nullopt;
    }

    std::optional<double> number(json::value const& v, std::string const& path, double lo, double hi) {
        if (!v.is_number()) {
            fail(path, "expected a number");
            return std::nullopt;
        }
        auto const n = v.to_number<double>();
        if (!(n >= lo && n <= hi)) {
            fail(path, json::serialize(v) + " is out of range (" + shown(lo) + " to " + shown(hi) + ")");
            return std::nullopt;
        }
        return n;
    }

    std::optional<std::uint64_t> whole(json::value const& v, std::string const& path, std::uint64_t lo,
                                       std::uint64_t hi) {
        bool integral = v.is_int64() || v.is_uint64();
        if (auto const* d = v.if_double())
            integral = std::isfinite(*d) && std::floor(*d) == *d;
        if (!integral) {
            fail(path, v.is_number() ? "expected a whole number" : "expected a number");
            return std::nullopt;
        }
        bool const in_range = v.is_int64() ? v.get_int64() >= 0 && std::uint64_t(v.get_int64()) >= lo &&
                                                 std::uint64_t(v.get_int64()) <= hi
                              : v.is_uint64() ? v.get_uint64() >= lo && v.get_uint64() <= hi
                                              : v.get_double() >= double(lo) && v.get_double() <= double(hi);
        if (!in_range) {
            fail(path, json::serialize(v) + " is out of range (" + std::to_string(lo) + " to " +
                           std::to_string(hi) + ")");
            return std::nullopt;
        }
        return v.is_int64()    ? std::uint64_t(v.get_int64())
               : v.is_uint64() ? v.get_uint64()
                               : std::uint64_t(v.get_double());
    }

    std::optional<std::vector<std::string>> strings(json::value const& v, std::string const& path) {
        auto const* a = v.if_array();
        if (!a) {
            fail(path, "expected an array of strings");
            return std::nullopt;
        }
        std::vector<std::string> out;
        bool ok = true;
        for (std::size_t i = 0; i < a->size(); ++i) {
            auto s = string((*a)[i], element_path(path, i));
            ok = ok && s;
            if (s)
                out.push_back(std::move(*s));
        }
        return ok ? std::optional(std::move(out)) : std::nullopt;
    }

    // An object of strings, in the file's order.
    std::optional<std::vector<std::pair<std::string, std::string>>> string_map(json::value const& v,
                                                                               std::string const& path) {
        auto const* o = object(v, path);
        if (!o)
            return std::nullopt;
        std::vector<std::pair<std::string, std::string>> out;
        bool ok = true;
        for (auto const& kv : *o) {
            auto s = string(kv.value(), member_path(path, kv.key()));
            ok = ok && s;
            if (s)
                out.emplace_back(std::string(kv.key()), std::move(*s));
        }
        return ok ? std::optional(std::move(out)) : std::nullopt;
    }

    // `p` taken from the file's directory when relative.
    [[nodiscard]] std::string resolved(std::string const& p) const {
        fs::path const given(p);
        return given.is_absolute() ? p : (dir_ / given).lexically_normal().string();
    }

    // A file's path (from the file's directory), which must be readable now.
    std::optional<std::string> readable_file(json::value const& v, std::string const& path) {
        auto s = nonempty_string(v, path);
        if (!s)
            return std::nullopt;
        auto full = resolved(*s);
        std::ifstream in(full);
        if (!in) {
            fail(path, "cannot read " + full + " (" + std::strerror(errno) + ")");
            return std::nullopt;
        }
        return full;
    }

    // A secret: the literal text, or "env:VAR" (this process's environment), or "file:PATH" (the file's
    // contents, one trailing newline trimmed).
    std::optional<std::string> secret(json::value const& v, std::string const& path) {
        auto s = string(v, path);
        if (!s)
            return std::nullopt;
        if (s->starts_with("env:")) {
            auto const name = s->substr(4);
            char const* value = name.empty() ? nullptr : std::getenv(name.c_str());
            if (!value || !*value) {
                fail(path, "the environment has no " + (name.empty() ? std::string("variable named") : name));
                return std::nullopt;
            }
            return std::string(value);
        }
        if (s->starts_with("file:")) {
            auto const full = resolved(s->substr(5));
            std::ifstream in(full, std::ios::binary);
            if (!in || s->size() == 5) {
                fail(path, "cannot read " + full + " (" + std::strerror(errno) + ")");
                return std::nullopt;
            }
            std::stringstream text;
            text << in.rdbuf();
            auto out = std::move(text).str();
            if (out.ends_with('\n'))
                out.pop_back();
            if (out.ends_with('\r'))
                out.pop_back();
            return out;
        }
        return s;
    }

private:
    static std::string shown(double d) {
        std::ostringstream out;
        out << d;
        return out.str();
    }

    fs::path dir_;
};

} // namespace duet::apps::config
