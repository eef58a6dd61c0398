#include "session_streams.hpp"

#include "event_ids.hpp"
#include "head_fields.hpp"
#include "reply.hpp"

#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <string>

namespace duet::transport::http {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;

namespace {
constexpr std::string_view session_header = "Mcp-Session-Id";
}

session_streams::found session_streams::find(request const& req, server::server& srv,
                                             protocol::caller_identity const* caller) {
    auto const id = header(req, session_header);
    if (!id)
        return {};
    auto s = ctx_.sessions->find(*id);
    // Another process opened it (a shared store): served here too, from what that process saved.
    if (s && !s->local() && ctx_.sessions->shared())
        adopt(*s, srv, path_of(req));
    // A session of another endpoint is unknown here. Not touched: only legacy traffic keeps a session alive;
    // a modern request never reads or changes one (ERA-POLICY), whatever stale id it carries.
    if (!s || !s->local() || live(*s).owner != &srv)
        return {nullptr, protocol::session_lookup::unknown};
    // Opened by someone else: as unknown to this caller as a session that never was.
    if (auto const& principal = live(*s).principal; !principal.empty() && principal != principal_of(caller))
        return {nullptr, protocol::session_lookup::unknown};
    return {std::move(s), protocol::session_lookup::live};
}

bool session_streams::worth_loading(request const& req) const {
    if (!ctx_.sessions->shared())
        return false;
    auto const id = header(req, session_header);
    return id && !ctx_.sessions->find(*id);
}

namespace {

// Waits until the store calls back, which it may do on a thread of its own; the coroutine goes on on its
// executor.
asio::awaitable<void> await_store(std::function<void(std::function<void()>)> const& start) {
    co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(
        [&start](auto handler) {
            auto h = std::make_shared<decltype(handler)>(std::move(handler));
            start([h] {
                auto const ex = asio::get_associated_executor(*h);
                asio::post(ex, [h] { std::move (*h)(); });
            });
        },
        asio::use_awaitable);
}

} // namespace

asio::awaitable<void> session_streams::load(request const& req) {
    auto const id = header(req, session_header);
    if (!id)
        co_return;
    std::function<void(std::function<void()>)> const ask =
        [this, id = std::string(*id)](std::function<void()> done) {
            ctx_.sessions->find_async(
                id, [done = std::move(done)](std::shared_ptr<store::session> const&) { done(); });
        };
    co_await await_store(ask);
}

asio::awaitable<bool> session_streams::flush_then_send(bounded_socket& stream, request const& req, reply out,
                                                       bool keep_alive) {
    co_await flush_store();
    co_await ctx_.replies.write(stream, req, out, keep_alive);
    co_return true;
}

asio::awaitable<void> session_streams::flush_store() {
    std::function<void(std::function<void()>)> const ask = [this](std::function<void()> done) {
        ctx_.sessions->flush(std::move(done));
    };
    co_await await_store(ask);
}

void session_streams::adopt(store::session& s, server::server& srv, std::string_view path) {
    auto record = decode_record(s.state());
    if (!record || record->path != path)
        return; // unreadable, or another endpoint's: unknown here
    auto local = std::make_shared<live_session>();
    local->owner = &srv;
    local->principal = record->principal;
    auto const id = s.id();
    // Weak: the store holds the session, whose live half this is.
    std::weak_ptr<store::session_store> sessions = ctx_.sessions;
    local->conn = server::connection::create(
        srv, ctx_.io.get_executor(),
        [sessions, id](std::string line) {
            auto const held = sessions.lock();
            if (auto open = held ? held->find(id) : nullptr)
                open->standalone()->publish(std::move(line));
        },
        session_connection_options(s));
    local->conn->restore_session(record->state);
    local->conn->deliver_session_events(s.events_here());
    s.adopt(std::move(local));
}

server::connection_options session_streams::session_connection_options(store::session& s) const {
    auto o = server::connection_options::legacy_session(s.id(), ctx_.serial);
    if (!ctx_.sessions->shared())
        return o;
    o.client_request_id_prefix = ctx_.sessions->process_tag();
    // What the session's own methods change, every process serving it must know.
    o.on_session_change = [sessions = std::weak_ptr<store::session_store>(ctx_.sessions),
                           id = s.id()](server::session_state const& state) {
        auto const held = sessions.lock();
        auto open = held ? held->find(id) : nullptr;
        if (!open)
            return;
        auto record = decode_record(open->state());
        if (!record)
            return;
        record->state = state;
        open->save_state(encode_record(*record));
    };
    return o;
}

void session_streams::to_session(store::session& session, jsonrpc::message m) const {
    if (ctx_.sessions->shared())
        session.broadcast(jsonrpc::serialize(m));
    else
        live(session).conn->receive(std::move(m));
}

asio::awaitable<bool> session_streams::stream_to(bounded_socket& stream, request const& req, bool keep_alive,
                                                 std::shared_ptr<store::session> session) {
    session->touch();
    if (!accepts(req, "text/event-stream")) {
        reply answer = invalid_request_reply(bhttp::status::not_acceptable,
                                             "Invalid Request: Accept must list text/event-stream");
        co_await ctx_.replies.write(stream, req, answer, keep_alive);
        co_return true;
    }
    std::shared_ptr<store::event_log> es;
    std::uint64_t after = 0;
    auto const resume = header(req, "Last-Event-ID");
    if (resume) {
        auto const position = parse_event_id(*resume);
        if (position)
            es = session->find_stream(position->stream);
        if (!es || position->seq > es->last_seq()) {
            reply answer = invalid_request_reply(
                bhttp::status::bad_request,
                "Invalid Request: Last-Event-ID names no stream of this session that can be resumed");
            co_await ctx_.replies.write(stream, req, answer, keep_alive);
            co_return true;
        }
        after = position->seq;
        if (auto const kept = es->events_after(after); !kept.empty() && kept.front().seq != after + 1) {
            reply answer =
                invalid_request_reply(bhttp::status::bad_request,
                                      "Invalid Request: " + std::to_string(kept.front().seq - after - 1) +
                                          " events after this Last-Event-ID are no longer kept; the stream "
                                          "cannot be resumed without "
                                          "a gap");
            co_await ctx_.replies.write(stream, req, answer, keep_alive);
            co_return true;
        }
    } else {
        es = session->standalone();
        after = es->last_seq(); // only what comes from now on; replay is for Last-Event-ID
    }
    if (es->number() == 0)
        session->claim_events(); // the process that holds the standalone stream delivers server events
    auto const ex = co_await asio::this_coro::executor;
    auto wake = std::make_shared<stream_queue>(ex);
    auto const token = es->attach([wake] { wake->interrupt(); }, resume.has_value());
    if (token == 0) {
        reply answer = invalid_request_reply(bhttp::status::conflict,
                                             "Invalid Request: this session already has a stream open");
        co_await ctx_.replies.write(stream, req, answer, keep_alive);
        co_return true;
    }
    auto const negotiated = live(*session).conn->legacy_version();
    bool const polling = negotiated && protocol::sse_polling(*negotiated);
    server_context::sse_stream_count const counted(ctx_.counters);
    if (!co_await ctx_.sse.begin(stream, req, keep_alive) ||
        !co_await ctx_.sse.opening(stream, *es, after, polling)) {
        es->detach(token);
        co_return false;
    }
    peer_watch watch(stream.socket(), stream.is_tls(), [wake] { wake->interrupt(); });
    auto const end = co_await relay(stream, *es, token, after, *wake, watch, *session);
    co_return co_await finish_relay(stream, *session, *es, token, end);
}

asio::awaitable<bool> session_streams::end_session(bounded_socket& stream, request const& req,
                                                   bool keep_alive, std::shared_ptr<store::session> session) {
    ctx_.sessions->remove(session->id());
    session->end();
    live(*session).conn->finish([] {});
    if (ctx_.sessions->shared())
        co_await flush_store(); // ended on every process before the client hears so
    reply answer = reply{bhttp::status::ok, {}};
    co_await ctx_.replies.write(stream, req, answer, keep_alive);
    co_return true;
}

// Writes the events of `es` after `after` as they come, each with its id, and keep-alive comments while idle,
// until one of relay_end happens. The session's reader must be attached as `token`.
asio::awaitable<session_streams::relay_end>
session_streams::relay(bounded_socket& stream, store::event_log& es, std::uint64_t token, std::uint64_t after,
                       stream_queue& wake, peer_watch const& watch, store::session& session) {
    bool const standalone = es.number() == 0;
    std::string ignored;
    for (;;) {
        if (watch.gone())
            co_return relay_end::peer_gone;
        if (!standalone && es.take_close_request())
            co_return relay_end::closed;
        auto const events = es.events_after(after);
        if (!events.empty() && events.front().seq != after + 1)
            // A reader slower than the events: the replay buffer let go of some it never wrote. Ending the
            // stream makes the client resume from its last event, which is then refused in words.
            co_return relay_end::fell_behind;
        for (auto const& e : events) {
            auto const id = format_event_id(es.number(), e.seq);
            if (!co_await ctx_.sse.event(stream, id, e.data))
                co_return relay_end::peer_gone;
            after = e.seq;
        }
        if (es.is_complete() && after >= es.last_seq())
            co_return relay_end::complete;
        if (!es.attached(token))
            co_return relay_end::superseded;
        if (standalone && (session.ended() || ctx_.draining))
            co_return relay_end::over;
        auto const got = co_await wake.pop(ignored, ctx_.options.keepalive);
        if (got == stream_queue::outcome::idle && !co_await ctx_.sse.keepalive(stream))
            co_return relay_end::peer_gone;
        // A client holding a stream open is using its session, however long it sends nothing else.
        session.touch();
    }
}

// Ends a relayed stream's response: properly unless the peer is gone; a POST stream whose every event reached
// the client is forgotten (nothing is left to resume). Returns whether the connection goes on.
asio::awaitable<bool> session_streams::finish_relay(bounded_socket& stream, store::session& session,
                                                    store::event_log& es, std::uint64_t token,
                                                    relay_end end) {
    es.detach(token);
    if (end == relay_end::complete && es.number() != 0)
        session.forget_stream(es.number());
    if (end == relay_end::peer_gone)
        co_return false;
    co_return co_await ctx_.sse.end(stream);
}

} // namespace duet::transport::http
