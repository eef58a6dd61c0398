// What duet gateway's runtime says of itself, shared by its start (gateway_runtime.cpp) and its reloads
// (gateway_reload.cpp): to stderr through duet::log, never to stdout.
#pragma once

#include <duet/client/error.hpp>
#include <duet/client/target.hpp>
#include <duet/gateway/upstream_backend.hpp>
#include <duet/log/log.hpp>

#include "gateway_config.hpp"

#include <string>
#include <variant>

namespace duet::apps::gateway_notes {

// What the gateway says of itself: how it runs at info, what it refuses and cannot do as an error.
inline void say(std::string const& line, log::level severity = log::level::info) {
    log::write({.severity = severity, .component = "duet gateway", .name = "gateway", .message = line});
}

inline void fail(std::string const& line) {
    say(line, log::level::error);
}

inline std::string era_of(gateway::upstream_backend const& b) {
    return std::string(b.era() == protocol::era::modern ? "modern " : "legacy ") +
           std::string(protocol::to_string(b.version()));
}

// Why the upstream could not be reached, with the hint a person needs when it wants a login.
inline std::string unreachable(upstream_entry const& u, client::error const& e) {
    auto const* http = std::get_if<client::http_target>(&u.target);
    auto const hint =
        e.code == client::errc::auth_required && http
            ? " (run `duet login " + http->url + "` first, or give --upstream-client-id or --upstream-header)"
            : std::string();
    return "cannot reach the upstream " + (u.name.empty() ? std::string() : u.name + " = ") +
           client::describe(u.target) + ": " + e.to_string() + hint;
}

} // namespace duet::apps::gateway_notes
