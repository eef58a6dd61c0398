#include <duet/jsonrpc/codec.hpp>
#include <duet/protocol/envelope.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/protocol/header_codec.hpp>
#include <duet/server/connection.hpp>
#include <duet/transport/http_server.hpp>

#include "origin.hpp"
#include "session_store.hpp"
#include "stream_queue.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <thread>

namespace duet::transport {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using request_t = bhttp::request<bhttp::string_body>;
using http::legacy_session;
using http::stream_queue;

namespace {

constexpr auto use_nothrow = asio::as_tuple(asio::use_awaitable);
constexpr std::string_view session_header = "Mcp-Session-Id";
constexpr std::string_view allow_methods = "GET, POST, DELETE";

std::optional<std::string_view> header(request_t const& req, std::string_view name) {
    auto it = req.find(name);
    if (it == req.end())
        return std::nullopt;
    return std::string_view(it->value().data(), it->value().size());
}

bool accepts(request_t const& req, std::string_view type) {
    auto const a = header(req, "Accept");
    if (!a)
        return false;
    return a->find(type) != std::string_view::npos || a->find("*/*") != std::string_view::npos;
}

protocol::http_facts facts_of(request_t const& req) {
    protocol::http_facts f;
    for (auto const& field : req) {
        auto const name = field.name_string();
        std::string_view const n(name.data(), name.size());
        if (protocol::iequals(n, "MCP-Protocol-Version") || protocol::iequals(n, "Mcp-Method") ||
            protocol::iequals(n, "Mcp-Name") ||
            (n.size() > 10 && protocol::iequals(n.substr(0, 10), "Mcp-Param-")))
            f.headers.push_back({std::string(n), std::string(field.value())});
    }
    return f;
}

std::string error_body(std::optional<jsonrpc::request_id> id, protocol::error_object e) {
    return jsonrpc::serialize(jsonrpc::error_response{std::move(id), std::move(e)});
}

void log_stderr(std::string const& s) {
    std::fprintf(stderr, "duet http: %s\n", s.c_str());
}

} // namespace

class http_server::impl : public std::enable_shared_from_this<http_server::impl> {
public:
    impl(server::server& srv, http_options options)
        : server_(srv), options_(std::move(options)), acceptor_(io_), sessions_(options_.max_sessions),
          signals_(io_, SIGINT, SIGTERM), sweep_(io_) {}

    boost::system::error_code listen() {
        boost::system::error_code ec;
        auto const address = asio::ip::make_address(options_.host, ec);
        if (ec)
            return ec;
        tcp::endpoint const ep(address, options_.port);
        acceptor_.open(ep.protocol(), ec);
        if (!ec)
            acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
        if (!ec)
            acceptor_.bind(ep, ec);
        if (!ec)
            acceptor_.listen(asio::socket_base::max_listen_connections, ec);
        if (ec)
            return ec;
        port_ = acceptor_.local_endpoint().port();
        loopback_ = address.is_loopback();
        return {};
    }

    std::uint16_t port() const noexcept { return port_; }

    std::string url() const {
        auto host = options_.host;
        if (host.find(':') != std::string::npos)
            host = "[" + host + "]";
        return "http://" + host + ":" + std::to_string(port_) + options_.path;
    }

    void run() {
        asio::co_spawn(io_, accept_loop(), asio::detached);
        signals_.async_wait([self = shared_from_this()](boost::system::error_code ec, int) {
            if (!ec)
                self->stop();
        });
        schedule_sweep();
        std::vector<std::thread> threads;
        for (std::size_t i = 1; i < std::max<std::size_t>(1, options_.io_threads); ++i)
            threads.emplace_back([this] { io_.run(); });
        io_.run();
        for (auto& t : threads)
            t.join();
    }

    void stop() {
        asio::post(io_, [self = shared_from_this()] { self->begin_drain(); });
    }

private:
    // ---- lifecycle ----------------------------------------------------------------------------------------

    void begin_drain() {
        if (draining_.exchange(true))
            return;
        boost::system::error_code ignored;
        acceptor_.close(ignored);
        signals_.cancel(ignored);
        sweep_.cancel();
        // Streams end with their final messages; sessions end; requests in flight get until the deadline.
        for (auto const& s : sessions_.all()) {
            s->end();
            s->conn->finish([] {});
        }
        for (auto const& [c, listen] : live_connections()) {
            // A listen's stream ends after the result finish() writes to it; other requests run to their end.
            if (listen)
                c->finish([listen] { listen->close(); });
            else
                c->finish([] {});
        }
        auto deadline = std::make_shared<asio::steady_timer>(io_, options_.drain_deadline);
        deadline->async_wait([this, deadline](boost::system::error_code) {
            if (open_sockets_ > 0)
                log_stderr("drain deadline reached with " + std::to_string(open_sockets_.load()) +
                           " connection(s) still open");
            io_.stop();
        });
        maybe_stop();
    }

    void maybe_stop() {
        if (draining_ && open_sockets_ == 0)
            io_.stop();
    }

    void schedule_sweep() {
        sweep_.expires_after(std::chrono::seconds(30));
        sweep_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (ec)
                return;
            for (auto const& s : self->sessions_.expire(self->options_.session_expiry)) {
                s->end();
                s->conn->finish([] {});
            }
            self->schedule_sweep();
        });
    }

    // A modern request's connection, and the queue of its stream when it is a listen (which the drain
    // closes).
    void track(std::shared_ptr<server::connection> const& c, std::shared_ptr<stream_queue> const& listen) {
        std::lock_guard lock(live_mutex_);
        std::erase_if(live_, [](auto const& w) { return w.first.expired(); });
        live_.emplace_back(c, listen);
    }

    std::vector<std::pair<std::shared_ptr<server::connection>, std::shared_ptr<stream_queue>>>
    live_connections() {
        std::lock_guard lock(live_mutex_);
        std::vector<std::pair<std::shared_ptr<server::connection>, std::shared_ptr<stream_queue>>> out;
        for (auto const& [w, listen] : live_)
            if (auto c = w.lock())
                out.emplace_back(std::move(c), listen.lock());
        return out;
    }

    asio::awaitable<void> accept_loop() {
        for (;;) {
            // No structured bindings across co_await: GCC 12 mislays them in the coroutine frame.
            auto ec_result = co_await acceptor_.async_accept(asio::make_strand(io_), use_nothrow);
            auto ec = std::get<0>(ec_result);
            auto socket = std::move(std::get<1>(ec_result));

            if (ec) {
                if (ec == asio::error::operation_aborted || draining_)
                    co_return;
                continue;
            }
            socket.set_option(tcp::no_delay(true), ec);
            ++open_sockets_;
            auto ex = socket.get_executor();
            asio::co_spawn(ex, serve_socket(beast::tcp_stream(std::move(socket))),
                           [self = shared_from_this()](std::exception_ptr e) {
                               if (e) {
                                   try {
                                       std::rethrow_exception(e);
                                   } catch (std::exception const& x) {
                                       log_stderr(std::string("connection ended: ") + x.what());
                                   }
                               }
                               --self->open_sockets_;
                               self->maybe_stop();
                           });
        }
    }

    // ---- one TCP connection -------------------------------------------------------------------------------

    struct reply {
        bhttp::status status = bhttp::status::ok;
        std::string body;
        std::string content_type = "application/json";
        std::vector<std::pair<std::string, std::string>> headers;
    };

    // Coroutine arguments are lvalues on purpose: GCC 12 can destroy a temporary passed to a coroutine before
    // the coroutine is done with it, so callers name what they pass.
    asio::awaitable<void> write_reply(beast::tcp_stream& stream, request_t const& req, reply& r,
                                      bool keep_alive) {
        bhttp::response<bhttp::string_body> res{r.status, req.version()};
        if (!r.body.empty())
            res.set(bhttp::field::content_type, r.content_type);
        for (auto& [k, v] : r.headers)
            res.set(k, v);
        res.body() = std::move(r.body);
        res.keep_alive(keep_alive);
        res.prepare_payload();
        stream.expires_after(options_.read_timeout);
        co_await bhttp::async_write(stream, res, use_nothrow);
    }

    asio::awaitable<void> serve_socket(beast::tcp_stream stream) {
        beast::flat_buffer buffer;
        for (;;) {
            bhttp::request_parser<bhttp::string_body> parser;
            parser.header_limit(static_cast<std::uint32_t>(options_.max_header_bytes));
            parser.body_limit(options_.max_body_bytes);
            stream.expires_after(options_.idle_timeout);
            // No structured bindings across co_await: GCC 12 mislays them in the coroutine frame.
            auto ec_result = co_await bhttp::async_read(stream, buffer, parser, use_nothrow);
            auto ec = std::get<0>(ec_result);

            if (ec) {
                request_t dummy;
                dummy.version(11);
                if (ec == bhttp::error::body_limit) {
                    reply answer = reply{
                        bhttp::status::payload_too_large,
                        error_body(std::nullopt, protocol::invalid_request(
                                                     "Invalid Request: the body exceeds " +
                                                     std::to_string(options_.max_body_bytes) + " bytes"))};
                    co_await write_reply(stream, dummy, answer, false);
                } else if (ec == bhttp::error::header_limit) {
                    reply answer =
                        reply{bhttp::status::request_header_fields_too_large,
                              error_body(std::nullopt,
                                         protocol::invalid_request("Invalid Request: headers too large"))};
                    co_await write_reply(stream, dummy, answer, false);
                }
                break;
            }
            auto req = parser.release();
            bool const keep_alive = req.keep_alive() && !draining_;
            bool const keep = co_await handle(stream, req, keep_alive);
            if (!keep || !keep_alive)
                break;
        }
        boost::system::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }

    // Returns whether the connection may carry another request.
    asio::awaitable<bool> handle(beast::tcp_stream& stream, request_t& req, bool keep_alive) {
        auto const target = std::string_view(req.target().data(), req.target().size());
        auto const path = target.substr(0, target.find('?'));
        if (path != options_.path) {
            reply answer = reply{bhttp::status::not_found, {}};
            co_await write_reply(stream, req, answer, keep_alive);
            co_return true;
        }
        if (!http::origin_allowed(header(req, "Origin"), options_.allowed_origins) ||
            !http::host_allowed(header(req, "Host"), loopback_, options_.allowed_hosts)) {
            reply answer =
                reply{bhttp::status::forbidden,
                      error_body(std::nullopt,
                                 protocol::invalid_request("Invalid Request: origin or host not allowed"))};
            co_await write_reply(stream, req, answer, keep_alive);
            co_return true;
        }
        if (options_.bearer_token) {
            auto const auth = header(req, "Authorization");
            if (!auth || *auth != "Bearer " + *options_.bearer_token) {
                reply r{bhttp::status::unauthorized,
                        error_body(std::nullopt,
                                   protocol::invalid_request("Invalid Request: a valid bearer token is "
                                                             "required"))};
                r.headers.emplace_back("WWW-Authenticate",
                                       auth ? "Bearer error=\"invalid_token\"" : "Bearer realm=\"duet\"");
                co_await write_reply(stream, req, r, keep_alive);
                co_return true;
            }
        }
        switch (req.method()) {
        case bhttp::verb::post:
            co_return co_await handle_post(stream, req, keep_alive);
        case bhttp::verb::get:
            co_return co_await handle_get(stream, req, keep_alive);
        case bhttp::verb::delete_:
            co_return co_await handle_delete(stream, req, keep_alive);
        default: {
            reply r{bhttp::status::method_not_allowed, {}};
            r.headers.emplace_back("Allow", std::string(allow_methods));
            co_await write_reply(stream, req, r, keep_alive);
            co_return true;
        }
        }
    }

    std::shared_ptr<legacy_session> session_of(request_t const& req, bool& named_unknown) {
        named_unknown = false;
        auto const id = header(req, session_header);
        if (!id)
            return nullptr;
        auto s = sessions_.find(std::string(*id));
        if (!s || s->ended())
            named_unknown = true;
        // Not touched here: only legacy traffic keeps a session alive; a modern request never reads or
        // changes one (ERA-POLICY), whatever stale id it carries.
        return s && !s->ended() ? s : nullptr;
    }

    reply session_not_found(std::optional<jsonrpc::request_id> id = std::nullopt) {
        return reply{bhttp::status::not_found,
                     error_body(std::move(id),
                                protocol::invalid_request("Invalid Request: unknown or expired "
                                                          "session; send initialize to open a new one"))};
    }

    reply no_session_stream() {
        reply r{bhttp::status::method_not_allowed,
                error_body(std::nullopt,
                           protocol::invalid_request("Invalid Request: GET and DELETE need a legacy "
                                                     "session (Mcp-Session-Id)"))};
        // Without a session only POST is served here (RFC 9110: Allow lists what the resource supports now).
        r.headers.emplace_back("Allow", "POST");
        return r;
    }

    asio::awaitable<bool> handle_post(beast::tcp_stream& stream, request_t& req, bool keep_alive) {
        if (!accepts(req, "application/json") || !accepts(req, "text/event-stream")) {
            reply answer = reply{bhttp::status::not_acceptable,
                                 error_body(std::nullopt, protocol::invalid_request(
                                                              "Invalid Request: Accept must list "
                                                              "application/json and text/event-stream"))};
            co_await write_reply(stream, req, answer, keep_alive);
            co_return true;
        }
        auto frame = jsonrpc::parse_frame(req.body(), {.max_bytes = options_.max_body_bytes});
        bool unknown = false;
        auto session = session_of(req, unknown);

        if (frame.is_batch()) {
            co_return co_await handle_batch(stream, req, keep_alive, std::get<jsonrpc::batch>(frame.content),
                                            session, unknown);
        }
        auto& one = std::get<jsonrpc::parsed>(frame.content);
        if (!one) {
            reply r{bhttp::status::bad_request, {}};
            if (one.error().reply)
                r.body = jsonrpc::serialize(*one.error().reply);
            co_await write_reply(stream, req, r, keep_alive);
            co_return true;
        }
        auto& msg = *one;
        if (auto* r = std::get_if<jsonrpc::request>(&msg))
            co_return co_await handle_request(stream, req, keep_alive, std::move(*r), session, unknown);

        // Notifications and responses (to our requests) are accepted with 202 and never answered.
        if (session) {
            session->touch();
            session->conn->receive(std::string(req.body()));
        } else if (unknown) {
            reply answer = session_not_found();
            co_await write_reply(stream, req, answer, keep_alive);
            co_return true;
        }
        {
            reply answer = reply{bhttp::status::accepted, {}};
            co_await write_reply(stream, req, answer, keep_alive);
        }
        co_return true;
    }

    asio::awaitable<bool> handle_batch(beast::tcp_stream& stream, request_t& req, bool keep_alive,
                                       jsonrpc::batch& b, std::shared_ptr<legacy_session> const& session,
                                       bool unknown) {
        if (unknown) {
            reply answer = session_not_found();
            co_await write_reply(stream, req, answer, keep_alive);
            co_return true;
        }
        if (!session || session->conn->legacy_version() != protocol::version::v2025_03_26) {
            reply answer = reply{bhttp::status::bad_request,
                                 error_body(std::nullopt, protocol::invalid_request(
                                                              "Invalid Request: JSON-RPC batches are only "
                                                              "allowed in a 2025-03-26 session"))};
            co_await write_reply(stream, req, answer, keep_alive);
            co_return true;
        }
        session->touch();
        auto const facts = facts_of(req);
        std::vector<jsonrpc::message> replies;
        for (auto& element : b.elements) {
            if (!element) {
                if (element.error().reply)
                    replies.push_back(*element.error().reply);
                continue;
            }
            if (auto* r = std::get_if<jsonrpc::request>(&*element)) {
                server::connection::writer to_session; // none: the session's own stream
                auto h = co_await session->conn->async_handle(std::move(*r), &facts, std::move(to_session));
                if (h.reply)
                    replies.push_back(std::move(*h.reply));
            } else {
                session->conn->receive(jsonrpc::serialize(*element));
            }
        }
        reply r{replies.empty() ? bhttp::status::accepted : bhttp::status::ok, {}};
        if (!replies.empty())
            r.body = jsonrpc::serialize(replies);
        co_await write_reply(stream, req, r, keep_alive);
        co_return true;
    }

    asio::awaitable<bool> handle_request(beast::tcp_stream& stream, request_t& req, bool keep_alive,
                                         jsonrpc::request r, std::shared_ptr<legacy_session> session,
                                         bool unknown) {
        auto const ex = co_await asio::this_coro::executor;
        auto const facts = facts_of(req);
        bool const modern_claim =
            server_.options().eras != protocol::era_support::legacy_only &&
            protocol::read_version_claim(r.params).what != protocol::version_claim::kind::absent;

        // Modern: served statelessly on a connection of its own; any session header is ignored, never echoed.
        if (modern_claim) {
            bool const is_listen = r.method == "subscriptions/listen";
            if (is_listen && open_listens_ >= options_.max_listen_streams) {
                reply answer = reply{bhttp::status::service_unavailable,
                                     error_body(r.id, protocol::make_error(protocol::errc::internal_error,
                                                                           "Too many open listen streams; "
                                                                           "retry later"))};
                co_await write_reply(stream, req, answer, keep_alive);
                co_return true;
            }
            auto conn = server::connection::create(server_, ex, [](std::string) {});
            if (is_listen)
                ++open_listens_;
            auto keep = co_await respond(stream, req, keep_alive, conn, std::move(r), facts, true);
            if (is_listen)
                --open_listens_;
            co_return keep;
        }

        // Legacy: initialize opens a session; a known session continues; anything else is refused by
        // admission.
        if (r.method == "initialize") {
            auto s = sessions_.create(options_.replay_events);
            if (!s) {
                reply answer =
                    reply{bhttp::status::service_unavailable,
                          error_body(r.id, protocol::make_error(protocol::errc::internal_error,
                                                                "Too many sessions; retry later"))};
                co_await write_reply(stream, req, answer, keep_alive);
                co_return true;
            }
            std::weak_ptr<legacy_session> weak = s;
            s->conn = server::connection::create(server_, ex, [weak](std::string line) {
                if (auto live = weak.lock())
                    live->publish(std::move(line));
            });
            server::connection::writer to_session;
            auto h = co_await s->conn->async_handle(std::move(r), &facts, std::move(to_session));
            bool const opened = h.reply && std::holds_alternative<jsonrpc::response>(*h.reply);
            reply out{static_cast<bhttp::status>(h.http_status), h.reply ? jsonrpc::serialize(*h.reply) : ""};
            if (opened)
                out.headers.emplace_back(std::string(session_header), s->id());
            else
                sessions_.remove(s->id());
            co_await write_reply(stream, req, out, keep_alive);
            co_return true;
        }
        if (unknown) {
            reply answer = session_not_found(r.id);
            co_await write_reply(stream, req, answer, keep_alive);
            co_return true;
        }
        if (session) {
            session->touch();
            co_return co_await respond(stream, req, keep_alive, session->conn, std::move(r), facts, false);
        }
        // No session and no claim: admission answers (ping gets {}, everything else -32602 with 400).
        auto conn = server::connection::create(server_, ex, [](std::string) {});
        co_return co_await respond(stream, req, keep_alive, conn, std::move(r), facts, false);
    }

    // The head of an SSE response: chunked, so the connection can carry more requests after the stream ends.
    asio::awaitable<bool> begin_sse(beast::tcp_stream& stream, request_t const& req, bool keep_alive) {
        bhttp::response<bhttp::empty_body> head{bhttp::status::ok, req.version()};
        head.set(bhttp::field::content_type, "text/event-stream");
        head.set(bhttp::field::cache_control, "no-cache");
        head.set("X-Accel-Buffering", "no");
        head.keep_alive(keep_alive);
        head.chunked(true);
        bhttp::response_serializer<bhttp::empty_body> sr{head};
        stream.expires_after(options_.read_timeout);
        // No structured bindings across co_await: GCC 12 mislays them in the coroutine frame.
        auto written = co_await bhttp::async_write_header(stream, sr, use_nothrow);
        co_return !std::get<0>(written);
    }

    // The last chunk of an SSE body.
    asio::awaitable<bool> end_sse(beast::tcp_stream& stream) {
        stream.expires_after(options_.read_timeout);
        auto written = co_await asio::async_write(stream, bhttp::make_chunk_last(), use_nothrow);
        co_return !std::get<0>(written);
    }

    // One chunk of a chunked SSE body.
    asio::awaitable<bool> write_chunk(beast::tcp_stream& stream, std::string& data) {
        stream.expires_after(options_.read_timeout);
        // No structured bindings across co_await: GCC 12 mislays them in the coroutine frame.
        auto ec_result =
            co_await asio::async_write(stream, bhttp::make_chunk(asio::buffer(data)), use_nothrow);
        auto ec = std::get<0>(ec_result);

        co_return !ec;
    }

    // Runs the handler and closes the queue when the answer is known. A named coroutine, not a capturing
    // lambda: co_spawn may move a lambda's closure after starting it.
    static asio::awaitable<void> run_handler(std::shared_ptr<server::connection> conn,
                                             std::shared_ptr<stream_queue> queue,
                                             std::shared_ptr<server::connection::handled> outcome,
                                             jsonrpc::request r, protocol::http_facts facts, bool listen) {
        server::connection::writer to_queue = [queue](std::string line) {
            queue->push(std::move(line));
        };
        auto h = co_await conn->async_handle(std::move(r), &facts, std::move(to_queue));
        *outcome = std::move(h);
        // An open listen (no answer yet) keeps its stream until the drain finishes its connection, which
        // writes its result and then closes the queue (begin_drain), or until the client goes away. Anything
        // else that has no answer (a cancelled request) is simply over: finishing `conn` here would end a
        // legacy session's connection with it.
        if (outcome->reply || !listen)
            queue->close();
    }

    // Serves one request on `conn` and answers on this POST: JSON when nothing else comes first, SSE when the
    // handler sends notifications (or requests) before its response, and always for a listen.
    asio::awaitable<bool> respond(beast::tcp_stream& stream, request_t const& req, bool keep_alive,
                                  std::shared_ptr<server::connection> conn, jsonrpc::request r,
                                  protocol::http_facts const& facts, bool modern) {
        auto const ex = co_await asio::this_coro::executor;
        auto queue = std::make_shared<stream_queue>(ex);
        auto outcome = std::make_shared<server::connection::handled>();
        bool const listen = modern && r.method == "subscriptions/listen";
        if (modern)
            track(conn, listen ? queue : nullptr);
        asio::co_spawn(ex, run_handler(conn, queue, outcome, std::move(r), facts, listen), asio::detached);

        std::string line;
        auto first = co_await queue->pop(line, std::chrono::hours(24 * 365));
        if (first == stream_queue::outcome::closed) {
            // Nothing was streamed: a plain JSON answer (or 202 when none is owed, e.g. cancelled).
            reply out{outcome->reply ? static_cast<bhttp::status>(outcome->http_status)
                                     : bhttp::status::accepted,
                      outcome->reply ? jsonrpc::serialize(*outcome->reply) : ""};
            co_await write_reply(stream, req, out, keep_alive);
            co_return true;
        }

        // Streamed: SSE, each message one event; the response (if any) is the last event.
        bool const hec = !(co_await begin_sse(stream, req, keep_alive));
        if (hec) {
            if (modern)
                conn->cancel_requests();
            co_return false;
        }
        bool alive = true;
        std::string event = "data: " + line + "\n\n";
        alive = co_await write_chunk(stream, event);
        while (alive) {
            auto got = co_await queue->pop(line, options_.keepalive);
            if (got == stream_queue::outcome::closed)
                break;
            if (got == stream_queue::outcome::idle) {
                std::string chunk = ": keepalive\n\n";
                alive = co_await write_chunk(stream, chunk);
            } else {
                std::string chunk = "data: " + line + "\n\n";
                alive = co_await write_chunk(stream, chunk);
            }
        }
        if (!alive) {
            // Closing the response stream is the cancellation of a modern request (DIGEST §9).
            if (modern)
                conn->cancel_requests();
            co_return false;
        }
        if (outcome->reply) {
            std::string chunk = "data: " + jsonrpc::serialize(*outcome->reply) + "\n\n";
            alive = co_await write_chunk(stream, chunk);
        }
        if (!alive)
            co_return false;
        co_return co_await end_sse(stream);
    }

    asio::awaitable<bool> handle_get(beast::tcp_stream& stream, request_t& req, bool keep_alive) {
        bool unknown = false;
        auto session = session_of(req, unknown);
        if (!session) {
            reply answer = unknown ? session_not_found() : no_session_stream();
            co_await write_reply(stream, req, answer, keep_alive);
            co_return true;
        }
        session->touch();
        if (!accepts(req, "text/event-stream")) {
            reply answer =
                reply{bhttp::status::not_acceptable,
                      error_body(std::nullopt, protocol::invalid_request("Invalid Request: Accept must list "
                                                                         "text/event-stream"))};
            co_await write_reply(stream, req, answer, keep_alive);
            co_return true;
        }
        auto const ex = co_await asio::this_coro::executor;
        auto wake_queue = std::make_shared<stream_queue>(ex);
        // A GET with Last-Event-ID resumes a stream the client saw break, which may still look attached here
        // (a dead peer is only noticed at the next write): it takes the session's stream over.
        auto const resume = header(req, "Last-Event-ID");
        auto const token = session->attach([wake_queue] { wake_queue->push({}); }, resume.has_value());
        if (token == 0) {
            reply answer = reply{bhttp::status::conflict,
                                 error_body(std::nullopt, protocol::invalid_request(
                                                              "Invalid Request: this session already has "
                                                              "a stream open"))};
            co_await write_reply(stream, req, answer, keep_alive);
            co_return true;
        }
        std::uint64_t last = 0;
        if (resume) {
            try {
                last = std::stoull(std::string(*resume));
            } catch (std::exception const&) {
                last = 0;
            }
        }
        bool const hec = !(co_await begin_sse(stream, req, keep_alive));
        bool alive = !hec;
        if (alive) {
            std::string chunk = "retry: 1000\n\n";
            alive = co_await write_chunk(stream, chunk);
        }
        std::string ignored;
        while (alive && session->attached(token) && !session->ended() && !draining_) {
            for (auto const& e : session->events_after(last)) {
                {
                    std::string chunk = "id: " + std::to_string(e.id) + "\ndata: " + e.data + "\n\n";
                    alive = co_await write_chunk(stream, chunk);
                }
                if (!alive)
                    break;
                last = e.id;
            }
            if (!alive || !session->attached(token) || session->ended() || draining_)
                break;
            auto got = co_await wake_queue->pop(ignored, options_.keepalive);
            if (got == stream_queue::outcome::idle) {
                std::string chunk = ": keepalive\n\n";
                alive = co_await write_chunk(stream, chunk);
            }
        }
        session->detach(token);
        if (!alive)
            co_return false;
        co_return co_await end_sse(stream);
    }

    asio::awaitable<bool> handle_delete(beast::tcp_stream& stream, request_t& req, bool keep_alive) {
        bool unknown = false;
        auto session = session_of(req, unknown);
        if (!session) {
            reply answer = unknown ? session_not_found() : no_session_stream();
            co_await write_reply(stream, req, answer, keep_alive);
            co_return true;
        }
        sessions_.remove(session->id());
        session->end();
        session->conn->finish([] {});
        {
            reply answer = reply{bhttp::status::ok, {}};
            co_await write_reply(stream, req, answer, keep_alive);
        }
        co_return true;
    }

    server::server& server_;
    http_options options_;
    asio::io_context io_;
    tcp::acceptor acceptor_;
    http::session_store sessions_;
    asio::signal_set signals_;
    asio::steady_timer sweep_;
    std::uint16_t port_ = 0;
    bool loopback_ = true;
    std::atomic<bool> draining_{false};
    std::atomic<std::size_t> open_sockets_{0};
    std::atomic<std::size_t> open_listens_{0};
    std::mutex live_mutex_;
    std::vector<std::pair<std::weak_ptr<server::connection>, std::weak_ptr<stream_queue>>> live_;
};

http_server::http_server(server::server& srv, http_options options)
    : impl_(std::make_shared<impl>(srv, std::move(options))) {}

http_server::~http_server() = default;

boost::system::error_code http_server::listen() {
    return impl_->listen();
}
std::uint16_t http_server::port() const noexcept {
    return impl_->port();
}
std::string http_server::url() const {
    return impl_->url();
}
void http_server::run() {
    impl_->run();
}
void http_server::stop() {
    impl_->stop();
}

} // namespace duet::transport
