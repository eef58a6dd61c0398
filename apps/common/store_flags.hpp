// File: apps/common/store_flags.hpp
//
// --store redis://HOST[:PORT][/DB] and --store-prefix: what the processes serving one endpoint share through
// Redis (today the announcements: a list_changed or resources/updated raised on any process reaches the
// sessions and listens of every process). Redis must answer at start: a process that cannot reach it would
// serve a deployment that only looks whole, so it exits 3, saying why.
//
//     duet::apps::store_flags store;
//     duet::apps::add_store_flags(*serve, store);
//     ... after parsing, with the io_context the server will run:
//     if (auto why = duet::apps::apply_store_flags(store, io.get_executor(), options)) { print(why->text);
//     return why->exit_code; }
#pragma once

#include <duet/server/server.hpp>
#include <duet/store/redis.hpp>

#include <boost/asio/any_io_executor.hpp>

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

/// Sets options.event_bus from the flags (nothing without --store).
[[nodiscard]] inline std::optional<store_refusal> apply_store_flags(store_flags const& flags,
                                                                    boost::asio::any_io_executor executor,
                                                                    server::server_options& options) {
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
    options.event_bus = store::make_redis_event_bus(std::move(executor), *where);
    return std::nullopt;
}

} // namespace duet::apps
