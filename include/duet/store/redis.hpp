/// @file duet/store/redis.hpp
///
/// The stores several processes serving one endpoint share through one Redis: the event bus of announcements
/// (pub/sub), legacy sessions and their streams, and tasks. Reached with hiredis' asynchronous API driven
/// by Asio's reactor, pipelined, and reconnecting with backoff when Redis goes away; while it is away, what
/// needs it fails at once rather than waiting.
///
///     auto where = store::parse_redis_url("redis://127.0.0.1:6379/0");       // or an error in words
///     if (auto down = store::redis_unreachable(*where, std::chrono::seconds(2)); !down.empty()) exit(3);
///     options.event_bus = store::make_redis_event_bus(io.get_executor(), *where);
///
/// @par Thread safety
/// What make_redis_event_bus() returns may be used from any thread; its handlers run on the bus's own strand
/// of the executor given.
#pragma once

#include <duet/store/event_bus.hpp>
#include <duet/store/memory.hpp>
#include <duet/store/session_store.hpp>
#include <duet/store/task_store.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace duet::store {

struct redis_options {
    std::string host = "127.0.0.1";
    std::uint16_t port = 6379;
    int database = 0;
    /// Put before every key and channel name, so several deployments (or tests) share one Redis apart.
    std::string key_prefix = "duet:";
    /// How long a connection attempt may take before it counts as failed.
    std::chrono::milliseconds connect_timeout = std::chrono::seconds(2);
    /// The wait before the first reconnection attempt; doubled after each failure up to max_backoff.
    std::chrono::milliseconds min_backoff = std::chrono::milliseconds(100);
    std::chrono::milliseconds max_backoff = std::chrono::seconds(2);
};

/// `redis://HOST[:PORT][/DB]` (HOST a name, an IPv4 address or a bracketed IPv6 one): the options it names,
/// the rest default; anything else (another scheme, credentials, a query, a bad port or database) an error
/// that says what is wrong.
[[nodiscard]] boost::system::result<redis_options, std::string> parse_redis_url(std::string_view url);

/// Empty when Redis answers PING at `where` within `timeout`; otherwise why not, in words (for an exit at
/// start).
[[nodiscard]] std::string redis_unreachable(redis_options const& where, std::chrono::milliseconds timeout);

/// A bus whose topics are Redis channels (key_prefix + topic): every process subscribed hears each publish
/// once, the publisher included. Within one process, a publish that begins after subscribe() returned reaches
/// that subscriber (it waits for Redis to confirm the subscription). While Redis is away, publishes are
/// dropped (and said so on stderr, once per outage); subscriptions are renewed when it is back.
[[nodiscard]] std::shared_ptr<event_bus> make_redis_event_bus(boost::asio::any_io_executor executor,
                                                              redis_options where);

/// Legacy sessions every process serving the endpoint shares: their records, their streams' events (Redis
/// Streams, so a client resumes on any process and misses nothing that was logged), what one process's
/// client sends reaching the request it concerns on another, each session ending everywhere. `limits` bound
/// what this process holds (sessions, events kept per stream, streams per session); `expiry` is a session's
/// idle lifetime in Redis, renewed by its traffic on any process.
[[nodiscard]] std::shared_ptr<session_store> make_redis_session_store(boost::asio::any_io_executor executor,
                                                                      redis_options where,
                                                                      memory_limits limits,
                                                                      std::chrono::milliseconds expiry);

/// Tasks every process serving the endpoint shares: each record a hash that Redis expires at the record's
/// expiry, each owner's live records counted in a sorted set by expiry, every update a compare-and-set on the
/// record's revision (retried when another process changed it meanwhile). While Redis is away, every
/// operation fails at once, saying so.
[[nodiscard]] std::shared_ptr<task_store> make_redis_task_store(boost::asio::any_io_executor executor,
                                                                redis_options where);

} // namespace duet::store
