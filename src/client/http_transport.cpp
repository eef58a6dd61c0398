// The client side of Streamable HTTP (DIGEST §9) on Beast: each POST on a connection of its own while it
// is in flight (requests run concurrently), connections kept alive and reused once their response was read
// to the end; a JSON body or an SSE stream answers a POST. Legacy sessions add Mcp-Session-Id (minted by the
// server on initialize) and MCP-Protocol-Version, a standalone GET stream for the server's own messages,
// resumption of a POST stream that ended early (GET with Last-Event-ID after the server's `retry`), and
// DELETE at the end. Modern requests carry the routing headers the session computed; closing their stream is
// their cancellation.
#include <duet/client/authorization.hpp>
#include <duet/client/detail/request_head.hpp>
#include <duet/client/detail/sse_parser.hpp>
#include <duet/jsonrpc/codec.hpp>
#include <duet/protocol/header_codec.hpp>
#include <duet/protocol/method_table.hpp>

#include "response_parser.hpp"
#include "support/deadline_watch.hpp"
#include "support/descriptors.hpp"
#include "support/send_now.hpp"
#include "tls/context.hpp"
#include "tls/either_stream.hpp"
#include "tls/peer_check.hpp"
#include "transport.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <openssl/ssl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>

namespace duet::client::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using asio::awaitable;
using asio::use_awaitable;
using tcp = asio::ip::tcp;
using ::duet::support::deadline_watch;
using ::duet::support::watched_deadline;
constexpr auto tuple_awaitable = asio::as_tuple(use_awaitable);

namespace {

constexpr auto connect_timeout = std::chrono::seconds(30);
/// How long a POST's SSE stream may stay open once its answer arrived, read so that its connection is kept.
constexpr auto stream_end_grace = std::chrono::seconds(1);
constexpr auto default_reconnect = std::chrono::milliseconds(1000);
constexpr int max_resumptions = 5;
/// Idle keep-alive connections kept for the next POSTs; more are closed as their exchanges end.
constexpr std::size_t max_idle_connections = 64;

// One HTTP exchange in flight: its socket, so that abandoning the request can close it.
struct exchange {
    explicit exchange(asio::any_io_executor ex) : stream(ex), io(stream.socket()) {}
    beast::tcp_stream stream; ///< connects (with Beast's timeout); reads and writes go through `io`
    tls::either_stream io;    ///< the socket, or TLS over it for https
    std::string failure;      ///< why connecting failed, in words, when the error code says too little
    beast::flat_buffer buffer;
    bool abandoned = false;
    bool connected = false; ///< a kept-alive connection, reused: the server may have closed it meanwhile
    /// While its request is written and the answer's head read (deadline_watch.hpp).
    watched_deadline deadline;
    void expire() {
        boost::system::error_code ignored;
        stream.socket().close(ignored);
    }
    /// While the rest of a POST's SSE stream is read after its answer (a watch of its own: an item is on one
    /// watch's list at a time).
    struct tail_read {
        watched_deadline deadline;
        exchange* owner;
        void expire() { owner->expire(); }
    } tail{{}, this};
};

// A request as it goes out: its head written by hand (request_head.hpp) and its body, kept together so that a
// request on a kept-alive connection the server had closed can go again.
struct outgoing {
    std::string head;
    std::string body;
};

std::optional<jsonrpc::request_id> id_of(jsonrpc::message const& m) {
    if (auto const* r = std::get_if<jsonrpc::request>(&m))
        return r->id;
    return std::nullopt;
}

bool answers(jsonrpc::message const& m, jsonrpc::request_id const& id) {
    if (auto const* r = std::get_if<jsonrpc::response>(&m))
        return r->id == id;
    if (auto const* e = std::get_if<jsonrpc::error_response>(&m))
        return e->id && *e->id == id;
    return false;
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

// A connection that could not be made: tls_failed when its TLS handshake was what failed.
error connect_error(std::string const& url, boost::system::error_code ec, exchange const& x) {
    if (!x.failure.empty())
        return make_error(errc::tls_failed, "cannot reach " + url + ": " + x.failure);
    return make_error(errc::connect_failed, "cannot reach " + url + ": " + ec.message());
}

error status_error(unsigned status, std::string_view reason, bool legacy_session) {
    if (status == 401 || status == 403)
        return make_error(errc::auth_required,
                          "the server requires authorization (HTTP " + std::to_string(status) + ")", status);
    if (status == 404 && legacy_session)
        return make_error(errc::session_expired, "the server no longer knows this session (HTTP 404)",
                          status);
    return make_error(errc::http_status, "HTTP " + std::to_string(status) + " " + std::string(reason),
                      status);
}

class http_transport : public transport, public std::enable_shared_from_this<http_transport> {
public:
    http_transport(asio::any_io_executor ex, http_target target, http_url url, std::size_t max_message_bytes)
        : ex_(ex), target_(std::move(target)), url_(std::move(url)), authority_(url_.authority()),
          max_message_bytes_(max_message_bytes) {}

    awaitable<result<void>> async_start(std::weak_ptr<transport_sink> sink) override {
        sink_ = std::move(sink);
        if (url_.tls) {
            auto made = tls::make_client_context(target_.tls);
            if (!made.context)
                co_return make_error(errc::usage, "TLS: " + made.error);
            tls_context_ = std::move(made.context);
        }
        co_return result<void>{};
    }

    void send(jsonrpc::message m, send_facts facts) override {
        if (closed_)
            return;
        auto self = shared_from_this();
        asio::co_spawn(ex_, async_post(std::move(self), std::move(m), std::move(facts)), asio::detached);
    }

    void abandon(jsonrpc::request_id const& id) override {
        auto const it = open_.find(id);
        if (it == open_.end())
            return;
        if (auto x = it->second.lock()) {
            x->abandoned = true;
            boost::system::error_code ignored;
            x->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
            x->stream.socket().close(ignored);
        }
        open_.erase(it);
    }

    void begin_legacy_session(protocol::version v) override {
        legacy_version_ = v;
        auto self = shared_from_this();
        std::optional<jsonrpc::request_id> standalone; // awaits no answer
        std::string no_event_id;
        std::chrono::milliseconds const at_once{0};
        asio::co_spawn(
            ex_, async_get_stream(std::move(self), std::move(standalone), std::move(no_event_id), at_once),
            asio::detached);
    }

    awaitable<void> async_close() override {
        if (closed_)
            co_return;
        closed_ = true;
        for (auto& kv : open_)
            if (auto x = kv.second.lock()) {
                x->abandoned = true;
                boost::system::error_code ignored;
                x->stream.socket().close(ignored);
            }
        open_.clear();
        for (auto& w : streams_)
            if (auto x = w.lock()) {
                x->abandoned = true;
                boost::system::error_code ignored;
                x->stream.socket().close(ignored);
            }
        streams_.clear();
        for (auto& x : idle_) {
            boost::system::error_code ignored;
            x->stream.socket().close(ignored);
        }
        idle_.clear();
        if (session_id_) {
            // The session is over: tell the server (it may answer 405, which is fine).
            auto x = std::make_shared<exchange>(ex_);
            std::string credentials;
            if (target_.authorization)
                if (auto got = co_await target_.authorization->async_header())
                    credentials = std::move(*got);
            outgoing req;
            auto fields = base_fields(true);
            if (!credentials.empty())
                fields.set("Authorization", credentials);
            append_request_head(req.head, "DELETE", url_.target, fields, 0);
            response_parser parser;
            [[maybe_unused]] auto ec = co_await async_open(x, req, parser);
        }
    }

    [[nodiscard]] bool is_http() const noexcept override { return true; }

private:
    // The fields every request carries, in the order the client always set them. Views of members: the
    // head is written before the caller's next suspension.
    request_fields base_fields(bool legacy_session) const {
        request_fields f;
        f.set("Host", authority_);
        f.set("User-Agent", "duet-client");
        for (auto const& h : target_.headers)
            f.set(h.first, h.second);
        if (legacy_session) {
            if (session_id_)
                f.set("Mcp-Session-Id", *session_id_);
            if (legacy_version_)
                f.set("MCP-Protocol-Version", protocol::to_string(*legacy_version_));
        }
        return f;
    }

    // An idle kept-alive connection, or a fresh exchange to connect.
    std::shared_ptr<exchange> take_exchange() {
        while (!idle_.empty()) {
            auto x = std::move(idle_.back());
            idle_.pop_back();
            if (x->stream.socket().is_open())
                return x;
        }
        return std::make_shared<exchange>(ex_);
    }

    // After a response read to its end: the connection serves the next POST unless either side ends it.
    void keep(std::shared_ptr<exchange> const& x, response_parser const& parser) {
        remember_tls_session(*x);
        if (closed_ || x->abandoned || !parser.is_done() || !parser.keep_alive() || x->buffer.size() != 0 ||
            idle_.size() >= max_idle_connections)
            return;
        idle_.push_back(x);
    }

    // The session to resume on the next connection. TLS 1.3 sends its tickets after the handshake, so this is
    // also read again once an answer arrived. Kept as a copy: OpenSSL marks a connection's own session not
    // resumable when the connection is freed without a close_notify sent, as one the server closed is.
    void remember_tls_session(exchange& x) {
        if (!x.io.is_tls())
            return;
        SSL_SESSION* s = SSL_get0_session(x.io.tls()->native_handle());
        if (!s || s == tls_session_source_.get() || !SSL_SESSION_is_resumable(s))
            return;
        SSL_SESSION* copy = SSL_SESSION_dup(s);
        if (!copy || SSL_SESSION_up_ref(s) != 1) {
            SSL_SESSION_free(copy);
            return;
        }
        tls_session_.reset(copy, &SSL_SESSION_free);
        tls_session_source_.reset(s, &SSL_SESSION_free); // held, so that its address names no other
    }

    // The TLS handshake on a new connection: SNI, the host-name check, the last session offered for reuse.
    awaitable<boost::system::error_code> async_handshake(std::shared_ptr<exchange> x) {
        x->io.start_tls(*tls_context_);
        auto* stream = x->io.tls();
        auto const verdict =
            tls::check_peer(*stream, url_.host, target_.tls.insecure && !target_.tls.context);
        if (tls_session_)
            SSL_set_session(stream->native_handle(), tls_session_.get());
        head_deadlines_.start(x);
        auto const done = co_await stream->async_handshake(asio::ssl::stream_base::client, tuple_awaitable);
        head_deadlines_.stop(*x);
        auto ec = std::get<0>(done);
        if (ec) {
            x->failure = x->deadline.expired ? "the TLS handshake timed out"
                                             : tls::describe_handshake_failure(ec, *verdict);
            if (x->deadline.expired)
                ec = beast::error::timeout;
            co_return ec;
        }
        remember_tls_session(*x);
        co_return boost::system::error_code{};
    }

    awaitable<boost::system::error_code> async_connect(std::shared_ptr<exchange> x) {
        x->io.reset();
        x->failure.clear();
        if (!endpoints_) {
            tcp::resolver resolver(ex_);
            auto const resolved =
                co_await resolver.async_resolve(url_.host, std::to_string(url_.port), tuple_awaitable);
            if (std::get<0>(resolved))
                co_return std::get<0>(resolved);
            endpoints_ = std::get<1>(resolved); // loopback names do not move while the client lives
        }
        x->stream.expires_after(connect_timeout);
        auto const connected = co_await x->stream.async_connect(*endpoints_, tuple_awaitable);
        // From here the exchange's own deadline bounds it (async_open()): Beast's expiry would arm and cancel
        // a timer around every read and write.
        x->stream.expires_never();
        if (std::get<0>(connected))
            co_return std::get<0>(connected);
        boost::system::error_code
            ignored; // small requests and answers go out at once, not after a delayed ACK
        x->stream.socket().set_option(tcp::no_delay(true), ignored);
        // Asio opens sockets without close-on-exec, and Beast opens this one inside the connect: marked as
        // soon as it is ours. A child forked meanwhile closes it anyway (stdio_transport).
        support::set_close_on_exec(x->stream.socket().native_handle());
        if (url_.tls)
            if (auto ec = co_await async_handshake(x))
                co_return ec;
        x->connected = true;
        co_return boost::system::error_code{};
    }

    // Connects (or reuses a kept-alive connection), writes `req` and reads the response head into `parser`.
    // A reused connection the server closed while it was idle fails before any byte of the answer arrives:
    // the request goes again once, on a new connection.
    awaitable<boost::system::error_code> async_open(std::shared_ptr<exchange> x, outgoing const& req,
                                                    response_parser& parser) {
        auto const bytes = std::array{asio::buffer(req.head), asio::buffer(req.body)};
        parser.body_limit(boost::none); // response_parser bounds whole answers; streams, the SSE reader
        parser.max_whole_body(max_message_bytes_);
        parser.header_limit(64 * 1024);
        bool const reused = x->connected;
        if (!reused)
            if (auto ec = co_await async_connect(x))
                co_return ec;
        boost::system::error_code ec;
        for (bool retried = false;; retried = true) {
            head_deadlines_.start(x);
            ec = {};
            // Plain connections try the socket first; TLS goes through OpenSSL.
            auto const rest =
                x->io.is_tls() ? bytes : support::send_now(x->stream.socket().native_handle(), bytes);
            if (asio::buffer_size(rest) != 0) {
                auto const written = co_await asio::async_write(x->io, rest, tuple_awaitable);
                ec = std::get<0>(written);
            }
            if (!ec) {
                auto const head =
                    co_await bhttp::async_read_header(x->io, x->buffer, parser, tuple_awaitable);
                ec = std::get<0>(head);
            }
            head_deadlines_.stop(*x);
            if (ec && x->deadline.expired)
                ec = beast::error::timeout; // what Beast's own expiry reported
            else if (ec && !reused && x->io.is_tls() && !parser.got_some() &&
                     ec.category() == asio::error::get_ssl_category())
                // TLS 1.3 servers judge the client's certificate after the client's side of the handshake
                // is done: their refusal is an alert on the first read, still a handshake failure.
                x->failure = "TLS handshake failed: " + tls::describe_tls_error(ec);
            if (!ec || retried || !reused || x->abandoned || closed_ || parser.got_some())
                break;
            boost::system::error_code ignored;
            x->stream.socket().close(ignored);
            x->buffer.clear();
            x->connected = false;
            if (auto again = co_await async_connect(x))
                co_return again;
        }
        co_return ec;
    }

    void deliver(jsonrpc::message m, unsigned status, std::optional<jsonrpc::request_id> const& related) {
        if (auto sink = sink_.lock())
            sink->on_message(std::move(m), status, related ? &*related : nullptr);
    }
    void tell_authorizing(std::optional<jsonrpc::request_id> const& id, bool underway) {
        if (auto sink = sink_.lock(); sink && id)
            sink->on_authorizing(*id, underway);
    }
    void fail(jsonrpc::request_id const& id, error e) {
        if (auto sink = sink_.lock())
            sink->on_request_failed(id, std::move(e));
    }

    // Parses one body (or SSE data field) and delivers its messages; true when one of them answers `id`.
    bool deliver_text(std::string_view text, unsigned status, std::optional<jsonrpc::request_id> const& id,
                      std::optional<jsonrpc::error_object>* id_less_error) {
        bool answered = false;
        auto frame = jsonrpc::parse_frame(text);
        auto one = [&](jsonrpc::parsed& p) {
            if (!p)
                return;
            if (id && answers(*p, *id))
                answered = true;
            if (auto const* e = std::get_if<jsonrpc::error_response>(&*p); e && !e->id) {
                if (id_less_error)
                    *id_less_error = e->error;
                return;
            }
            deliver(std::move(*p), status, id);
        };
        if (auto* single = std::get_if<jsonrpc::parsed>(&frame.content))
            one(*single);
        else
            for (auto& e : std::get<jsonrpc::batch>(frame.content).elements)
                one(e);
        return answered;
    }

    struct sse_outcome {
        bool answered = false;
        bool too_large = false; ///< a line or event over max_message_bytes_: the stream was left there
        std::string last_event_id;
        std::optional<std::chrono::milliseconds> retry;
    };

    // Reads an SSE body to its end, delivering every message. Once `id`'s answer arrived, a resumption stream
    // is left at once; a POST's stream (`finish_post`) is read to its end for up to stream_end_grace more: a
    // server writes the stream's last chunk right after the answer's event, often in a write of its own, and
    // a response read to its end keeps its connection for the next POST instead of costing a new one.
    awaitable<sse_outcome> async_read_sse(std::shared_ptr<exchange> x, response_parser& parser,
                                          unsigned status, std::optional<jsonrpc::request_id> id,
                                          bool finish_post) {
        sse_parser sse(max_message_bytes_);
        sse_outcome out;
        auto take = [&] {
            auto& body = parser.body();
            for (auto const& e : sse.feed(body))
                if (e.has_data && !e.data.empty() && deliver_text(e.data, status, id, nullptr))
                    out.answered = true;
            body.clear();
            if (sse.overflowed()) {
                // Never read to its end: the connection goes, and the rest of the stream with it.
                out.too_large = true;
                x->expire();
            }
        };
        take();
        bool finishing = false;
        while (!parser.is_done() && !x->abandoned && !closed_ && !out.too_large) {
            if (id && out.answered && !finishing) {
                if (!finish_post)
                    break; // the response SHOULD end the stream; never wait for the server to close it
                finishing = true;
                tail_deadlines_.start(std::shared_ptr<exchange::tail_read>(x, &x->tail));
            }
            auto const got = co_await bhttp::async_read_some(x->io, x->buffer, parser, tuple_awaitable);
            take();
            if (std::get<0>(got))
                break;
        }
        if (finishing)
            decltype(tail_deadlines_)::stop(x->tail);
        out.last_event_id = sse.last_event_id();
        out.retry = sse.retry();
        co_return out;
    }

    void forget(std::shared_ptr<exchange> const& x, std::optional<jsonrpc::request_id> const& id) {
        if (id) {
            auto const it = open_.find(*id);
            if (it != open_.end() && it->second.lock() == x)
                open_.erase(it);
        }
    }

    // A refusal (401 or 403) the authorization provider is to hear about before the request goes again.
    struct refusal {
        unsigned status = 0;
        std::vector<std::string> www_authenticate;
        std::string sent; ///< the Authorization field the refused request carried
    };

    // One message POSTed until it is answered or fails; with an authorization provider, again after each
    // refusal the provider resolved, up to max_authorization_rounds times.
    static awaitable<void> async_post(std::shared_ptr<http_transport> self, jsonrpc::message m,
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
            auto again = co_await authorization->async_refused(refused->status, refused->www_authenticate,
                                                               refused->sent);
            self->tell_authorizing(id, false);
            self->forget(waiting, id);
            if (waiting->abandoned || self->closed_)
                co_return;
            if (again && *again)
                continue;
            if (id)
                self->fail(*id,
                           again ? status_error(refused->status, {}, facts.legacy_session) : again.error());
            co_return;
        }
    }

    // The request's Authorization field from the provider; nullopt when the request failed meanwhile.
    awaitable<std::optional<std::string>> async_credentials(std::optional<jsonrpc::request_id> const& id,
                                                            exchange const& x) {
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
    static awaitable<std::optional<refusal>> async_post_once(std::shared_ptr<http_transport> self,
                                                             std::optional<jsonrpc::request_id> id,
                                                             bool is_initialize, outgoing& req,
                                                             send_facts const& facts, bool may_retry) {
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
            while (!body_error && !parser.is_done() && !x->abandoned && !self->closed_) {
                auto const got = co_await bhttp::async_read_some(x->io, x->buffer, parser, tuple_awaitable);
                body_error = std::get<0>(got);
            }
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
        while (!body_error && !parser.is_done() && !x->abandoned && !self->closed_) {
            auto const got = co_await bhttp::async_read_some(x->io, x->buffer, parser, tuple_awaitable);
            body_error = std::get<0>(got);
        }
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
        bool const session_lost =
            status == 404 && facts.legacy_session && self->session_id_ && !is_initialize;
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

    // A legacy GET stream: the standalone one (`awaited` empty; reconnects while the session lives) or the
    // resumption of a POST stream (`awaited` set; ends once that answer arrived).
    static awaitable<void> async_get_stream(std::shared_ptr<http_transport> self,
                                            std::optional<jsonrpc::request_id> awaited,
                                            std::string last_event_id, std::chrono::milliseconds delay) {
        asio::steady_timer timer(self->ex_);
        int refusals = 0;
        int unreachable = 0; ///< connections refused in a row
        for (int attempt = 0; !self->closed_; ++attempt) {
            if (delay.count() > 0) {
                timer.expires_after(delay);
                co_await timer.async_wait(tuple_awaitable);
                if (self->closed_)
                    co_return;
            }
            if (awaited && attempt >= max_resumptions) {
                self->fail(*awaited, make_error(errc::closed, "the response stream could not be resumed"));
                co_return;
            }
            auto x = std::make_shared<exchange>(self->ex_);
            std::erase_if(self->streams_, [](auto const& w) { return w.expired(); });
            self->streams_.push_back(x);
            if (awaited)
                self->open_[*awaited] = x;
            std::string credentials;
            if (self->target_.authorization) {
                auto got = co_await self->async_credentials(awaited, *x);
                if (!got) {
                    self->forget(x, awaited);
                    co_return;
                }
                credentials = std::move(*got);
            }
            outgoing req;
            {
                auto fields = self->base_fields(true);
                fields.set("Accept", "text/event-stream");
                if (!last_event_id.empty())
                    fields.set("Last-Event-ID", last_event_id);
                if (!credentials.empty())
                    fields.set("Authorization", credentials);
                append_request_head(req.head, "GET", self->url_.target, fields, 0);
            }
            response_parser parser;
            auto const ec = co_await self->async_open(x, req, parser);
            if (x->abandoned || self->closed_) {
                self->forget(x, awaited);
                co_return;
            }
            unsigned const status = ec ? 0 : parser.status();
            if ((status == 401 || status == 403) && self->target_.authorization &&
                refusals++ < max_authorization_rounds) {
                // Asked again with what the provider then holds; the answer's body is not needed.
                x->expire();
                auto const challenges = parser.www_authenticate();
                auto again =
                    co_await self->target_.authorization->async_refused(status, challenges, credentials);
                if (x->abandoned || self->closed_) {
                    self->forget(x, awaited);
                    co_return;
                }
                if (again && *again) {
                    delay = std::chrono::milliseconds(0);
                    --attempt;
                    continue;
                }
            }
            bool const sse = !ec && parser.content_type().starts_with("text/event-stream");
            if (ec && ++unreachable <= max_resumptions) {
                // The server is away (restarting, say): try again, waiting longer each time.
                self->forget(x, awaited);
                delay = std::max(delay * 2, default_reconnect);
                continue;
            }
            if (ec && !awaited) {
                // Gone for good: the connection is over for its owner, as when the session is forgotten.
                self->forget(x, awaited);
                if (auto sink = self->sink_.lock())
                    sink->on_closed(connect_error(self->target_.url, ec, *x));
                co_return;
            }
            if (ec || status != 200 || !sse) {
                // No stream offered (405) or none for us: the standalone stream is optional; a resumption
                // that cannot happen loses its request.
                self->forget(x, awaited);
                if (awaited)
                    self->fail(*awaited, ec ? connect_error(self->target_.url, ec, *x)
                                            : status_error(status, parser.reason(), true));
                else if (!ec && status == 404 && self->session_id_)
                    // The server no longer knows the session (it restarted, or expired it): nothing will
                    // come on it again, and the connection is over for its owner to begin anew.
                    if (auto sink = self->sink_.lock())
                        sink->on_closed(status_error(status, parser.reason(), true));
                co_return;
            }
            unreachable = 0;
            auto outcome = co_await self->async_read_sse(x, parser, 0, awaited, false);
            self->forget(x, awaited);
            if (awaited && outcome.answered)
                co_return;
            if (awaited && outcome.too_large) {
                self->fail(*awaited, message_too_large(self->max_message_bytes_));
                co_return;
            }
            if (x->abandoned)
                co_return;
            if (!outcome.last_event_id.empty())
                last_event_id = outcome.last_event_id;
            delay = outcome.retry.value_or(default_reconnect);
        }
    }

    asio::any_io_executor ex_;
    http_target target_;
    http_url url_;
    std::string authority_; ///< the Host field, computed once
    std::weak_ptr<transport_sink> sink_;
    std::optional<std::string> session_id_;
    std::optional<protocol::version> legacy_version_;
    std::map<jsonrpc::request_id, std::weak_ptr<exchange>> open_;
    std::vector<std::weak_ptr<exchange>> streams_;
    std::vector<std::shared_ptr<exchange>> idle_; ///< kept-alive connections between POSTs
    std::optional<tcp::resolver::results_type> endpoints_;
    std::shared_ptr<asio::ssl::context> tls_context_; ///< https only
    std::shared_ptr<SSL_SESSION> tls_session_;        ///< the last resumable one, offered on reconnect
    std::shared_ptr<SSL_SESSION> tls_session_source_; ///< the connection's session it was copied from
    bool closed_ = false;
    std::size_t max_message_bytes_;
    /// Bounds the write of a request and the read of its answer's head (Beast's expiry did, per operation).
    deadline_watch<exchange> head_deadlines_{ex_, connect_timeout};
    /// Bounds the read of a POST's SSE stream past its answer.
    deadline_watch<exchange::tail_read> tail_deadlines_{ex_, stream_end_grace};
};

} // namespace

std::shared_ptr<transport> make_http_transport(asio::any_io_executor ex, http_target target,
                                               std::size_t max_message_bytes) {
    auto url = parse_http_url(target.url);
    if (!url)
        return nullptr;
    return std::make_shared<http_transport>(ex, std::move(target), std::move(*url), max_message_bytes);
}

} // namespace duet::client::detail
