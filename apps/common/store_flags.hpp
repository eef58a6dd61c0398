// File: apps/common/store_flags.hpp
//
// --store redis://HOST[:PORT][/DB] and --store-prefix: what the processes serving one endpoint share through
// Redis: the announcements (a list_changed or resources/updated raised on any process reaches the sessions
// and listens of every process), the legacy sessions (any process serves any session's POST, GET and
// DELETE; a stream resumes on any process) and the tasks (any process answers for a task another runs). Redis
// must answer at start: a process that cannot reach it would serve a deployment that only looks whole, so it
// exits 3, saying why.
//
// Redis is talked to on a thread of its own (store_runtime), apart from the threads serving requests, so
// that the process can wait for it before it serves.
//
//     duet::apps::store_flags store;
//     duet::apps::add_store_flags(*serve, store);
//     ... after parsing:
//     duet::apps::store_runtime runtime;   // first in main()
//     if (auto why = duet::apps::apply_store_flags(store, runtime, options)) { print(why->text);
//     return why->exit_code; }
//     ... once the server subscribed: if (auto why = duet::apps::await_store(options)) ...
#pragma once

#include <duet/server/server.hpp>
#include <duet/store/redis.hpp>
#include <duet/transport/http_server.hpp>

#include "common/store_runtime.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <optional>
#include <string>

namespace duet::apps {

struct store_flags {
    std::string url;
    std::string prefix = "duet:";
};

inline void add_store_flags(CLI::App& app, store_flags& flags) {
    app.add_option("--store", flags.url,
                   "Share announcements with every process serving this endpoint through Redis: "
                   "redis://HOST[:PORT][/DB] (default: nothing shared)");
    app.add_option("--store-prefix", flags.prefix,
                   "Put before every Redis key and channel, so deployments sharing one Redis stay apart "
                   "(default duet:)");
}

struct store_refusal {
    std::string text;
    int exit_code; ///< 2: a usage error; 3: Redis cannot be reached
};

/// Sets options.event_bus, options.task_store and http.session_store from the flags (nothing without
/// --store).
[[nodiscard]] inline std::optional<store_refusal> apply_store_flags(store_flags const& flags,
                                                                    store_runtime& runtime,
                                                                    server::server_options& options,
                                                                    transport::http_options& http) {
    if (flags.url.empty())
        return std::nullopt;
    auto where = store::parse_redis_url(flags.url);
    if (!where)
        return store_refusal{"--store: " + where.error(), 2};
    if (flags.prefix.empty())
        return store_refusal{"--store-prefix may not be empty: deployments sharing one Redis need it apart",
                             2};
    where->key_prefix = flags.prefix;
    if (auto why = store::redis_unreachable(*where, where->connect_timeout); !why.empty())
        return store_refusal{"--store: " + why, 3};
    auto const executor = runtime.start();
    options.event_bus = store::make_redis_event_bus(executor, *where);
    options.task_store = store::make_redis_task_store(executor, *where);
    http.session_store = store::make_redis_session_store(executor, *where,
                                                         {.max_sessions = http.max_sessions,
                                                          .replay_events = http.replay_events,
                                                          .resumable_streams = http.resumable_streams},
                                                         http.session_expiry);
    return std::nullopt;
}

/// Once the server subscribed to its announcements: returns when Redis confirmed it, so that the process
/// serves only once it hears what the others announce; exit 3 when Redis does not within a few seconds.
[[nodiscard]] inline std::optional<store_refusal> await_store(server::server_options const& options) {
    if (!options.event_bus || store::await_round_trip(*options.event_bus, std::chrono::seconds(5)))
        return std::nullopt;
    return store_refusal{"--store: Redis did not carry an announcement back within 5 s", 3};
}

} // namespace duet::apps
