#include "modern_responses.hpp"

#include <duet/jsonrpc/codec.hpp>
#include <duet/protocol/errors.hpp>

#include "peer_watch.hpp"
#include "reply.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <optional>

namespace duet::transport::http {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;

// What one POST's response is made of: the lines its handler streams and, once known, its answer.
struct modern_responder::answer_queue : stream_queue {
    using stream_queue::stream_queue;
    server::connection::answer outcome;
    bool listen = false;
};

asio::awaitable<bool> modern_responder::serve(bounded_socket& stream, request const& req, bool keep_alive,
                                              modern_slot& slot, server::admitted_request ad,
                                              protocol::http_facts facts, server::server& srv) {
    if (slot.srv != &srv) {
        slot.conn = server::connection::create(
            srv, stream.get_executor(), [](std::string) {}, server::connection_options::modern_requests());
        slot.srv = &srv;
    }
    return respond(stream, req, keep_alive, slot.conn, std::move(ad), std::move(facts), kind::modern);
}

asio::awaitable<bool> modern_responder::serve_sessionless(bounded_socket& stream, request const& req,
                                                          bool keep_alive, server::admitted_request ad,
                                                          protocol::http_facts facts, server::server& srv) {
    auto conn = server::connection::create(
        srv, stream.get_executor(), [](std::string) {}, server::connection_options::modern_requests());
    return respond(stream, req, keep_alive, std::move(conn), std::move(ad), std::move(facts),
                   kind::sessionless);
}

asio::awaitable<bool> modern_responder::serve_listen(bounded_socket& stream, request const& req,
                                                     bool keep_alive, server::admitted_request ad,
                                                     protocol::http_facts facts, server::server& srv) {
    if (open_listens_ >= ctx_.options.max_listen_streams) {
        reply answer = reply{
            bhttp::status::service_unavailable,
            error_body(ad.request.id, protocol::make_error(protocol::errc::internal_error,
                                                           "Too many open listen streams; retry later"))};
        co_await ctx_.replies.write(stream, req, answer, keep_alive);
        co_return true;
    }
    auto conn = server::connection::create(
        srv, stream.get_executor(), [](std::string) {}, server::connection_options::modern_listen());
    ++open_listens_;
    if (ctx_.counters)
        ctx_.counters->listens_open.fetch_add(1, std::memory_order_relaxed);
    auto keep =
        co_await respond(stream, req, keep_alive, conn, std::move(ad), std::move(facts), kind::listen);
    if (ctx_.counters)
        ctx_.counters->listens_open.fetch_sub(1, std::memory_order_relaxed);
    --open_listens_;
    co_return keep;
}

// An answer ready at once goes out through send(); anything else goes on in follow().
asio::awaitable<bool> modern_responder::respond(bounded_socket& stream, request const& req, bool keep_alive,
                                                std::shared_ptr<server::connection> conn,
                                                server::admitted_request ad, protocol::http_facts facts,
                                                kind k) {
    // The queue and the answer in one block; both callbacks below hold a pointer to it.
    auto state = std::make_shared<answer_queue>(stream.get_executor(), ctx_.options.stream_backlog);
    state->listen = k == kind::listen;
    std::shared_ptr<stream_queue> queue = state;
    std::shared_ptr<server::connection::answer> outcome(state, &state->outcome);
    bool const listen = state->listen;
    bool const modern = k != kind::sessionless;
    if (listen)
        ctx_.registry.track(conn, queue);
    // The answer closes the queue. An open listen (no answer yet) keeps its stream until the drain finishes
    // its connection, which writes its result and then closes the queue (begin_drain), or until the client
    // goes away. Anything else that has no answer (a cancelled request) is simply over: finishing `conn` here
    // would end a legacy session's connection with it.
    auto settle = [state](server::connection::answer h) {
        state->outcome = std::move(h);
        if (state->outcome.message || !state->listen)
            state->close();
    };
    server::connection::writer to_queue = [state](std::string line) {
        state->push(std::move(line));
    };
    // Most answers are ready at once, with no coroutine; one whose handler waits goes on in the connection
    // and settles later (and a modern one is drained with the server). The facts are read only here.
    if (auto now = conn->answer_now(std::move(ad), &facts, std::move(to_queue), settle))
        settle(std::move(*now));
    else if (modern && !listen)
        ctx_.registry.track(conn, nullptr);

    std::string line;
    auto const got = queue->try_pop(line);
    if (got == stream_queue::outcome::closed) {
        // Nothing was streamed: a plain JSON answer (or 202 when none is owed, e.g. cancelled).
        reply out = answer_reply(outcome->message, outcome->http_status);
        return ctx_.replies.send(stream, req, std::move(out), keep_alive);
    }
    return follow(stream, req, keep_alive, std::move(conn), std::move(queue), std::move(outcome),
                  std::move(line), got, modern);
}

// The rest of respond() for an answer not ready at once: `got` is what the queue held then (`line` the
// message it took).
asio::awaitable<bool> modern_responder::follow(bounded_socket& stream, request const& req, bool keep_alive,
                                               std::shared_ptr<server::connection> conn,
                                               std::shared_ptr<stream_queue> queue,
                                               std::shared_ptr<server::connection::answer> outcome,
                                               std::string line, stream_queue::outcome got, bool modern) {
    auto abandon = [&] {
        if (modern)
            conn->cancel_requests();
        return false;
    };

    // Most answers are known after one turn of this strand (a handler that waited briefly): look before
    // paying for a watch on the peer, a reactor registration.
    if (got == stream_queue::outcome::idle) {
        co_await asio::post(stream.get_executor(), asio::use_awaitable);
        got = queue->try_pop(line);
    }
    std::optional<peer_watch> watch;
    if (got == stream_queue::outcome::idle) {
        watch.emplace(stream.socket(), stream.is_tls(), [queue] { queue->interrupt(); });
        got = co_await queue->pop(line, unbounded_wait);
        while (got == stream_queue::outcome::interrupted && !watch->gone())
            got = co_await queue->pop(line, unbounded_wait);
        if (watch->gone())
            co_return abandon();
    }
    if (got == stream_queue::outcome::overflowed)
        co_return abandon();
    if (got == stream_queue::outcome::closed) {
        // Nothing was streamed: a plain JSON answer (or 202 when none is owed, e.g. cancelled).
        reply out = answer_reply(outcome->message, outcome->http_status);
        co_await ctx_.replies.write(stream, req, out, keep_alive);
        co_return true;
    }

    // Streamed: SSE, each message one event; the response (if any) is the last event.
    if (!watch)
        watch.emplace(stream.socket(), stream.is_tls(), [queue] { queue->interrupt(); });
    server_context::sse_stream_count const counted(ctx_.counters);
    if (!co_await ctx_.sse.begin(stream, req, keep_alive))
        co_return abandon();
    bool alive = co_await ctx_.sse.event(stream, {}, line);
    while (alive) {
        got = co_await queue->pop(line, ctx_.options.keepalive);
        if (got == stream_queue::outcome::closed)
            break;
        if (watch->gone() || got == stream_queue::outcome::overflowed)
            alive = false;
        else if (got == stream_queue::outcome::idle)
            alive = co_await ctx_.sse.keepalive(stream);
        else if (got == stream_queue::outcome::line)
            alive = co_await ctx_.sse.event(stream, {}, line);
    }
    if (!alive)
        co_return abandon();
    if (outcome->message) {
        auto const last = jsonrpc::serialize(*outcome->message);
        if (!co_await ctx_.sse.event(stream, {}, last))
            co_return false;
    }
    co_return co_await ctx_.sse.end(stream);
}

} // namespace duet::transport::http
