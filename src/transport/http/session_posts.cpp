#include <duet/jsonrpc/codec.hpp>
#include <duet/protocol/errors.hpp>

#include "head_fields.hpp"
#include "reply.hpp"
#include "session_streams.hpp"

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace duet::transport::http {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;

namespace {

constexpr std::string_view session_header = "Mcp-Session-Id";

bool polls(store::session const& session) {
    auto const negotiated = live(session).conn->legacy_version();
    return negotiated && protocol::sse_polling(*negotiated);
}

// The session's own methods, whose changes a shared store keeps.
bool changes_session(protocol::admission const& a) {
    using protocol::method_id;
    auto const id = a.method->id;
    return a.what == protocol::admission::action::serve &&
           (id == method_id::logging_set_level || id == method_id::resources_subscribe ||
            id == method_id::resources_unsubscribe);
}

} // namespace

// Where a session request's messages go. Until the response knows whether it streams, what the handler writes
// (and its answer, when it comes after the first look) is kept here; once the request has a resumable stream,
// everything goes to the stream, the answer last. Written on the session's strand and read on the socket's,
// hence the mutex.
struct session_streams::session_sink {
    std::mutex mutex;
    std::vector<std::string> early;
    bool close_requested = false;
    std::optional<server::connection::answer> answer; ///< came before the stream was opened
    std::shared_ptr<store::event_log> es;
    unsigned http_status = 200;

    void write(std::string line) {
        std::lock_guard lock(mutex);
        if (es)
            es->publish(std::move(line));
        else
            early.push_back(std::move(line));
    }
    void request_close() {
        std::lock_guard lock(mutex);
        if (es)
            es->request_close();
        else
            close_requested = true;
    }
    void settle(server::connection::answer h) {
        std::lock_guard lock(mutex);
        if (es)
            complete(std::move(h));
        else
            answer = std::move(h);
    }
    // The stream takes over: what came so far, in order. `mutex` held.
    void open(std::shared_ptr<store::event_log> stream) {
        es = std::move(stream);
        for (auto& line : early)
            es->publish(std::move(line));
        early.clear();
        if (close_requested)
            es->request_close();
        if (answer)
            complete(std::move(*answer));
    }
    // The status first: the reader that sees the stream complete reads it. `mutex` held.
    void complete(server::connection::answer h) {
        http_status = h.http_status;
        std::optional<std::string> last;
        if (h.message)
            last = jsonrpc::serialize(*h.message);
        es->complete(std::move(last));
    }
};

asio::awaitable<bool> session_streams::open_session(bounded_socket& stream, request const& req,
                                                    bool keep_alive, server::admitted_request ad,
                                                    protocol::http_facts facts, server::server& srv) {
    boost::system::error_code peer_unknown;
    auto const peer = stream.socket().remote_endpoint(peer_unknown);
    if (!peer_unknown && !ctx_.session_budget.take(peer.address())) {
        reply answer = reply{
            bhttp::status::too_many_requests,
            error_body(ad.request.id, protocol::make_error(protocol::errc::internal_error,
                                                           "Too many sessions opened from this address; "
                                                           "retry later"))};
        answer.headers.emplace_back("Retry-After", std::to_string(ctx_.session_budget.retry_after_seconds()));
        co_await ctx_.replies.write(stream, req, answer, keep_alive);
        co_return true;
    }
    auto local = std::make_shared<live_session>();
    local->owner = &srv;
    local->principal = principal_of(stream.caller().get());
    auto s = ctx_.sessions->create(local);
    if (!s) {
        reply answer =
            reply{bhttp::status::service_unavailable,
                  error_body(ad.request.id, protocol::make_error(protocol::errc::internal_error,
                                                                 "Too many sessions; retry later"))};
        co_await ctx_.replies.write(stream, req, answer, keep_alive);
        co_return true;
    }
    std::weak_ptr<store::session> weak = s;
    if (ctx_.sessions->shared()) // the record the session's changes update, before initialize saves it
        s->save_state(encode_record({std::string(path_of(req)), local->principal, {}}));
    // A strand of its own on the io_context, not one nested in this socket's: the session outlives this
    // socket, and its requests come on others.
    local->conn = server::connection::create(
        srv, ctx_.io.get_executor(),
        [weak](std::string line) {
            if (auto open = weak.lock())
                open->standalone()->publish(std::move(line));
        },
        session_connection_options(*s));
    server::connection::writer to_session;
    auto h = co_await local->conn->async_answer(std::move(ad), &facts, std::move(to_session));
    bool const opened = h.message && std::holds_alternative<jsonrpc::response>(*h.message);
    if (opened && ctx_.sessions->shared())
        co_await flush_store(); // another process finds the session as soon as the client has its id
    reply out{static_cast<bhttp::status>(h.http_status), h.message ? jsonrpc::serialize(*h.message) : ""};
    if (opened)
        out.headers.emplace_back(std::string(session_header), s->id());
    else
        ctx_.sessions->remove(s->id());
    co_await ctx_.replies.write(stream, req, out, keep_alive);
    co_return true;
}

// The client resumes a stream with GET and Last-Event-ID when it breaks or when the handler ends it early
// (request_context::close_sse_stream, 2025-11-25). A disconnect does not cancel a legacy request (the client
// sends notifications/cancelled): its messages wait in the stream. Most answers are ready at once
// (connection::answer_now answers the request on this thread when the session's strand is free): those need
// neither a stream nor a watch on the peer, nor a coroutine of their own; anything else goes on in follow().
asio::awaitable<bool> session_streams::serve(bounded_socket& stream, request const& req, bool keep_alive,
                                             std::shared_ptr<store::session> session,
                                             server::admitted_request ad, protocol::http_facts facts) {
    session->touch();
    bool const polling = polls(*session);
    auto id = ad.request.id; // for the stream's loss answer, should it come to that
    // What the session's own methods change, other processes must know before the client's next request.
    bool const changes_shared_session = ctx_.sessions->shared() && ad.verdict && changes_session(*ad.verdict);
    auto sink = std::make_shared<session_sink>();
    server::connection::writer to_sink = [sink](std::string line) {
        sink->write(std::move(line));
    };
    std::function<void()> end_stream;
    if (polling)
        end_stream = [weak = std::weak_ptr<session_sink>(sink)] {
            if (auto live = weak.lock())
                live->request_close();
        };
    auto settle = [sink](server::connection::answer h) {
        sink->settle(std::move(h));
    };
    auto now = live(*session).conn->answer_now(std::move(ad), &facts, std::move(to_sink), std::move(settle),
                                               std::move(end_stream));
    {
        std::lock_guard lock(sink->mutex);
        if (now && sink->early.empty() && !sink->close_requested) {
            // Nothing came before the answer: plain JSON (202 when none is owed, e.g. cancelled).
            reply out = answer_reply(now->message, now->http_status);
            if (changes_shared_session)
                return flush_then_send(stream, req, std::move(out), keep_alive);
            return ctx_.replies.send(stream, req, std::move(out), keep_alive);
        }
        // Not (only) an answer: the request gets its resumable stream, which takes over what came.
        if (now)
            sink->answer = std::move(now);
    }
    return follow(stream, req, keep_alive, std::move(session), std::move(sink), polling, std::move(id));
}

// The rest of serve() for a request that streams or has not answered yet: the response waits to see which it
// is.
asio::awaitable<bool> session_streams::follow(bounded_socket& stream, request const& req, bool keep_alive,
                                              std::shared_ptr<store::session> session,
                                              std::shared_ptr<session_sink> sink, bool polling,
                                              jsonrpc::request_id id) {
    std::string on_loss;
    if (ctx_.sessions->shared())
        on_loss = jsonrpc::serialize(jsonrpc::message(jsonrpc::error_response{
            std::move(id),
            protocol::make_error(protocol::errc::internal_error,
                                 "The process serving this request stopped before answering it "
                                 "(killed or crashed): its outcome is unknown")}));
    auto es = session->open_stream(std::move(on_loss));
    auto wake = std::make_shared<stream_queue>(stream.get_executor());
    auto const token = es->attach([wake] { wake->interrupt(); }, false);
    {
        std::lock_guard lock(sink->mutex);
        sink->open(es);
    }
    peer_watch watch(stream.socket(), stream.is_tls(), [wake] { wake->interrupt(); });

    bool close_now = false;
    std::string ignored;
    for (;;) {
        if (watch.gone()) {
            es->detach(token);
            co_return false;
        }
        close_now = es->take_close_request();
        bool const complete = es->is_complete();
        auto const published = es->last_seq();
        if (complete && !close_now && published <= 1) {
            // Nothing came before the answer: plain JSON (202 when none is owed, e.g. cancelled). The stream
            // is done with, so the answer moves out of it.
            es->detach(token);
            session->forget_stream(es->number());
            auto events = es->take_events();
            unsigned status = 200;
            {
                std::lock_guard status_lock(sink->mutex);
                status = sink->http_status;
            }
            reply out{events.empty() ? bhttp::status::accepted : static_cast<bhttp::status>(status),
                      events.empty() ? std::string() : std::move(events.front().data)};
            co_await ctx_.replies.write(stream, req, out, keep_alive);
            co_return true;
        }
        if (close_now || published > 0 || !es->attached(token))
            break;
        co_await wake->pop(ignored, unbounded_wait);
    }

    // A client may resume from the priming event before any event exists: every process must know the
    // stream by then.
    if (polling && ctx_.sessions->shared())
        co_await flush_store();
    server_context::sse_stream_count const counted(ctx_.counters);
    if (!co_await ctx_.sse.begin(stream, req, keep_alive) ||
        !co_await ctx_.sse.opening(stream, *es, 0, polling)) {
        es->detach(token);
        co_return false;
    }
    if (close_now) {
        // Before anything but the priming event: the client resumes from it.
        co_return co_await finish_relay(stream, *session, *es, token, relay_end::closed);
    }
    auto const end = co_await relay(stream, *es, token, 0, *wake, watch, *session);
    co_return co_await finish_relay(stream, *session, *es, token, end);
}

asio::awaitable<bool> session_streams::serve_batch(bounded_socket& stream, request const& req,
                                                   bool keep_alive, jsonrpc::batch b,
                                                   std::shared_ptr<store::session> session) {
    session->touch();
    auto const facts = facts_of(req, stream.caller());
    std::vector<jsonrpc::message> replies;
    for (auto& element : b.elements) {
        if (!element) {
            if (element.error().reply)
                replies.push_back(*element.error().reply);
            continue;
        }
        if (auto* r = std::get_if<jsonrpc::request>(&*element)) {
            // Admitted in turn: an element is admitted by the session as the ones before it left it.
            auto& held = live(*session);
            auto ad = held.owner->admit(std::move(*r), {.legacy = held.conn->legacy_version()}, &facts);
            server::connection::writer to_session; // none: the session's own stream
            auto h = co_await held.conn->async_answer(std::move(ad), &facts, std::move(to_session));
            if (h.message)
                replies.push_back(std::move(*h.message));
        } else {
            to_session(*session, std::move(*element));
        }
    }
    reply r{replies.empty() ? bhttp::status::accepted : bhttp::status::ok, {}};
    if (!replies.empty())
        r.body = jsonrpc::serialize(replies);
    co_await ctx_.replies.write(stream, req, r, keep_alive);
    co_return true;
}

} // namespace duet::transport::http
