/// @file duet/client/target.hpp
///
/// Which server a client talks to: a command to spawn and speak to over stdio, or a Streamable HTTP URL.
///
///     server_target t = stdio_target{"duet", {"serve", "--stdio"}};
///     stdio_target quiet{"server", {}, child_environment(std::vector<std::string>{"API_TOKEN"}).value()};
///     server_target u = http_target{"https://mcp.example/mcp"};
///     describe(t) == "duet serve --stdio"
#pragma once

#include <duet/client/error.hpp>
#include <duet/tls/config.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace duet::client {

class http_authorization;

/// A child's environment: NAME and VALUE pairs, in order.
using environment = std::vector<std::pair<std::string, std::string>>;

/// A server run as a child process; its stdin/stdout carry MCP, its stderr passes through to ours (unless
/// client_options::on_server_stderr takes it). It inherits no descriptor but those three.
struct stdio_target {
    std::string command; ///< looked up on PATH when it has no slash
    std::vector<std::string> args;
    /// The child's environment, exactly (child_environment() builds the usual one); none: this process's
    /// whole environment, as a shell would pass it.
    std::optional<environment> env = std::nullopt;
};

/// The variables child_environment() passes on by default: what a program needs to find its home, its user,
/// its programs, its terminal and its language, and none that tends to hold a secret.
[[nodiscard]] std::span<std::string_view const> default_environment_names() noexcept;

/// The environment of a child that gets only what it is given: this process's values of
/// default_environment_names() (those that are set), then each of `extra` in order: "NAME" passes this
/// process's value of NAME (nothing when it is unset), "NAME=VALUE" sets it. A later entry for a name
/// replaces an earlier one. A usage error names an entry with no name.
[[nodiscard]] result<environment> child_environment(std::span<std::string const> extra = {});
/// The same, with the values "this process" has looked up by `lookup` (for tests).
[[nodiscard]] result<environment>
child_environment(std::span<std::string const> extra,
                  std::function<std::optional<std::string>(std::string const& name)> const& lookup);

/// A Streamable HTTP endpoint, `http://` or `https://`.
struct http_target {
    std::string url;
    /// Sent on every request (e.g. {"Authorization", "Bearer ..."}).
    std::vector<std::pair<std::string, std::string>> headers;
    /// What `https://` trusts and presents; not read for `http://`.
    tls::client_config tls;
    /// Gives every request its `Authorization` field and handles the server's 401 and 403 answers
    /// (duet/auth/oauth.hpp); none: the `headers` above are all the client sends.
    std::shared_ptr<http_authorization> authorization;
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
