// File: apps/duet/cmd_auth.hpp
//
// `duet login URL`, `duet logout [URL]` and `duet auth status [URL]`: OAuth credentials for MCP servers, kept
// under $XDG_CONFIG_HOME/duet/ (cli_auth.hpp). Status shows the issuer, the scopes and the expiry, never a
// token.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace duet::apps {

/// Registers the three commands; the returned function runs the chosen one (its exit code), or returns -1
/// when none was chosen.
std::function<int()> add_auth_commands(CLI::App& app);

} // namespace duet::apps
