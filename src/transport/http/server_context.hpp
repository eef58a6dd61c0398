// What the parts of an http_server share (its lifecycle, the routing, modern responses, session streams),
// owned by http_server::impl and outliving every request.
#pragma once

#include <duet/store/memory.hpp>
#include <duet/store/session_store.hpp>
#include <duet/transport/http_server.hpp>

#include "drain_registry.hpp"
#include "peer_budget.hpp"
#include "reply_writer.hpp"
#include "sse_framing.hpp"

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <memory>

namespace duet::transport::http {

/// How long a response waits for its first message: the handler's own business (a drain ends it sooner).
inline constexpr auto unbounded_wait = std::chrono::hours(24 * 365);

/// The store options.session_store names, else an in-memory one within the options' limits.
[[nodiscard]] inline std::shared_ptr<store::session_store> session_store_for(http_options const& options) {
    if (options.session_store)
        return options.session_store;
    return store::make_memory_session_store({.max_sessions = options.max_sessions,
                                             .replay_events = options.replay_events,
                                             .resumable_streams = options.resumable_streams});
}

struct server_context {
    server_context(http_options o, boost::asio::io_context& io_context)
        : options(std::move(o)), io(io_context), sessions(session_store_for(options)),
          counters(options.metrics ? &options.metrics->http() : nullptr),
          replies(options.read_timeout, counters), sse(options.read_timeout, options.sse_retry, counters),
          session_budget(options.session_burst_per_peer, options.sessions_per_second_per_peer) {}
    // The sessions' live halves run on `io`, which goes with this server; a shared store may outlive both.
    ~server_context() {
        for (auto const& s : sessions->all())
            s->drop_local();
    }
    server_context(server_context const&) = delete;
    server_context& operator=(server_context const&) = delete;

    http_options const options;
    boost::asio::io_context& io;
    /// One thread runs `io` (set by run() before anything is accepted): no strands, which would only add a
    /// lock and a hand-off to every completion.
    bool serial = false;
    std::atomic<bool> draining{false};
    /// Reached through the interface only: a shared store is a drop-in.
    std::shared_ptr<store::session_store> const sessions;
    /// options.metrics' HTTP counters; null when none are kept.
    metrics::http_counters* const counters;
    drain_registry registry;
    reply_writer replies;
    sse_writer sse;
    /// Legacy sessions each peer address may open (initialize beyond it: 429).
    peer_budget session_budget;

    /// Counts one SSE stream open while it lives (the stream's coroutine holds it from its head on).
    struct sse_stream_count {
        explicit sse_stream_count(metrics::http_counters* c) : counters(c) {
            if (counters)
                counters->sse_streams_open.fetch_add(1, std::memory_order_relaxed);
        }
        ~sse_stream_count() {
            if (counters)
                counters->sse_streams_open.fetch_sub(1, std::memory_order_relaxed);
        }
        sse_stream_count(sse_stream_count const&) = delete;
        sse_stream_count& operator=(sse_stream_count const&) = delete;
        metrics::http_counters* counters;
    };
};

} // namespace duet::transport::http
