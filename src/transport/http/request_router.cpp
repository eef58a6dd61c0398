#include "request_router.hpp"

#include <duet/jsonrpc/codec.hpp>
#include <duet/protocol/envelope.hpp>
#include <duet/protocol/http_routing.hpp>
#include <duet/server/frame_storage.hpp>

#include "head_fields.hpp"
#include "probes.hpp"
#include "reply.hpp"
#include "request_gate.hpp"

#include <boost/beast/http/verb.hpp>

#include <variant>

namespace duet::transport::http {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;

asio::awaitable<bool> request_router::handle(bounded_socket& stream, request& req, bool keep_alive,
                                             modern_slot& slot, route_table::view& routes) {
    // Before every guard and the token: orchestrators probe a pod by its IP and hold none.
    if (auto const* probe = probe_at(ctx_.options, req))
        return answer_probe(ctx_.replies, stream, req, keep_alive, *probe);
    if (bearer_) {
        if (auto metadata = bearer_->metadata(req, path_of(req)))
            return ctx_.replies.send(stream, req, std::move(*metadata), keep_alive);
    }
    // The route points into the snapshot `routes` holds until the connection's next request; its server
    // outlives the http_server, so what follows keeps the server alone.
    auto verdict = guards_.check(req, routes_.current(routes));
    if (auto* refusal = std::get_if<reply>(&verdict))
        return ctx_.replies.send(stream, req, std::move(*refusal), keep_alive);
    auto& srv = *std::get<http_route const*>(verdict)->srv;
    if (bearer_) {
        auto checked = bearer_->check_now(req, stream.last_token());
        if (auto* refusal = std::get_if<reply>(&checked))
            return ctx_.replies.send(stream, req, std::move(*refusal), keep_alive);
        if (auto* later = std::get_if<bearer_guard::pending>(&checked))
            return verify_then_route(stream, req, keep_alive, srv, slot, std::move(later->token));
        stream.set_request_token(std::get<bearer_guard::token_ptr>(std::move(checked)));
    }
    return route(stream, req, keep_alive, srv, slot);
}

asio::awaitable<bool> request_router::route(bounded_socket& stream, request& req, bool keep_alive,
                                            server::server& srv, modern_slot& slot) {
    if (sessions_.worth_loading(req))
        return load_then_route(stream, req, keep_alive, srv, slot);
    return route_known(stream, req, keep_alive, srv, slot);
}

// A session this process does not know yet (another opened it, a shared store keeps it): asked for first.
asio::awaitable<bool> request_router::load_then_route(bounded_socket& stream, request& req, bool keep_alive,
                                                      server::server& srv, modern_slot& slot) {
    co_await sessions_.load(req);
    co_return co_await route_known(stream, req, keep_alive, srv, slot);
}

asio::awaitable<bool> request_router::route_known(bounded_socket& stream, request& req, bool keep_alive,
                                                  server::server& srv, modern_slot& slot) {
    if (req.method() == bhttp::verb::post)
        return post(stream, req, keep_alive, srv, slot);
    return session_request(stream, req, keep_alive, srv);
}

asio::awaitable<bool> request_router::verify_then_route(bounded_socket& stream, request& req, bool keep_alive,
                                                        server::server& srv, modern_slot& slot,
                                                        std::string token) {
    auto verdict = co_await bearer_->verifier().async_verify(token);
    auto settled = bearer_->settle(verdict, std::move(token), stream.last_token());
    if (auto* refusal = std::get_if<reply>(&settled))
        co_return co_await ctx_.replies.send(stream, req, std::move(*refusal), keep_alive);
    stream.set_request_token(std::get<bearer_guard::token_ptr>(std::move(settled)));
    co_return co_await route(stream, req, keep_alive, srv, slot);
}

std::optional<reply> request_router::scope_refusal(bounded_socket const& stream, server::server const& srv,
                                                   jsonrpc::request const& r) const {
    if (!bearer_ || !stream.caller() || !stream.caller()->token)
        return std::nullopt;
    auto const needed = srv.scopes_needed(r.method, r.params);
    if (needed.empty())
        return std::nullopt; // the server-wide scopes were checked with the token
    return bearer_->insufficient(*stream.caller()->token, needed);
}

// Every request of the batch is checked for its scopes before the gate is asked about any: a batch refused
// for a scope takes nothing from the gate's budgets.
std::optional<reply> request_router::batch_refusal(bounded_socket& stream, server::server const& srv,
                                                   jsonrpc::batch const& b) const {
    for (auto const& element : b.elements)
        if (auto const* r = element ? std::get_if<jsonrpc::request>(&*element) : nullptr)
            if (auto refusal = scope_refusal(stream, srv, *r))
                return refusal;
    for (auto const& element : b.elements)
        if (auto const* r = element ? std::get_if<jsonrpc::request>(&*element) : nullptr)
            if (auto refusal = gate_refusal_of(ctx_.options, stream, *r))
                return refusal;
    return std::nullopt;
}

std::optional<reply> request_router::store_away(std::optional<jsonrpc::request_id> const& id) const {
    if (!ctx_.sessions->shared() || ctx_.sessions->available())
        return std::nullopt;
    // Legacy sessions live in the shared store: none can be served, nor opened, until it is back.
    reply r{bhttp::status::service_unavailable,
            error_body(id, protocol::make_error(protocol::errc::internal_error,
                                                "The session store cannot be reached; retry shortly"))};
    r.headers.emplace_back("Retry-After", "1");
    return r;
}

asio::awaitable<bool> request_router::post(bounded_socket& stream, request& req, bool keep_alive,
                                           server::server& srv, modern_slot& slot) {
    // The body is parsed here, once, into the server's pool for parsed frames; what follows moves the parsed
    // messages along.
    auto frame =
        jsonrpc::parse_frame(req.body(), {.max_bytes = ctx_.options.max_body_bytes}, server::frame_storage());
    auto found = sessions_.find(req, srv, stream.caller().get());
    if (frame.is_batch()) {
        auto batch = std::get<jsonrpc::batch>(std::move(frame.content));
        return post_batch(stream, req, keep_alive, std::move(batch), std::move(found), srv);
    }
    auto& one = std::get<jsonrpc::parsed>(frame.content);
    if (!one) {
        reply r{bhttp::status::bad_request, {}};
        if (one.error().reply)
            r.body = jsonrpc::serialize(*one.error().reply);
        return ctx_.replies.send(stream, req, std::move(r), keep_alive);
    }
    auto& msg = *one;
    if (auto* r = std::get_if<jsonrpc::request>(&msg))
        return post_request(stream, req, keep_alive, std::move(*r), std::move(found), srv, slot);

    // Notifications and responses (to the server's requests) are accepted with 202 and never answered.
    auto const route = protocol::route_post_message(found.lookup);
    if (route != protocol::message_route::accept)
        if (auto away = store_away(std::nullopt))
            return ctx_.replies.send(stream, req, std::move(*away), keep_alive);
    switch (route) {
    case protocol::message_route::to_session:
        found.session->touch();
        sessions_.to_session(*found.session, std::move(msg));
        if (ctx_.sessions->shared()) { // every process holding the session hears it before the next request
            reply accepted{bhttp::status::accepted, {}};
            return sessions_.flush_then_send(stream, req, std::move(accepted), keep_alive);
        }
        break;
    case protocol::message_route::unknown_session: {
        reply answer = rejection_reply(protocol::unknown_session_rejection());
        return ctx_.replies.send(stream, req, std::move(answer), keep_alive);
    }
    case protocol::message_route::accept:
        break;
    }
    reply answer = reply{bhttp::status::accepted, {}};
    return ctx_.replies.send(stream, req, std::move(answer), keep_alive);
}

asio::awaitable<bool> request_router::post_request(bounded_socket& stream, request& req, bool keep_alive,
                                                   jsonrpc::request r, session_streams::found found,
                                                   server::server& srv, modern_slot& slot) {
    if (auto refusal = scope_refusal(stream, srv, r))
        return ctx_.replies.send(stream, req, std::move(*refusal), keep_alive);
    if (auto refusal = gate_refusal_of(ctx_.options, stream, r))
        return ctx_.replies.send(stream, req, std::move(*refusal), keep_alive);
    auto facts = facts_of(req, stream.caller());
    auto const claim = protocol::read_version_claim(r.params).what;
    auto const route = protocol::route_post(claim, r.method, found.lookup, srv.options().eras);
    if (route == protocol::post_route::open_session || route == protocol::post_route::in_session ||
        route == protocol::post_route::unknown_session)
        if (auto away = store_away(r.id))
            return ctx_.replies.send(stream, req, std::move(*away), keep_alive);
    if (route == protocol::post_route::unknown_session) {
        reply answer = rejection_reply(protocol::unknown_session_rejection(), r.id);
        return ctx_.replies.send(stream, req, std::move(answer), keep_alive);
    }
    // Admitted here, once, by the session the route names (a modern request, a new session and a request
    // with neither claim nor session are admitted outside any); the server carries the verdict out.
    protocol::session_view session;
    if (route == protocol::post_route::in_session)
        session.legacy = live(*found.session).conn->legacy_version();
    auto admitted = srv.admit(std::move(r), session, &facts);
    switch (route) {
    case protocol::post_route::modern:
        return modern_.serve(stream, req, keep_alive, slot, std::move(admitted), std::move(facts), srv);
    case protocol::post_route::modern_listen:
        return modern_.serve_listen(stream, req, keep_alive, std::move(admitted), std::move(facts), srv);
    case protocol::post_route::open_session:
        return sessions_.open_session(stream, req, keep_alive, std::move(admitted), std::move(facts), srv);
    case protocol::post_route::in_session:
        return sessions_.serve(stream, req, keep_alive, std::move(found.session), std::move(admitted),
                               std::move(facts));
    case protocol::post_route::sessionless:
    case protocol::post_route::unknown_session: // answered above
        break;
    }
    return modern_.serve_sessionless(stream, req, keep_alive, std::move(admitted), std::move(facts), srv);
}

asio::awaitable<bool> request_router::post_batch(bounded_socket& stream, request& req, bool keep_alive,
                                                 jsonrpc::batch b, session_streams::found found,
                                                 server::server const& srv) {
    auto const negotiated = found.session ? live(*found.session).conn->legacy_version() : std::nullopt;
    auto const route = protocol::route_batch(found.lookup, negotiated);
    if (route != protocol::batch_route::not_allowed)
        if (auto away = store_away(std::nullopt))
            return ctx_.replies.send(stream, req, std::move(*away), keep_alive);
    switch (route) {
    case protocol::batch_route::in_session:
        if (auto refusal = batch_refusal(stream, srv, b))
            return ctx_.replies.send(stream, req, std::move(*refusal), keep_alive);
        return sessions_.serve_batch(stream, req, keep_alive, std::move(b), std::move(found.session));
    case protocol::batch_route::unknown_session: {
        reply answer = rejection_reply(protocol::unknown_session_rejection());
        return ctx_.replies.send(stream, req, std::move(answer), keep_alive);
    }
    case protocol::batch_route::not_allowed:
        break;
    }
    reply answer = reply{bhttp::status::bad_request, error_body(std::nullopt, protocol::batch_not_allowed())};
    return ctx_.replies.send(stream, req, std::move(answer), keep_alive);
}

// GET and DELETE belong to a live legacy session.
asio::awaitable<bool> request_router::session_request(bounded_socket& stream, request& req, bool keep_alive,
                                                      server::server& srv) {
    auto found = sessions_.find(req, srv, stream.caller().get());
    auto const route = protocol::route_session_request(found.lookup);
    if (route != protocol::session_request_route::no_session)
        if (auto away = store_away(std::nullopt))
            return ctx_.replies.send(stream, req, std::move(*away), keep_alive);
    switch (route) {
    case protocol::session_request_route::in_session:
        if (req.method() == bhttp::verb::get)
            return sessions_.stream_to(stream, req, keep_alive, std::move(found.session));
        return sessions_.end_session(stream, req, keep_alive, std::move(found.session));
    case protocol::session_request_route::unknown_session: {
        reply answer = rejection_reply(protocol::unknown_session_rejection());
        return ctx_.replies.send(stream, req, std::move(answer), keep_alive);
    }
    case protocol::session_request_route::no_session:
        break;
    }
    reply answer =
        invalid_request_reply(bhttp::status::method_not_allowed,
                              "Invalid Request: GET and DELETE need a legacy session (Mcp-Session-Id)");
    // Without a session only POST is served here (RFC 9110: Allow lists what the resource supports now).
    answer.headers.emplace_back("Allow", "POST");
    return ctx_.replies.send(stream, req, std::move(answer), keep_alive);
}

} // namespace duet::transport::http
