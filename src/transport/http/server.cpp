#include <duet/jsonrpc/codec.hpp>
#include <duet/protocol/envelope.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/protocol/header_codec.hpp>
#include <duet/server/connection.hpp>
#include <duet/server/frame_storage.hpp>
#include <duet/transport/http_server.hpp>

#include "bounded_socket.hpp"
#include "event_stream.hpp"
#include "origin.hpp"
#include "peer_watch.hpp"
#include "request.hpp"
#include "response_head.hpp"
#include "session_store.hpp"
#include "stream_queue.hpp"
#include "support/send_now.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <list>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <variant>

namespace duet::transport {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

using request_t = http::request;
using http::bounded_socket;
using http::event_stream;
using http::legacy_session;
using http::peer_watch;
using http::stream_queue;

namespace {

constexpr auto use_nothrow = asio::as_tuple(asio::use_awaitable);
// For the two operations of every request (its read, its answer's write): awaited as a deferred operation, it
// runs in the awaiting coroutine's frame, where use_awaitable starts a coroutine of its own for it (a frame
// from Asio's per-thread recycler, which with 32 connections in flight often misses: a memalign and a free).
constexpr auto deferred_nothrow = asio::as_tuple(asio::deferred);
constexpr std::string_view session_header = "Mcp-Session-Id";
constexpr std::string_view allow_methods = "GET, POST, DELETE";
/// How long a response waits for its first message: the handler's own business (a drain ends it sooner).
constexpr auto unbounded_wait = std::chrono::hours(24 * 365);

// Headers are found by walking the request's few fields in order (request.hpp keeps no lookup structure,
// which would cost more than the walk): a known name by Beast's enum, any other by its spelling.
std::optional<std::string_view> header(request_t const& req, bhttp::field name) {
    for (auto const& field : req)
        if (field.name() == name)
            return std::string_view(field.value().data(), field.value().size());
    return std::nullopt;
}

std::optional<std::string_view> header(request_t const& req, std::string_view name) {
    for (auto const& field : req) {
        auto const n = field.name_string();
        if (protocol::iequals(std::string_view(n.data(), n.size()), name))
            return std::string_view(field.value().data(), field.value().size());
    }
    return std::nullopt;
}

bool accepts(request_t const& req, std::string_view type) {
    auto const a = header(req, bhttp::field::accept);
    if (!a)
        return false;
    return a->find(type) != std::string_view::npos || a->find("*/*") != std::string_view::npos;
}

// Whether `n` is a header admission reads: MCP-Protocol-Version, Mcp-Method, Mcp-Name or an Mcp-Param-*.
bool is_mcp_header(std::string_view n) {
    if (n.size() < 8 || (n[0] != 'M' && n[0] != 'm'))
        return false;
    switch (n.size()) {
    case 8:
        return protocol::iequals(n, "Mcp-Name");
    case 10:
        return protocol::iequals(n, "Mcp-Method");
    case 20:
        if (protocol::iequals(n, "MCP-Protocol-Version"))
            return true;
        break;
    default:
        break;
    }
    return n.size() > 10 && protocol::iequals(n.substr(0, 10), "Mcp-Param-");
}

protocol::http_facts facts_of(request_t const& req) {
    protocol::http_facts f;
    for (auto const& field : req) {
        if (field.name() != bhttp::field::unknown)
            continue; // none of admission's headers is one Beast knows
        auto const name = field.name_string();
        std::string_view const n(name.data(), name.size());
        if (is_mcp_header(n)) {
            // A modern request's three, and room for one Mcp-Param-*, in one allocation.
            if (f.headers.empty())
                f.headers.reserve(4);
            f.headers.push_back({std::string(n), std::string(field.value())});
        }
    }
    return f;
}

std::string error_body(std::optional<jsonrpc::request_id> id, protocol::error_object e) {
    return jsonrpc::serialize(jsonrpc::error_response{std::move(id), std::move(e)});
}

void log_stderr(std::string const& s) {
    std::fprintf(stderr, "duet http: %s\n", s.c_str());
}

// SEP-1699 (2025-11-25): SSE streams open with a priming event (an id and empty data) and a `retry` delay,
// and the server may end a POST stream mid-call for the client to resume. Older clients choke on empty data,
// so only sessions that negotiated 2025-11-25 or later get either.
bool sse_polling(std::optional<protocol::version> negotiated) {
    return negotiated && *negotiated >= protocol::version::v2025_11_25;
}

// The CPUs this process may run on (its affinity mask), at least one.
std::size_t usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0)
        return static_cast<std::size_t>(std::max(1, CPU_COUNT(&set)));
    return std::max(1u, std::thread::hardware_concurrency());
}

// How a relayed session stream ended.
enum class relay_end {
    complete,   ///< its last event was written
    closed,     ///< the handler asked to end it (the client resumes it)
    superseded, ///< a resumption took it over
    over,       ///< the session ended or the server drains (standalone stream)
    peer_gone,  ///< the client went away or a write failed
};

} // namespace

class http_server::impl : public std::enable_shared_from_this<http_server::impl> {
public:
    /// Serves on `io` when given, else on an io_context of its own.
    impl(std::vector<http_route> routes, http_options options, asio::io_context* io)
        : routes_(std::move(routes)), options_(std::move(options)),
          own_io_(io ? nullptr : std::make_unique<asio::io_context>()), io_(io ? *io : *own_io_),
          acceptor_(io_), sessions_(options_.max_sessions), signals_(io_, SIGINT, SIGTERM), sweep_(io_),
          expected_authorization_(options_.bearer_token ? "Bearer " + *options_.bearer_token
                                                        : std::string()) {}

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
        return "http://" + host + ":" + std::to_string(port_) + routes_.front().path;
    }

    std::string url(std::string_view path) const {
        auto u = url();
        return u.substr(0, u.size() - routes_.front().path.size()) + std::string(path);
    }

    void run() {
        auto const io_threads = io_threads_for(options_);
        // One thread already runs one handler at a time: strands would only add a lock and a hand-off to
        // every completion.
        serial_ = io_threads == 1;
        asio::co_spawn(io_, accept_loop(), asio::detached);
        signals_.async_wait([self = shared_from_this()](boost::system::error_code ec, int) {
            if (!ec)
                self->stop();
        });
        schedule_sweep();
        std::vector<std::thread> threads;
        for (std::size_t i = 1; i < io_threads; ++i)
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

    // One accepted TCP connection, as the drain sees it. `idle` and `alive` are read and written on the
    // connection's strand only.
    struct socket_entry {
        bounded_socket* stream = nullptr;
        asio::any_io_executor strand;
        bool idle = false; ///< waiting for a next request of which nothing has arrived
        bool alive = true;
    };

    void begin_drain() {
        if (draining_.exchange(true))
            return;
        boost::system::error_code ignored;
        acceptor_.close(ignored);
        signals_.cancel(ignored);
        sweep_.cancel();
        // Keep-alive connections between requests have nothing to finish: closed now, so they do not hold the
        // drain until the deadline.
        for (auto const& entry : open_socket_entries())
            asio::post(entry->strand, [entry] {
                if (entry->alive && entry->idle)
                    entry->stream->cancel();
            });
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
        // A socket's modern connection serves many requests: it is tracked once.
        if (std::ranges::any_of(
                live_, [&](auto const& w) { return !w.first.owner_before(c) && !c.owner_before(w.first); }))
            return;
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

    std::list<std::shared_ptr<socket_entry>>::iterator enter(std::shared_ptr<socket_entry> entry) {
        std::lock_guard lock(sockets_mutex_);
        return sockets_.insert(sockets_.end(), std::move(entry));
    }

    void leave(std::list<std::shared_ptr<socket_entry>>::iterator it) {
        std::lock_guard lock(sockets_mutex_);
        sockets_.erase(it);
    }

    std::vector<std::shared_ptr<socket_entry>> open_socket_entries() {
        std::lock_guard lock(sockets_mutex_);
        return {sockets_.begin(), sockets_.end()};
    }

    // What a socket's handlers run on: the io_context itself when one thread runs it, else a strand each.
    asio::any_io_executor socket_executor() {
        if (serial_)
            return io_.get_executor();
        return asio::make_strand(io_);
    }

    asio::awaitable<void> accept_loop() {
        for (;;) {
            // No structured bindings across co_await: GCC 12 mislays them in the coroutine frame.
            auto ec_result = co_await acceptor_.async_accept(socket_executor(), use_nothrow);
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
            asio::co_spawn(ex, serve_socket(std::move(socket)),
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
        std::string_view content_type = "application/json"; ///< only ever a literal
        std::vector<std::pair<std::string, std::string>> headers;
    };

    // Coroutine arguments are lvalues on purpose: GCC 12 can destroy a temporary passed to a coroutine before
    // the coroutine is done with it, so callers name what they pass. The head is written by hand (the bytes
    // Beast would write, see response_head.hpp) and goes out with the body in one gathered write.
    asio::awaitable<void> write_reply(bounded_socket& stream, request_t const& req, reply& r,
                                      bool keep_alive) {
        std::string head;
        head.reserve(128);
        http::append_response_head(head, {.version = req.version(),
                                          .status = static_cast<unsigned>(r.status),
                                          .content_type = r.content_type,
                                          .fields = r.headers,
                                          .body_size = r.body.size(),
                                          .keep_alive = keep_alive});
        std::array<asio::const_buffer, 2> const buffers{asio::buffer(head), asio::buffer(r.body)};
        auto const rest = support::send_now(stream.socket().native_handle(), buffers);
        if (asio::buffer_size(rest) == 0)
            co_return;
        stream.bound(options_.read_timeout);
        co_await asio::async_write(stream, rest, deferred_nothrow);
        stream.unbound();
    }

    asio::awaitable<void> serve_socket(tcp::socket socket) {
        bounded_socket stream(std::move(socket), std::min(options_.idle_timeout, options_.read_timeout));
        beast::flat_buffer buffer;
        modern_slot modern;
        auto entry = std::make_shared<socket_entry>();
        entry->stream = &stream;
        entry->strand = stream.get_executor();
        auto const registered = enter(entry);
        for (;;) {
            if (draining_ && buffer.size() == 0)
                break; // between requests at a drain: nothing to finish
            http::request_parser parser;
            parser.header_limit(static_cast<std::uint32_t>(options_.max_header_bytes));
            parser.body_limit(options_.max_body_bytes);
            // The whole request, from when it is awaited to its last byte, within the idle timeout.
            stream.bound(options_.idle_timeout);
            entry->idle = buffer.size() == 0;
            // No structured bindings across co_await: GCC 12 mislays them in the coroutine frame.
            auto ec_result = co_await bhttp::async_read(stream, buffer, parser, deferred_nothrow);
            stream.unbound();
            auto ec = std::get<0>(ec_result);
            entry->idle = false;

            if (ec) {
                request_t const dummy(11);
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
            bool const keep = co_await handle(stream, req, keep_alive, modern);
            if (!keep || !keep_alive)
                break;
        }
        entry->alive = false;
        leave(registered);
        boost::system::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }

    // The connection a socket's modern requests (but listens) are served on: made at the first, for the
    // server of its route, and kept while the socket lives. Such a connection carries nothing from one
    // request to the next (no session: ERA-POLICY; a socket's requests come one after another, each answered
    // or abandoned with the socket before the next is read), and one per request cost three allocations and
    // as many frees. A listen keeps a connection of its own: it hears server events for as long as it stays
    // open.
    struct modern_slot {
        server::server* srv = nullptr;
        std::shared_ptr<server::connection> conn;
    };

    // A reply as a coroutine of its own. The routing below (handle, handle_post, handle_request) is plain
    // functions that return the coroutine serving the request, so a request creates one frame for its last
    // step (respond, respond_in_session, or this) and none for each step of the routing: Asio's per-thread
    // recycler keeps only two blocks, so with many requests in flight most frames are a malloc and a free.
    asio::awaitable<bool> send_reply(bounded_socket& stream, request_t const& req, reply r, bool keep_alive) {
        co_await write_reply(stream, req, r, keep_alive);
        co_return true;
    }

    // Returns (the coroutine that says) whether the connection may carry another request.
    asio::awaitable<bool> handle(bounded_socket& stream, request_t& req, bool keep_alive,
                                 modern_slot& modern) {
        auto const target = std::string_view(req.target().data(), req.target().size());
        auto const path = target.substr(0, target.find('?'));
        auto* const route = route_at(path);
        if (!route) {
            reply answer = unknown_path(path);
            return send_reply(stream, req, std::move(answer), keep_alive);
        }
        auto& srv = *route->srv;
        if (!http::origin_allowed(header(req, bhttp::field::origin), options_.allowed_origins) ||
            !http::host_allowed(header(req, bhttp::field::host), loopback_, options_.allowed_hosts)) {
            reply answer =
                reply{bhttp::status::forbidden,
                      error_body(std::nullopt,
                                 protocol::invalid_request("Invalid Request: origin or host not allowed"))};
            return send_reply(stream, req, std::move(answer), keep_alive);
        }
        if (options_.bearer_token) {
            auto const auth = header(req, bhttp::field::authorization);
            if (!auth || *auth != expected_authorization_) {
                reply r{bhttp::status::unauthorized,
                        error_body(std::nullopt,
                                   protocol::invalid_request("Invalid Request: a valid bearer token is "
                                                             "required"))};
                r.headers.emplace_back("WWW-Authenticate",
                                       auth ? "Bearer error=\"invalid_token\"" : "Bearer realm=\"duet\"");
                return send_reply(stream, req, std::move(r), keep_alive);
            }
        }
        switch (req.method()) {
        case bhttp::verb::post:
            return handle_post(stream, req, keep_alive, srv, modern);
        case bhttp::verb::get:
            return handle_get(stream, req, keep_alive, srv);
        case bhttp::verb::delete_:
            return handle_delete(stream, req, keep_alive, srv);
        default: {
            reply r{bhttp::status::method_not_allowed, {}};
            r.headers.emplace_back("Allow", std::string(allow_methods));
            return send_reply(stream, req, std::move(r), keep_alive);
        }
        }
    }

    http_route const* route_at(std::string_view path) const {
        for (auto const& r : routes_)
            if (r.path == path)
                return &r;
        return nullptr;
    }

    // 404 for a path no server is at, naming those that are.
    reply unknown_path(std::string_view path) const {
        std::string served;
        for (auto const& r : routes_)
            served += (served.empty() ? "" : ", ") + r.path;
        return reply{bhttp::status::not_found,
                     error_body(std::nullopt,
                                protocol::invalid_request("Invalid Request: no MCP endpoint at " +
                                                          std::string(path) + "; served here: " + served))};
    }

    // The live legacy session a request names, at the endpoint it was opened at (a session of another
    // endpoint is unknown here).
    std::shared_ptr<legacy_session> session_of(request_t const& req, server::server const& srv,
                                               bool& named_unknown) {
        named_unknown = false;
        auto const id = header(req, session_header);
        if (!id)
            return nullptr;
        auto s = sessions_.find(std::string(*id));
        if (s && s->owner != &srv)
            s = nullptr;
        if (!s || s->ended())
            named_unknown = true;
        // Not touched here: only legacy traffic keeps a session alive; a modern request never reads or
        // changes one (ERA-POLICY), whatever stale id it carries.
        return s && !s->ended() ? s : nullptr;
    }

    // A connection for requests outside any session: it lives on this socket's strand (a request is served
    // there and then) and hears server events only when it is a listen.
    static server::connection_options one_request(bool listen) {
        server::connection_options o;
        o.executor_is_serial = true;
        o.hears_server_events = listen;
        return o;
    }

    // GET and DELETE belong to a live legacy session: the session, or the refusal to answer with (404 for an
    // unknown or ended one, 405 without any).
    std::variant<std::shared_ptr<legacy_session>, reply> session_for(request_t const& req,
                                                                     server::server const& srv) {
        bool unknown = false;
        if (auto session = session_of(req, srv, unknown))
            return session;
        return unknown ? session_not_found() : no_session_stream();
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

    // A plain function, as handle(): the parsed message moves on into the coroutine that serves it.
    asio::awaitable<bool> handle_post(bounded_socket& stream, request_t& req, bool keep_alive,
                                      server::server& srv, modern_slot& modern) {
        if (!accepts(req, "application/json") || !accepts(req, "text/event-stream")) {
            reply answer = reply{bhttp::status::not_acceptable,
                                 error_body(std::nullopt, protocol::invalid_request(
                                                              "Invalid Request: Accept must list "
                                                              "application/json and text/event-stream"))};
            return send_reply(stream, req, std::move(answer), keep_alive);
        }
        // The body is parsed here, once, into the server's pool for parsed frames; what follows moves the
        // parsed messages along.
        auto frame =
            jsonrpc::parse_frame(req.body(), {.max_bytes = options_.max_body_bytes}, server::frame_storage());
        bool unknown = false;
        auto session = session_of(req, srv, unknown);

        if (frame.is_batch()) {
            auto batch = std::get<jsonrpc::batch>(std::move(frame.content));
            return handle_batch(stream, req, keep_alive, std::move(batch), std::move(session), unknown);
        }
        auto& one = std::get<jsonrpc::parsed>(frame.content);
        if (!one) {
            reply r{bhttp::status::bad_request, {}};
            if (one.error().reply)
                r.body = jsonrpc::serialize(*one.error().reply);
            return send_reply(stream, req, std::move(r), keep_alive);
        }
        auto& msg = *one;
        if (auto* r = std::get_if<jsonrpc::request>(&msg))
            return handle_request(stream, req, keep_alive, std::move(*r), std::move(session), unknown, srv,
                                  modern);

        // Notifications and responses (to our requests) are accepted with 202 and never answered.
        if (session) {
            session->touch();
            session->conn->receive(std::move(msg));
        } else if (unknown) {
            reply answer = session_not_found();
            return send_reply(stream, req, std::move(answer), keep_alive);
        }
        reply answer = reply{bhttp::status::accepted, {}};
        return send_reply(stream, req, std::move(answer), keep_alive);
    }

    asio::awaitable<bool> handle_batch(bounded_socket& stream, request_t& req, bool keep_alive,
                                       jsonrpc::batch b, std::shared_ptr<legacy_session> session,
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
                session->conn->receive(std::move(*element));
            }
        }
        reply r{replies.empty() ? bhttp::status::accepted : bhttp::status::ok, {}};
        if (!replies.empty())
            r.body = jsonrpc::serialize(replies);
        co_await write_reply(stream, req, r, keep_alive);
        co_return true;
    }

    // A plain function, as handle(). The socket's strand is the executor of the coroutine serving it.
    asio::awaitable<bool> handle_request(bounded_socket& stream, request_t& req, bool keep_alive,
                                         jsonrpc::request r, std::shared_ptr<legacy_session> session,
                                         bool unknown, server::server& srv, modern_slot& modern) {
        auto facts = facts_of(req);
        bool const modern_claim =
            srv.options().eras != protocol::era_support::legacy_only &&
            protocol::read_version_claim(r.params).what != protocol::version_claim::kind::absent;

        // Modern: served statelessly on a connection of its own; any session header is ignored, never echoed.
        if (modern_claim) {
            if (r.method == "subscriptions/listen")
                return serve_listen(stream, req, keep_alive, std::move(r), std::move(facts), srv);
            if (modern.srv != &srv) {
                modern.conn = server::connection::create(
                    srv, stream.get_executor(), [](std::string) {}, one_request(false));
                modern.srv = &srv;
            }
            return respond(stream, req, keep_alive, modern.conn, std::move(r), std::move(facts), true);
        }

        // Legacy: initialize opens a session; a known session continues; anything else is refused by
        // admission.
        if (r.method == "initialize")
            return open_session(stream, req, keep_alive, std::move(r), std::move(facts), srv);
        if (unknown) {
            reply answer = session_not_found(r.id);
            return send_reply(stream, req, std::move(answer), keep_alive);
        }
        if (session) {
            session->touch();
            return respond_in_session(stream, req, keep_alive, std::move(session), std::move(r),
                                      std::move(facts));
        }
        // No session and no claim: admission answers (ping gets {}, everything else -32602 with 400).
        auto conn = server::connection::create(
            srv, stream.get_executor(), [](std::string) {}, one_request(false));
        return respond(stream, req, keep_alive, std::move(conn), std::move(r), std::move(facts), false);
    }

    // A modern listen, within the bound on open listen streams.
    asio::awaitable<bool> serve_listen(bounded_socket& stream, request_t const& req, bool keep_alive,
                                       jsonrpc::request r, protocol::http_facts facts, server::server& srv) {
        if (open_listens_ >= options_.max_listen_streams) {
            reply answer = reply{bhttp::status::service_unavailable,
                                 error_body(r.id, protocol::make_error(protocol::errc::internal_error,
                                                                       "Too many open listen streams; "
                                                                       "retry later"))};
            co_await write_reply(stream, req, answer, keep_alive);
            co_return true;
        }
        auto conn = server::connection::create(
            srv, stream.get_executor(), [](std::string) {}, one_request(true));
        ++open_listens_;
        auto keep = co_await respond(stream, req, keep_alive, conn, std::move(r), std::move(facts), true);
        --open_listens_;
        co_return keep;
    }

    // initialize: a new session, kept when the handshake succeeds; its id goes out on the response.
    asio::awaitable<bool> open_session(bounded_socket& stream, request_t const& req, bool keep_alive,
                                       jsonrpc::request r, protocol::http_facts facts, server::server& srv) {
        auto s = sessions_.create(options_.replay_events, options_.resumable_streams);
        if (!s) {
            reply answer = reply{bhttp::status::service_unavailable,
                                 error_body(r.id, protocol::make_error(protocol::errc::internal_error,
                                                                       "Too many sessions; retry later"))};
            co_await write_reply(stream, req, answer, keep_alive);
            co_return true;
        }
        std::weak_ptr<legacy_session> weak = s;
        s->owner = &srv;
        // A strand of its own on the io_context, not one nested in this socket's: the session outlives this
        // socket, and its requests come on others.
        s->conn = server::connection::create(
            srv, io_.get_executor(),
            [weak](std::string line) {
                if (auto live = weak.lock())
                    live->publish(std::move(line));
            },
            server::connection_options{.executor_is_serial = serial_});
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

    // ---- SSE framing
    // ----------------------------------------------------------------------------------------

    // The head of an SSE response: chunked, so the connection can carry more requests after the stream ends.
    asio::awaitable<bool> begin_sse(bounded_socket& stream, request_t const& req, bool keep_alive) {
        bhttp::response<bhttp::empty_body> head{bhttp::status::ok, req.version()};
        head.set(bhttp::field::content_type, "text/event-stream");
        head.set(bhttp::field::cache_control, "no-cache");
        head.set("X-Accel-Buffering", "no");
        head.keep_alive(keep_alive);
        head.chunked(true);
        bhttp::response_serializer<bhttp::empty_body> sr{head};
        stream.bound(options_.read_timeout);
        // No structured bindings across co_await: GCC 12 mislays them in the coroutine frame.
        auto written = co_await bhttp::async_write_header(stream, sr, use_nothrow);
        stream.unbound();
        co_return !std::get<0>(written);
    }

    // The last chunk of an SSE body.
    asio::awaitable<bool> end_sse(bounded_socket& stream) {
        stream.bound(options_.read_timeout);
        auto written = co_await asio::async_write(stream, bhttp::make_chunk_last(), use_nothrow);
        stream.unbound();
        co_return !std::get<0>(written);
    }

    // One chunk of a chunked SSE body.
    asio::awaitable<bool> write_chunk(bounded_socket& stream, std::string& data) {
        stream.bound(options_.read_timeout);
        // No structured bindings across co_await: GCC 12 mislays them in the coroutine frame.
        auto ec_result =
            co_await asio::async_write(stream, bhttp::make_chunk(asio::buffer(data)), use_nothrow);
        stream.unbound();
        auto ec = std::get<0>(ec_result);

        co_return !ec;
    }

    // One message as an SSE event; `id` empty for none (modern streams are not resumable).
    asio::awaitable<bool> write_event(bounded_socket& stream, std::string_view id, std::string_view data) {
        std::string chunk;
        chunk.reserve(data.size() + id.size() + 16);
        if (!id.empty())
            chunk.append("id: ").append(id).append("\n");
        chunk.append("data: ").append(data).append("\n\n");
        co_return co_await write_chunk(stream, chunk);
    }

    // What opens a session stream: with SSE polling (2025-11-25) a priming event, the stream's position as
    // its id and empty data, with the reconnection delay; before that only the delay, which older clients
    // ignore.
    asio::awaitable<bool> write_stream_opening(bounded_socket& stream, event_stream const& es,
                                               std::uint64_t after, bool polling) {
        std::string chunk = "retry: " + std::to_string(options_.sse_retry.count()) + "\n";
        if (polling)
            chunk = "id: " + http::format_event_id(es.number(), after) + "\n" + chunk + "data: \n";
        chunk += "\n";
        co_return co_await write_chunk(stream, chunk);
    }

    // What one POST's response is made of: the lines its handler streams and, once known, its answer.
    struct answer_queue : stream_queue {
        using stream_queue::stream_queue;
        server::connection::handled outcome;
        bool listen = false;
    };

    // ---- modern (and sessionless) requests
    // --------------------------------------------------------------------

    // Serves one request on `conn` and answers on this POST: JSON when nothing else comes first, SSE when the
    // handler sends notifications before its response, and always for a listen. A client that closes the
    // connection cancels a modern request (DIGEST §9), noticed at once (peer_watch), so a dead listen frees
    // its slot promptly. A plain function, as handle(): an answer ready at once goes out through send_reply;
    // anything else goes on in follow().
    asio::awaitable<bool> respond(bounded_socket& stream, request_t const& req, bool keep_alive,
                                  std::shared_ptr<server::connection> conn, jsonrpc::request r,
                                  protocol::http_facts facts, bool modern) {
        // The queue and the answer in one block (one allocation where there were two); both callbacks below
        // hold a pointer to it.
        auto state = std::make_shared<answer_queue>(stream.get_executor(), options_.stream_backlog);
        state->listen = modern && r.method == "subscriptions/listen";
        std::shared_ptr<stream_queue> queue = state;
        std::shared_ptr<server::connection::handled> outcome(state, &state->outcome);
        bool const listen = state->listen;
        if (listen)
            track(conn, queue);
        // The answer closes the queue. An open listen (no answer yet) keeps its stream until the drain
        // finishes its connection, which writes its result and then closes the queue (begin_drain), or until
        // the client goes away. Anything else that has no answer (a cancelled request) is simply over:
        // finishing `conn` here would end a legacy session's connection with it.
        auto settle = [state](server::connection::handled h) {
            state->outcome = std::move(h);
            if (state->outcome.reply || !state->listen)
                state->close();
        };
        server::connection::writer to_queue = [state](std::string line) {
            state->push(std::move(line));
        };
        // Most answers are ready at once, with no coroutine; one whose handler waits goes on in the
        // connection and settles later (and a modern one is drained with the server). The facts are read
        // only here.
        if (auto now = conn->handle_now(std::move(r), &facts, std::move(to_queue), settle))
            settle(std::move(*now));
        else if (modern && !listen)
            track(conn, nullptr);

        std::string line;
        auto const got = queue->try_pop(line);
        if (got == stream_queue::outcome::closed) {
            // Nothing was streamed: a plain JSON answer (or 202 when none is owed, e.g. cancelled).
            reply out{outcome->reply ? static_cast<bhttp::status>(outcome->http_status)
                                     : bhttp::status::accepted,
                      outcome->reply ? jsonrpc::serialize(*outcome->reply) : ""};
            return send_reply(stream, req, std::move(out), keep_alive);
        }
        return follow(stream, req, keep_alive, std::move(conn), std::move(queue), std::move(outcome),
                      std::move(line), got, modern);
    }

    // The rest of respond() for an answer not ready at once: `got` is what the queue held then (`line` the
    // message it took).
    asio::awaitable<bool> follow(bounded_socket& stream, request_t const& req, bool keep_alive,
                                 std::shared_ptr<server::connection> conn,
                                 std::shared_ptr<stream_queue> queue,
                                 std::shared_ptr<server::connection::handled> outcome, std::string line,
                                 stream_queue::outcome got, bool modern) {
        auto abandon = [&] {
            if (modern)
                conn->cancel_requests();
            return false;
        };

        // Most answers are known after one turn of this strand (a handler that waited briefly): look before
        // paying for a watch on the peer, which costs a reactor registration per request.
        if (got == stream_queue::outcome::idle) {
            co_await asio::post(stream.get_executor(), asio::use_awaitable);
            got = queue->try_pop(line);
        }
        std::optional<peer_watch> watch;
        if (got == stream_queue::outcome::idle) {
            watch.emplace(stream.socket(), [queue] { queue->interrupt(); });
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
            reply out{outcome->reply ? static_cast<bhttp::status>(outcome->http_status)
                                     : bhttp::status::accepted,
                      outcome->reply ? jsonrpc::serialize(*outcome->reply) : ""};
            co_await write_reply(stream, req, out, keep_alive);
            co_return true;
        }

        // Streamed: SSE, each message one event; the response (if any) is the last event.
        if (!watch)
            watch.emplace(stream.socket(), [queue] { queue->interrupt(); });
        if (!co_await begin_sse(stream, req, keep_alive))
            co_return abandon();
        bool alive = co_await write_event(stream, {}, line);
        while (alive) {
            got = co_await queue->pop(line, options_.keepalive);
            if (got == stream_queue::outcome::closed)
                break;
            if (watch->gone() || got == stream_queue::outcome::overflowed) {
                alive = false;
            } else if (got == stream_queue::outcome::idle) {
                std::string chunk = ": keepalive\n\n";
                alive = co_await write_chunk(stream, chunk);
            } else if (got == stream_queue::outcome::line) {
                alive = co_await write_event(stream, {}, line);
            }
        }
        if (!alive)
            co_return abandon();
        if (outcome->reply) {
            auto const last = jsonrpc::serialize(*outcome->reply);
            if (!co_await write_event(stream, {}, last))
                co_return false;
        }
        co_return co_await end_sse(stream);
    }

    // ---- legacy session streams
    // -------------------------------------------------------------------------------

    // Where a session request's messages go. Until the response knows whether it streams, what the handler
    // writes (and its answer, when it comes after the first look) is kept here; once the request has a
    // resumable stream, everything goes to the stream, the answer last. Written on the session's strand and
    // read on the socket's, hence the mutex.
    struct session_sink {
        std::mutex mutex;
        std::vector<std::string> early;
        bool close_requested = false;
        std::optional<server::connection::handled> answer; ///< came before the stream was opened
        std::shared_ptr<event_stream> es;
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
        void settle(server::connection::handled h) {
            std::lock_guard lock(mutex);
            if (es)
                complete(std::move(h));
            else
                answer = std::move(h);
        }
        // The stream takes over: what came so far, in order. `mutex` held.
        void open(std::shared_ptr<event_stream> stream) {
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
        void complete(server::connection::handled h) {
            http_status = h.http_status;
            std::optional<std::string> last;
            if (h.reply)
                last = jsonrpc::serialize(*h.reply);
            es->complete(std::move(last));
        }
    };

    // Writes the events of `es` after `after` as they come, each with its id, and keep-alive comments while
    // idle, until one of relay_end happens. The session's reader must be attached as `token`.
    asio::awaitable<relay_end> relay(bounded_socket& stream, event_stream& es, std::uint64_t token,
                                     std::uint64_t after, stream_queue& wake, peer_watch const& watch,
                                     legacy_session const& session) {
        bool const standalone = es.number() == 0;
        std::string ignored;
        for (;;) {
            if (watch.gone())
                co_return relay_end::peer_gone;
            if (!standalone && es.take_close_request())
                co_return relay_end::closed;
            for (auto const& e : es.events_after(after)) {
                auto const id = http::format_event_id(es.number(), e.seq);
                if (!co_await write_event(stream, id, e.data))
                    co_return relay_end::peer_gone;
                after = e.seq;
            }
            if (es.is_complete() && after >= es.last_seq())
                co_return relay_end::complete;
            if (!es.attached(token))
                co_return relay_end::superseded;
            if (standalone && (session.ended() || draining_))
                co_return relay_end::over;
            auto const got = co_await wake.pop(ignored, options_.keepalive);
            if (got == stream_queue::outcome::idle) {
                std::string chunk = ": keepalive\n\n";
                if (!co_await write_chunk(stream, chunk))
                    co_return relay_end::peer_gone;
            }
        }
    }

    // Ends a relayed stream's response: properly unless the peer is gone; a POST stream whose every event
    // reached the client is forgotten (nothing is left to resume). Returns whether the connection goes on.
    asio::awaitable<bool> finish_relay(bounded_socket& stream, legacy_session& session, event_stream& es,
                                       std::uint64_t token, relay_end end) {
        es.detach(token);
        if (end == relay_end::complete && es.number() != 0)
            session.forget_stream(es.number());
        if (end == relay_end::peer_gone)
            co_return false;
        co_return co_await end_sse(stream);
    }

    // Serves a request of a legacy session on this POST: JSON when the answer comes first, else SSE whose
    // events carry ids, so that the client can resume the stream with GET and Last-Event-ID when it breaks or
    // when the handler ends it early (request_context::close_sse_stream, 2025-11-25). A disconnect does not
    // cancel a legacy request (the client sends notifications/cancelled): its messages wait in the stream.
    // Most answers are ready at once (connection::handle_now serves the request on this thread when the
    // session's strand is free): those need neither a stream nor a watch on the peer, nor a coroutine of
    // their own (a plain function, as handle()); anything else goes on in follow_in_session().
    asio::awaitable<bool> respond_in_session(bounded_socket& stream, request_t const& req, bool keep_alive,
                                             std::shared_ptr<legacy_session> session, jsonrpc::request r,
                                             protocol::http_facts facts) {
        bool const polling = sse_polling(session->conn->legacy_version());
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
        auto settle = [sink](server::connection::handled h) {
            sink->settle(std::move(h));
        };
        auto now = session->conn->handle_now(std::move(r), &facts, std::move(to_sink), std::move(settle),
                                             std::move(end_stream));
        {
            std::lock_guard lock(sink->mutex);
            if (now && sink->early.empty() && !sink->close_requested) {
                // Nothing came before the answer: plain JSON (202 when none is owed, e.g. cancelled).
                reply out{now->reply ? static_cast<bhttp::status>(now->http_status) : bhttp::status::accepted,
                          now->reply ? jsonrpc::serialize(*now->reply) : std::string()};
                return send_reply(stream, req, std::move(out), keep_alive);
            }
            // Not (only) an answer: the request gets its resumable stream, which takes over what came.
            if (now)
                sink->answer = std::move(now);
        }
        return follow_in_session(stream, req, keep_alive, std::move(session), std::move(sink), polling);
    }

    // The rest of respond_in_session() for a request that streams or has not answered yet: the response
    // waits to see which it is.
    asio::awaitable<bool> follow_in_session(bounded_socket& stream, request_t const& req, bool keep_alive,
                                            std::shared_ptr<legacy_session> session,
                                            std::shared_ptr<session_sink> sink, bool polling) {
        auto es = session->open_stream();
        auto wake = std::make_shared<stream_queue>(stream.get_executor());
        auto const token = es->attach([wake] { wake->interrupt(); }, false);
        {
            std::lock_guard lock(sink->mutex);
            sink->open(es);
        }
        peer_watch watch(stream.socket(), [wake] { wake->interrupt(); });

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
                // Nothing came before the answer: plain JSON (202 when none is owed, e.g. cancelled). The
                // stream is done with, so the answer moves out of it.
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
                co_await write_reply(stream, req, out, keep_alive);
                co_return true;
            }
            if (close_now || published > 0 || !es->attached(token))
                break;
            co_await wake->pop(ignored, unbounded_wait);
        }

        if (!co_await begin_sse(stream, req, keep_alive) ||
            !co_await write_stream_opening(stream, *es, 0, polling)) {
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

    // GET: the session's standalone stream from now on; with Last-Event-ID, the stream that event belongs to
    // (standalone or a POST's) from after that event, taken over from a reader the server still thinks alive.
    asio::awaitable<bool> handle_get(bounded_socket& stream, request_t& req, bool keep_alive,
                                     server::server const& srv) {
        auto found = session_for(req, srv);
        if (auto* refusal = std::get_if<reply>(&found)) {
            co_await write_reply(stream, req, *refusal, keep_alive);
            co_return true;
        }
        auto session = std::get<std::shared_ptr<legacy_session>>(std::move(found));
        session->touch();
        if (!accepts(req, "text/event-stream")) {
            reply answer =
                reply{bhttp::status::not_acceptable,
                      error_body(std::nullopt, protocol::invalid_request("Invalid Request: Accept must list "
                                                                         "text/event-stream"))};
            co_await write_reply(stream, req, answer, keep_alive);
            co_return true;
        }
        std::shared_ptr<event_stream> es;
        std::uint64_t after = 0;
        auto const resume = header(req, "Last-Event-ID");
        if (resume) {
            auto const position = http::parse_event_id(*resume);
            if (position)
                es = session->find_stream(position->stream);
            if (!es || position->seq > es->last_seq()) {
                reply answer = reply{bhttp::status::bad_request,
                                     error_body(std::nullopt, protocol::invalid_request(
                                                                  "Invalid Request: Last-Event-ID names no "
                                                                  "stream of this session that can be "
                                                                  "resumed"))};
                co_await write_reply(stream, req, answer, keep_alive);
                co_return true;
            }
            after = position->seq;
        } else {
            es = session->standalone();
            after = es->last_seq(); // only what comes from now on; replay is for Last-Event-ID
        }
        auto const ex = co_await asio::this_coro::executor;
        auto wake = std::make_shared<stream_queue>(ex);
        auto const token = es->attach([wake] { wake->interrupt(); }, resume.has_value());
        if (token == 0) {
            reply answer = reply{bhttp::status::conflict,
                                 error_body(std::nullopt, protocol::invalid_request(
                                                              "Invalid Request: this session already has "
                                                              "a stream open"))};
            co_await write_reply(stream, req, answer, keep_alive);
            co_return true;
        }
        bool const polling = sse_polling(session->conn->legacy_version());
        if (!co_await begin_sse(stream, req, keep_alive) ||
            !co_await write_stream_opening(stream, *es, after, polling)) {
            es->detach(token);
            co_return false;
        }
        peer_watch watch(stream.socket(), [wake] { wake->interrupt(); });
        auto const end = co_await relay(stream, *es, token, after, *wake, watch, *session);
        co_return co_await finish_relay(stream, *session, *es, token, end);
    }

    asio::awaitable<bool> handle_delete(bounded_socket& stream, request_t& req, bool keep_alive,
                                        server::server const& srv) {
        auto found = session_for(req, srv);
        if (auto* refusal = std::get_if<reply>(&found)) {
            co_await write_reply(stream, req, *refusal, keep_alive);
            co_return true;
        }
        auto const& session = std::get<std::shared_ptr<legacy_session>>(found);
        sessions_.remove(session->id());
        session->end();
        session->conn->finish([] {});
        reply answer = reply{bhttp::status::ok, {}};
        co_await write_reply(stream, req, answer, keep_alive);
        co_return true;
    }

    std::vector<http_route> routes_;
    http_options options_;
    std::unique_ptr<asio::io_context> own_io_; ///< null when the caller's io_context is served on
    asio::io_context& io_;
    bool serial_ = false; ///< one thread runs io_ (set by run() before anything is accepted)
    tcp::acceptor acceptor_;
    http::session_store sessions_;
    asio::signal_set signals_;
    asio::steady_timer sweep_;
    std::string expected_authorization_; ///< built once, not per request
    std::uint16_t port_ = 0;
    bool loopback_ = true;
    std::atomic<bool> draining_{false};
    std::atomic<std::size_t> open_sockets_{0};
    std::atomic<std::size_t> open_listens_{0};
    std::mutex live_mutex_;
    std::vector<std::pair<std::weak_ptr<server::connection>, std::weak_ptr<stream_queue>>> live_;
    std::mutex sockets_mutex_;
    std::list<std::shared_ptr<socket_entry>> sockets_;
};

namespace {

std::vector<http_route> checked_routes(std::vector<http_route> routes) {
    if (routes.empty())
        throw std::invalid_argument("http_server: no route");
    for (std::size_t i = 0; i < routes.size(); ++i) {
        if (!routes[i].srv)
            throw std::invalid_argument("http_server: the route " + routes[i].path + " has no server");
        if (!routes[i].path.starts_with("/") || routes[i].path.find_first_of("?# ") != std::string::npos)
            throw std::invalid_argument("http_server: a route's path must start with / and hold no query: " +
                                        routes[i].path);
        for (std::size_t j = 0; j < i; ++j)
            if (routes[j].path == routes[i].path)
                throw std::invalid_argument("http_server: two routes at " + routes[i].path);
    }
    return routes;
}

} // namespace

std::size_t io_threads_for(http_options const& options) {
    return options.io_threads != 0 ? options.io_threads : usable_cpus();
}

http_server::http_server(server::server& srv, http_options options)
    : http_server(std::vector<http_route>{{options.path, &srv}}, options) {}

http_server::http_server(std::vector<http_route> routes, http_options options)
    : impl_(std::make_shared<impl>(checked_routes(std::move(routes)), std::move(options), nullptr)) {}

http_server::http_server(std::vector<http_route> routes, http_options options, asio::io_context& io)
    : impl_(std::make_shared<impl>(checked_routes(std::move(routes)), std::move(options), &io)) {}

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
std::string http_server::url(std::string_view path) const {
    return impl_->url(path);
}
void http_server::run() {
    impl_->run();
}
void http_server::stop() {
    impl_->stop();
}

} // namespace duet::transport
