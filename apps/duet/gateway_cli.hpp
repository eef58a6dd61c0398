// File: apps/duet/gateway_cli.hpp
//
// What `duet gateway` is told, by its flags and by its config file (gateway_config.hpp), and what it makes of
// the upstreams: one upstream_entry each, whether the flags or the file gave it, its TLS, environment,
// headers and credentials applied. cmd_gateway.cpp registers the flags and serves the entries.
#pragma once

#include <duet/client/connect_mode.hpp>
#include <duet/client/target.hpp>
#include <duet/gateway/exposure.hpp>
#include <duet/gateway/limits.hpp>
#include <duet/transport/http_server.hpp>

#include "common/auth_flags.hpp"
#include "common/listener_flags.hpp"
#include "common/log_flags.hpp"
#include "common/metrics_flags.hpp"
#include "common/store_flags.hpp"
#include "common/tls_flags.hpp"
#include "upstream_auth.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace duet::apps {

/// One upstream the gateway serves, ready to be made into a backend.
struct upstream_entry {
    std::string name;                         ///< empty: the one unnamed upstream (flags only)
    client::server_target target;             ///< with TLS, environment, headers and credentials applied
    std::optional<client::connect_mode> mode; ///< its own era; none: the gateway-wide --era
    gateway::exposure_policy exposure;        ///< what of it clients see (the file's filters)
    std::size_t max_concurrent_calls = 0;     ///< calls forwarded at once; 0: no bound
    gateway::breaker_options breaker;         ///< when it is marked down after failing
    bool required = true;                     ///< counted by /readyz
    /// What makes it this upstream (its target with the secrets read, its era, its own credentials): a
    /// reload restarts an upstream whose identity changed, and only changes the policy and limits of one
    /// whose identity stayed.
    std::string identity;
};

struct gateway_cli {
    /// Where a config file was given: --config FILE serves it, --check-config FILE only checks it.
    std::string config_file;
    std::string check_config_file;
    /// The flags given on the command line ("--port"), which win over the file's keys.
    std::set<std::string> given;

    std::vector<std::string> upstreams;
    std::string era = "auto";
    bool lenient_args = false;
    std::size_t pool_size = 4;
    bool share_sessions = false;
    bool busy_batching = true;
    transport::http_options http;
    metrics_flags metrics;
    log_flags logging;
    tls_server_flags listener_tls;
    listener_flags listener;
    /// The config file's bearerToken, read already; a --bearer-token(-file) flag wins over it, and it over
    /// DUET_BEARER_TOKEN.
    std::optional<std::string> bearer_token;
    auth_flags front_door; ///< the tokens callers of the gateway need
    /// What https upstreams trust and present, each "[NAME=]VALUE": unnamed for every upstream, named for
    /// one.
    std::vector<std::string> cacert, client_cert, client_key;
    bool insecure = false;                 ///< every https upstream
    std::vector<std::string> insecure_for; ///< names
    /// What stdio upstreams' children get besides the default environment: NAME or NAME=VALUE.
    std::vector<std::string> upstream_env;
    std::size_t max_upstream_message = 16 * 1024 * 1024;
    double upstream_timeout_seconds = 60;
    double task_after_seconds = 0; ///< 0: calls become tasks only where the upstream makes them
    std::size_t max_parked_calls = 256;
    std::size_t max_upstream_children = 64;
    std::string over_children = "share";
    upstream_auth_flags upstream_auth;
    store_flags store; ///< several gateway processes behind one load balancer

    /// Every upstream served merged at the path, each one's names prefixed NAME<name_separator>.
    bool merge = false;
    std::string name_separator = "__";
    /// Calls one caller may make; none: no bound.
    std::optional<gateway::rate> rate_per_caller;
    /// Calls of one tool (the name clients see), from all callers together.
    std::map<std::string, gateway::rate> rate_per_tool;
};

} // namespace duet::apps
