// File: apps/duet/gateway_config.hpp
//
// `duet gateway --config FILE`: the gateway told by a JSON file in the mcpServers shape MCP hosts already use
// (Claude Desktop's, Cursor's), so a user points it at the file they have; Duet's own keys sit beside, under
// "gateway", one per flag. Flags win over the file; an --upstream NAME=SPEC adds an upstream, or replaces the
// file's of that name.
//
//     {
//       "mcpServers": {
//         "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"],
//                   "env": {"API_TOKEN": "env:FILES_TOKEN"}},
//         "search": {"url": "https://search.example/mcp", "headers": {"Authorization": "file:search.token"},
//                    "tools": {"deny": ["delete_*"]}}
//       },
//       "gateway": {"port": 8750, "bearerToken": "env:GATEWAY_TOKEN", "rateLimits": {"perCaller":
//       {"perSecond": 10}}}
//     }
//
// Every error names its key path and what is wrong ("mcpServers.files.args[2]: expected a string"); an
// unknown key is an error. Secrets (env, headers, bearerToken, clientSecret, ...) are literal, or "env:VAR"
// (the gateway's environment) or "file:PATH" (the file's contents, one trailing newline trimmed). Relative
// paths (file: secrets, TLS files, a command holding a '/') are taken from the config file's directory.
//
//     auto config = load_gateway_config(cli.config_file, cli);   // or an error's text, one line per error
//     auto upstreams = gateway_upstreams(*config, executor);     // what the gateway serves
#pragma once

#include "gateway_cli.hpp"
#include "upstream_auth.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/system/result.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::apps {

/// An upstream the file gives, before the flags and the gateway's executor have their say.
struct file_upstream {
    upstream_entry entry; ///< its target with its own TLS and headers (their secrets read)
    /// Its children's own variables, NAME=VALUE (secrets read), set after the gateway's upstreamEnv.
    std::vector<std::string> env;
    std::optional<upstream_oauth> oauth; ///< made into a provider by gateway_upstreams()
};

struct gateway_config {
    gateway_cli cli;                      ///< the flags over the file's gateway keys
    std::vector<file_upstream> upstreams; ///< the file's, but for those disabled, in its order
    std::vector<std::string> disabled;    ///< the names of the file's upstreams marked "disabled": true
};

/// Reads the config file at `path` under the flags `flags` (flags.given: those on the command line, whose
/// values win). An empty `path`: the flags alone. An error's text names the file and each key path, one line
/// per error. Reads the environment and the files secrets name; starts nothing, so it may be called again
/// (a reload).
[[nodiscard]] boost::system::result<gateway_config, std::string>
load_gateway_config(std::string const& path, gateway_cli const& flags);

/// Every upstream the gateway serves, in order: the file's, then each --upstream (one named as a file's
/// replaces it in place), with their environment and the flags' TLS and credentials applied, OAuth providers
/// made on `ex` (which need not run until the gateway serves). A usage error's text when there is no
/// upstream, an unnamed one among several, or a flag that names no upstream.
[[nodiscard]] boost::system::result<std::vector<upstream_entry>, std::string>
gateway_upstreams(gateway_config const& config, boost::asio::any_io_executor ex);

/// An upstream's name: letters, digits, '-', '_' and '.'.
[[nodiscard]] bool valid_upstream_name(std::string_view name) noexcept;

/// A separator of merged names: 1 to 4 of letters, digits, '_', '-' and '.'.
[[nodiscard]] bool valid_name_separator(std::string_view separator) noexcept;

/// "PER_SECOND[/BURST]" (--rate-limit): PER_SECOND above 0 (at most 1e6), BURST at least 1 (default
/// max(1, PER_SECOND)); nothing for anything else.
[[nodiscard]] std::optional<gateway::rate> parse_rate(std::string_view text) noexcept;

/// The endpoint path of the upstream `name` under the gateway's `path` (`path` itself for the unnamed one).
[[nodiscard]] std::string upstream_path(std::string const& path, std::string const& name);

} // namespace duet::apps
