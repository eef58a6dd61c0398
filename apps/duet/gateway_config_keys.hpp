// File: apps/duet/gateway_config_keys.hpp (private to gateway_config*.cpp)
//
// The readers of the config file's parts: an upstream under mcpServers (gateway_server_keys.cpp) and a rate,
// which the gateway's rateLimits take too. Each reports what is wrong through the reader, by key path.
#pragma once

#include <duet/gateway/limits.hpp>

#include "config_reader.hpp"
#include "gateway_config.hpp"

#include <optional>
#include <string>

namespace duet::apps::config {

/// {"perSecond": N, "burst": B} at `path`.
[[nodiscard]] std::optional<gateway::rate> read_rate(reader& r, json::value const& v,
                                                     std::string const& path);

/// The upstream `name` at `path` (mcpServers.NAME); `disabled` says whether it was marked so (then nothing
/// of it was read and nullopt is returned).
[[nodiscard]] std::optional<file_upstream> read_server(reader& r, std::string const& name,
                                                       json::value const& v, std::string const& path,
                                                       bool& disabled);

} // namespace duet::apps::config
