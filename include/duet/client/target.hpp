// File: duet/client/target.hpp
//
// Which server a client talks to: a command to spawn and speak to over stdio, or a Streamable HTTP URL.
//
//     server_target t = stdio_target{"duet", {"serve", "--stdio"}};
//     server_target u = http_target{"https://mcp.example/mcp"};
//     describe(t) == "duet serve --stdio"
#pragma once

#include <duet/client/error.hpp>
#include <duet/tls/config.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace duet::client {

/// A server run as a child process; its stdin/stdout carry MCP, its stderr passes through to ours.
struct stdio_target {
    std::string command; ///< looked up on PATH when it has no slash
    std::vector<std::string> args;
};

/// A Streamable HTTP endpoint, `http://` or `https://`.
struct http_target {
    std::string url;
    /// Sent on every request (e.g. {"Authorization", "Bearer ..."}).
    std::vector<std::pair<std::string, std::string>> headers;
    /// What `https://` trusts and presents; not read for `http://`.
    tls::client_config tls;
};

using server_target = std::variant<stdio_target, http_target>;

/// The parts of an `http://` or `https://` URL a request needs.
struct http_url {
    std::string host;         ///< without brackets for IPv6 literals
    std::uint16_t port = 80;  ///< 443 for https when the URL names none
    bool tls = false;         ///< https
    std::string target = "/"; ///< path and query
    /// "host:port" as the Host header wants it (brackets around IPv6 literals).
    [[nodiscard]] std::string authority() const;
};

/// Parses `http[s]://HOST[:PORT][/PATH][?QUERY]`; a usage error names what is wrong.
[[nodiscard]] result<http_url> parse_http_url(std::string_view url);

/// A stable text naming the server, for messages and as the key of remembered era verdicts.
[[nodiscard]] std::string describe(server_target const& target);

} // namespace duet::client
