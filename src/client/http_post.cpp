// One message POSTed over HTTP until it is answered or fails: its head, its authorization (again after a
// refusal the provider resolved), a JSON body or an SSE stream as the answer, and a legacy stream that ended
// early handed to a GET for resumption. The request side of a POST, apart from the connections it uses.
#include <duet/client/authorization.hpp>
#include <duet/client/detail/request_head.hpp>
#include <duet/jsonrpc/codec.hpp>
#include <duet/protocol/method_table.hpp>

#include "http_transport.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/beast/http.hpp>

namespace duet::client::detail::streamable_http {

std::optional<jsonrpc::request_id> id_of(jsonrpc::message const& m) {
    if (auto const* r = std::get_if<jsonrpc::request>(&m))
        return r->id;
    return std::nullopt;
}

// Parses the bytes already read past the head into `parser`. A plain answer usually arrives with its head in
// one read, and Beast's async_read_some would hand the parsed body back through a post (another trip through
// the scheduler per call). The error when those bytes are malformed or too many, where the read would have
// failed.
boost::system::error_code parse_buffered(exchange& x, response_parser& parser) {
    while (!parser.is_done() && x.buffer.size() != 0) {
        boost::system::error_code ec;
        auto const used = parser.put(x.buffer.data(), ec);
        x.buffer.consume(used);
        if (ec == bhttp::error::need_more || (!ec && used == 0))
            return {};
        if (ec)
            return ec;
    }
    return {};
}

awaitable<boost::system::error_code> http_transport::async_read_body(std::shared_ptr<exchange> x,
                                                                     response_parser& parser) {
    boost::system::error_code body_error;
    while (!body_error && !parser.is_done() && !x->abandoned && !closed_) {
        auto const got = co_await bhttp::async_read_some(x->io, x->buffer, parser, tuple_awaitable);
        body_error = std::get<0>(got);
    }
    co_return body_error;
}

// One message POSTed until it is answered or fails; with an authorization provider, again after each
// refusal the provider resolved, up to max_authorization_rounds times.
awaitable<void> http_transport::async_post(std::shared_ptr<http_transport> self, jsonrpc::message m,
                                           send_facts facts) {
    auto const id = id_of(m);
    bool const is_initialize =
        std::holds_alternative<jsonrpc::request>(m) &&
        std::get<jsonrpc::request>(m).method == protocol::info(protocol::method_id::initialize).name;
    outgoing req;
    req.body = jsonrpc::serialize(m);
    auto const& authorization = self->target_.authorization;
    for (int round = 0;; ++round) {
        bool const may_retry = authorization && round < max_authorization_rounds;
        auto refused = co_await async_post_once(self, id, is_initialize, req, facts, may_retry);
        if (!refused)
            co_return;
        // While the provider works (a whole authorization, maybe), the request can still be abandoned.
        auto waiting = std::make_shared<exchange>(self->ex_);
        if (id)
            self->open_[*id] = waiting;
        self->tell_authorizing(id, true);
        auto again =
            co_await authorization->async_refused(refused->status, refused->www_authenticate, refused->sent);
        self->tell_authorizing(id, false);
        self->forget(waiting, id);
        if (waiting->abandoned || self->closed_)
            co_return;
        if (again && *again)
            continue;
        if (id)
            self->fail(*id, again ? status_error(refused->status, {}, facts.legacy_session) : again.error());
        co_return;
    }
}

// The request's Authorization field from the provider; nullopt when the request failed meanwhile.
awaitable<std::optional<std::string>>
http_transport::async_credentials(std::optional<jsonrpc::request_id> const& id, exchange const& x) {
    auto header = co_await target_.authorization->async_header();
    if (x.abandoned || closed_)
        co_return std::nullopt;
    if (!header) {
        if (id)
            fail(*id, header.error());
        co_return std::nullopt;
    }
    co_return std::move(*header);
}

// Sends the POST once and delivers what answers it. A refusal is returned instead when `may_retry`.
awaitable<std::optional<http_transport::refusal>>
http_transport::async_post_once(std::shared_ptr<http_transport> self, std::optional<jsonrpc::request_id> id,
                                bool is_initialize, outgoing& req, send_facts const& facts, bool may_retry) {
    auto x = self->take_exchange();
    if (id)
        self->open_[*id] = x;
    std::string credentials;
    if (self->target_.authorization) {
        auto got = co_await self->async_credentials(id, *x);
        if (!got) {
            self->forget(x, id);
            co_return std::nullopt;
        }
        credentials = std::move(*got);
    }
    req.head.clear();
    {
        auto fields = self->base_fields(facts.legacy_session);
        fields.set("Content-Type", "application/json");
        fields.set("Accept", "application/json, text/event-stream");
        if (!credentials.empty())
            fields.set("Authorization", credentials);
        for (auto const& h : facts.headers)
            fields.set(h.name, h.value);
        append_request_head(req.head, "POST", self->url_.target, fields, req.body.size());
    }
    response_parser parser;
    auto const ec = co_await self->async_open(x, req, parser);
    if (x->abandoned || self->closed_) {
        self->forget(x, id);
        co_return std::nullopt;
    }
    if (ec) {
        if (id)
            self->fail(*id, connect_error(self->target_.url, ec, *x));
        self->forget(x, id);
        co_return std::nullopt;
    }
    if (may_retry && (parser.status() == 401 || parser.status() == 403)) {
        // Read to its end, so that the connection carries the request again.
        auto body_error = parse_buffered(*x, parser);
        if (!body_error && !parser.is_done())
            body_error = co_await self->async_read_body(x, parser);
        self->forget(x, id);
        if (x->abandoned || self->closed_)
            co_return std::nullopt;
        if (body_error)
            x->expire();
        else
            self->keep(x, parser);
        co_return refusal{parser.status(), parser.www_authenticate(), std::move(credentials)};
    }
    unsigned const status = parser.status();
    if (is_initialize)
        if (auto const sid = parser.session_id())
            self->session_id_ = std::string(*sid);
    bool const sse = parser.content_type().starts_with("text/event-stream");
    if (sse && status == 200) {
        auto outcome = co_await self->async_read_sse(x, parser, status, id, true);
        self->forget(x, id);
        self->keep(x, parser);
        if (!id || outcome.answered || x->abandoned || self->closed_)
            co_return std::nullopt;
        if (outcome.too_large) {
            self->fail(*id, message_too_large(self->max_message_bytes_, status));
            co_return std::nullopt;
        }
        if (facts.legacy_session && !outcome.last_event_id.empty()) {
            // A legacy stream that ended early is resumed on a GET with Last-Event-ID (SEP-1699).
            auto const delay = outcome.retry.value_or(default_reconnect);
            asio::co_spawn(self->ex_, async_get_stream(self, id, outcome.last_event_id, delay),
                           asio::detached);
            co_return std::nullopt;
        }
        self->fail(*id, make_error(errc::closed, "the response stream ended without an answer", status));
        co_return std::nullopt;
    }
    // A whole body: read it.
    auto body_error = parse_buffered(*x, parser);
    if (!body_error && !parser.is_done())
        body_error = co_await self->async_read_body(x, parser);
    self->forget(x, id);
    if (x->abandoned || self->closed_)
        co_return std::nullopt;
    if (body_error == bhttp::error::body_limit) {
        // Never read to its end: the connection goes with the rest of it.
        x->expire();
        if (id)
            self->fail(*id, message_too_large(self->max_message_bytes_, status));
        co_return std::nullopt;
    }
    self->keep(x, parser);
    std::optional<jsonrpc::error_object> id_less;
    bool answered = false;
    auto const& body = parser.body();
    // A 404 on a legacy session says the server forgot it, whatever error its body spells: the request
    // fails as session_expired (the connection is over: client_impl), not with the body's error.
    bool const session_lost = status == 404 && facts.legacy_session && self->session_id_ && !is_initialize;
    if (!session_lost && !body.empty() && parser.content_type().starts_with("application/json"))
        answered = self->deliver_text(body, status, id, &id_less);
    if (!id || answered)
        co_return std::nullopt;
    if (status == 202 || status == 200) {
        self->fail(*id, make_error(errc::protocol_violation,
                                   "the server answered the request with no message", status));
        co_return std::nullopt;
    }
    auto e = status_error(status, parser.reason(), facts.legacy_session);
    if (id_less && e.code == errc::http_status) {
        e = rpc_failure(*id_less, status);
    }
    self->fail(*id, std::move(e));
    co_return std::nullopt;
}

} // namespace duet::client::detail::streamable_http
