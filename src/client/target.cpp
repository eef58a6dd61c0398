#include <duet/client/connect_mode.hpp>
#include <duet/client/error.hpp>
#include <duet/client/target.hpp>

#include <boost/throw_exception.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <stdexcept>

namespace duet::client {

// ---- error.hpp
// ---------------------------------------------------------------------------------------------

std::string_view to_string(errc e) noexcept {
    switch (e) {
    case errc::usage:
        return "usage";
    case errc::spawn_failed:
        return "spawn_failed";
    case errc::connect_failed:
        return "connect_failed";
    case errc::tls_failed:
        return "tls_failed";
    case errc::closed:
        return "closed";
    case errc::http_status:
        return "http_status";
    case errc::auth_required:
        return "auth_required";
    case errc::session_expired:
        return "session_expired";
    case errc::timeout:
        return "timeout";
    case errc::cancelled:
        return "cancelled";
    case errc::rpc_error:
        return "rpc_error";
    case errc::protocol_violation:
        return "protocol_violation";
    case errc::version_rejected:
        return "version_rejected";
    case errc::too_large:
        return "too_large";
    }
    return "unknown";
}

std::string error::to_string() const {
    std::string s(client::to_string(code));
    if (rpc)
        s += " " + std::to_string(rpc->code);
    if (http_status)
        s += " (HTTP " + std::to_string(http_status) + ")";
    s += ": " + message;
    return s;
}

void throw_exception_from_error(error const& e, boost::source_location const& loc) {
    boost::throw_exception(std::runtime_error(e.to_string()), loc);
}

error make_error(errc code, std::string message, unsigned http_status) {
    return error{code, std::move(message), std::nullopt, http_status};
}

error rpc_failure(jsonrpc::error_object e, unsigned http_status) {
    auto message = e.message;
    return error{errc::rpc_error, std::move(message), std::move(e), http_status};
}

// ---- connect_mode.hpp
// --------------------------------------------------------------------------------------

std::string_view to_string(connect_mode m) noexcept {
    switch (m) {
    case connect_mode::legacy:
        return "legacy";
    case connect_mode::modern:
        return "modern";
    case connect_mode::auto_detect:
        return "auto";
    }
    return "auto";
}

std::optional<connect_mode> parse_connect_mode(std::string_view s) noexcept {
    if (s == "legacy")
        return connect_mode::legacy;
    if (s == "modern")
        return connect_mode::modern;
    if (s == "auto")
        return connect_mode::auto_detect;
    return std::nullopt;
}

std::optional<era_verdict> verdict_cache::find(std::string const& server) const {
    std::lock_guard lock(mutex_);
    auto const it = verdicts_.find(server);
    if (it == verdicts_.end())
        return std::nullopt;
    return it->second;
}

void verdict_cache::remember(std::string const& server, era_verdict v) {
    std::lock_guard lock(mutex_);
    verdicts_[server] = v;
}

void verdict_cache::forget(std::string const& server) {
    std::lock_guard lock(mutex_);
    verdicts_.erase(server);
}

verdict_cache& default_verdict_cache() {
    static verdict_cache cache;
    return cache;
}

// ---- target.hpp
// --------------------------------------------------------------------------------------------

std::string http_url::authority() const {
    auto const h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    return h + ":" + std::to_string(port);
}

result<http_url> parse_http_url(std::string_view url) {
    http_url out;
    std::string_view rest;
    if (url.starts_with("http://")) {
        rest = url.substr(7);
    } else if (url.starts_with("https://")) {
        rest = url.substr(8);
        out.tls = true;
        out.port = 443;
    } else {
        return make_error(errc::usage, "not an http:// or https:// URL: " + std::string(url));
    }
    auto const end = rest.find_first_of("/?#");
    auto authority = rest.substr(0, end);
    if (end != std::string_view::npos) {
        auto t = rest.substr(end);
        if (auto const hash = t.find('#'); hash != std::string_view::npos)
            t = t.substr(0, hash);
        out.target = t.starts_with('?') ? "/" + std::string(t) : std::string(t);
        if (out.target.empty())
            out.target = "/";
    }
    if (authority.find('@') != std::string_view::npos)
        return make_error(errc::usage, "credentials in the URL are not supported: " + std::string(url));
    std::string_view port_text;
    if (authority.starts_with('[')) {
        auto const close = authority.find(']');
        if (close == std::string_view::npos)
            return make_error(errc::usage, "unterminated IPv6 address in " + std::string(url));
        out.host = std::string(authority.substr(1, close - 1));
        auto const after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':')
                return make_error(errc::usage, "bad authority in " + std::string(url));
            port_text = after.substr(1);
        }
    } else {
        auto const colon = authority.rfind(':');
        out.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos)
            port_text = authority.substr(colon + 1);
    }
    if (out.host.empty())
        return make_error(errc::usage, "no host in " + std::string(url));
    if (!port_text.empty()) {
        unsigned port = 0;
        auto const r = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
        if (r.ec != std::errc{} || r.ptr != port_text.data() + port_text.size() || port == 0 || port > 65535)
            return make_error(errc::usage, "bad port in " + std::string(url));
        out.port = static_cast<std::uint16_t>(port);
    }
    return out;
}

namespace {

constexpr std::array<std::string_view, 7> default_names{"HOME", "LOGNAME", "PATH", "SHELL",
                                                        "TERM", "USER",    "LANG"};

// Sets NAME to VALUE, replacing an earlier entry for NAME in place.
void put(environment& env, std::string name, std::string value) {
    auto const same = [&](auto const& kv) {
        return kv.first == name;
    };
    if (auto it = std::find_if(env.begin(), env.end(), same); it != env.end())
        it->second = std::move(value);
    else
        env.emplace_back(std::move(name), std::move(value));
}

} // namespace

std::span<std::string_view const> default_environment_names() noexcept {
    return default_names;
}

result<environment> child_environment(std::span<std::string const> extra) {
    return child_environment(extra, [](std::string const& name) -> std::optional<std::string> {
        if (char const* v = std::getenv(name.c_str()))
            return std::string(v);
        return std::nullopt;
    });
}

result<environment>
child_environment(std::span<std::string const> extra,
                  std::function<std::optional<std::string>(std::string const& name)> const& lookup) {
    environment env;
    for (auto const name : default_names)
        if (auto value = lookup(std::string(name)))
            put(env, std::string(name), std::move(*value));
    for (auto const& entry : extra) {
        auto const eq = entry.find('=');
        auto name = entry.substr(0, eq);
        if (name.empty())
            return make_error(errc::usage,
                              "\"" + entry + "\" names no environment variable (NAME or NAME=VALUE)");
        if (eq != std::string::npos) {
            put(env, std::move(name), entry.substr(eq + 1));
        } else if (auto value = lookup(name)) {
            put(env, std::move(name), std::move(*value));
        } else {
            // Passing an unset variable passes nothing, and no stale value a default left behind either.
            std::erase_if(env, [&](auto const& kv) { return kv.first == name; });
        }
    }
    return env;
}

std::string describe(server_target const& target) {
    if (auto const* h = std::get_if<http_target>(&target))
        return h->url;
    auto const& s = std::get<stdio_target>(target);
    std::string out = s.command;
    for (auto const& a : s.args)
        out += " " + a;
    return out;
}

} // namespace duet::client
