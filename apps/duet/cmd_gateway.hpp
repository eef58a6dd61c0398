// File: apps/duet/cmd_gateway.hpp
//
// `duet gateway`: one Streamable HTTP endpoint in front of an MCP server of either era, serving clients of
// both eras (include/duet/gateway/upstream_backend.hpp does the work).
//
//     duet gateway --upstream http://127.0.0.1:9000/mcp --port 0          (first stdout line: the URL)
//     duet gateway --upstream 'stdio:npx -y some-server --flag' --era legacy
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace duet::apps {

/// Registers `duet gateway` on `app`. The returned function runs it when it was chosen (its exit code), and
/// returns -1 otherwise.
std::function<int()> add_gateway_command(CLI::App& app);

} // namespace duet::apps
