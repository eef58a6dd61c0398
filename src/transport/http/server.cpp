// http_server: the listener and its lifecycle (accept, the per-socket read loop, session expiry, the drain).
// What a request gets is decided in request_router.hpp.
#include <duet/auth/verifiers.hpp>
#include <duet/log/log.hpp>
#include <duet/server/connection.hpp>
#include <duet/transport/http_server.hpp>

#include "bearer_guard.hpp"
#include "bounded_socket.hpp"
#include "drain_registry.hpp"
#include "listener_socket.hpp"
#include "live_session.hpp"
#include "modern_responses.hpp"
#include "probes.hpp"
#include "read_errors.hpp"
#include "read_pacing.hpp"
#include "reply.hpp"
#include "request.hpp"
#include "request_guards.hpp"
#include "request_router.hpp"
#include "route_table.hpp"
#include "server_context.hpp"
#include "support/descriptors.hpp"
#include "tls_listener.hpp"

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
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>

#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace duet::transport {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {

void log_stderr(std::string const& s, log::level severity = log::level::warning) {
    log::event const e{.severity = severity, .component = "duet http", .name = "http", .message = s};
    log::write(e);
}

// The CPUs this process may run on (its affinity mask), at least one.
std::size_t usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0)
        return static_cast<std::size_t>(std::max(1, CPU_COUNT(&set)));
    return std::max(1u, std::thread::hardware_concurrency());
}

// The shortest bound a connection's reads and writes are given: its socket's timer wakes no more often.
http::bounded_socket::clock::duration shortest_bound(http_options const& options) {
    auto shortest = std::min({options.idle_timeout, options.read_timeout, options.header_timeout});
    if (options.tls)
        shortest = std::min(shortest, options.tls->handshake_timeout);
    return shortest;
}

// Sessions this process serves end with their connection; another process's are its own to end.
void end_session(store::session& s) {
    s.end();
    if (s.local())
        http::live(s).conn->finish([] {});
}

// What the metadata lists when the options name no scopes: the required ones and those the routes' tools,
// prompts and resources ask for, each once.
std::vector<std::string> scopes_supported(protected_resource const& authorization,
                                          std::vector<http_route> const& routes) {
    auto out = authorization.required_scopes;
    for (auto const& r : routes)
        for (auto& s : r.srv->declared_scopes())
            if (std::find(out.begin(), out.end(), s) == out.end())
                out.push_back(std::move(s));
    return out;
}

} // namespace

class http_server::impl : public std::enable_shared_from_this<http_server::impl> {
public:
    /// Serves on `io` when given, else on an io_context of its own.
    impl(std::vector<http_route> routes, http_options options, asio::io_context* io)
        : own_io_(io ? nullptr : std::make_unique<asio::io_context>()),
          ctx_(std::move(options), io ? *io : *own_io_), acceptor_(ctx_.io),
          signals_(ctx_.io, SIGINT, SIGTERM), reload_signal_(ctx_.io), sweep_(ctx_.io),
          bearer_(ctx_.options.authorization ? std::make_unique<http::bearer_guard>(
                                                   *ctx_.options.authorization, http::paths_of(routes),
                                                   scopes_supported(*ctx_.options.authorization, routes))
                                             : nullptr),
          routes_(std::move(routes)), guards_(ctx_.options), router_(ctx_, routes_, guards_, bearer_.get()) {
        http::check_probes(*routes_.load(), ctx_.options);
        if (ctx_.options.tls)
            tls_.emplace(*ctx_.options.tls);
        if (ctx_.options.metrics)
            sessions_gauge_ = ctx_.options.metrics->add_gauge(
                "duet_http_legacy_sessions_open", "Legacy sessions open now (in this server's store).", "",
                [sessions = ctx_.sessions] { return static_cast<double>(sessions->size()); });
    }

    boost::system::error_code listen() {
        boost::system::error_code ec;
        auto const address = asio::ip::make_address(ctx_.options.host, ec);
        if (ec)
            return ec;
        if (auto refused = http::open_listener(acceptor_, address, ctx_.options.port))
            return refused;
        port_ = acceptor_.local_endpoint().port();
        guards_.set_bound_address(address.is_loopback() ? std::string() : address.to_string());
        return {};
    }

    std::uint16_t port() const noexcept { return port_; }

    std::string url() const {
        auto const routes = routes_.load();
        return url(routes->empty() ? std::string_view() : std::string_view(routes->front().path));
    }

    std::string url(std::string_view path) const {
        auto host = ctx_.options.host;
        if (host.find(':') != std::string::npos)
            host = "[" + host + "]";
        return (tls_ ? "https://" : "http://") + host + ":" + std::to_string(port_) + std::string(path);
    }

    // One change at a time: each snapshot is built from the one before, and the metadata follows the routes
    // in the same order.
    void add_route(http_route route) {
        std::lock_guard changing(changes_);
        auto const path = route.path;
        auto next = http::route_table::with(*routes_.load(), std::move(route));
        http::check_clear_of_probes(path, ctx_.options);
        publish(std::move(next));
    }

    bool remove_route(std::string_view path) {
        std::lock_guard changing(changes_);
        auto next = http::route_table::without(*routes_.load(), path);
        if (!next)
            return false;
        publish(std::move(next));
        return true;
    }

    std::vector<std::string> route_paths() const { return http::paths_of(*routes_.load()); }

    void run() {
        auto const io_threads = io_threads_for(ctx_.options);
        ctx_.serial = io_threads == 1;
        asio::co_spawn(ctx_.io, accept_loop(), asio::detached);
        signals_.async_wait([self = shared_from_this()](boost::system::error_code ec, int) {
            if (!ec)
                self->stop();
        });
        schedule_sweep();
        if (tls_) {
            reload_signal_.add(SIGHUP);
            await_reload_signal();
        }
        std::vector<std::thread> threads;
        for (std::size_t i = 1; i < io_threads; ++i)
            threads.emplace_back([this] { ctx_.io.run(); });
        ctx_.io.run();
        for (auto& t : threads)
            t.join();
    }

    void stop() {
        asio::post(ctx_.io, [self = shared_from_this()] { self->begin_drain(); });
    }

    std::optional<std::string> reload_tls() {
        if (!tls_)
            return "this server does not speak TLS";
        return tls_->reload();
    }

    tls_counts tls_handshakes() const noexcept { return tls_ ? tls_->counts() : tls_counts{}; }

private:
    // ---- lifecycle ----------------------------------------------------------------------------------------

    void begin_drain() {
        if (ctx_.draining.exchange(true))
            return;
        boost::system::error_code ignored;
        acceptor_.close(ignored);
        signals_.cancel(ignored);
        reload_signal_.cancel(ignored);
        sweep_.cancel();
        // Keep-alive connections between requests have nothing to finish: closed now, so they do not hold the
        // drain until the deadline.
        for (auto const& entry : ctx_.registry.open_sockets())
            asio::post(entry->strand, [entry] {
                if (entry->alive && entry->idle)
                    entry->stream->cancel();
            });
        // Streams end with their final messages; sessions end; requests in flight get until the deadline.
        for (auto const& s : ctx_.sessions->all())
            end_session(*s);
        for (auto const& [c, listen] : ctx_.registry.live_connections()) {
            // A listen's stream ends after the result finish() writes to it; other requests run to their end.
            if (listen)
                c->finish([listen] { listen->close(); });
            else
                c->finish([] {});
        }
        auto deadline = std::make_shared<asio::steady_timer>(ctx_.io, ctx_.options.drain_deadline);
        deadline->async_wait([this, deadline](boost::system::error_code) {
            if (open_sockets_ > 0)
                log_stderr("drain deadline reached with " + std::to_string(open_sockets_.load()) +
                           " connection(s) still open");
            ctx_.io.stop();
        });
        maybe_stop();
    }

    void maybe_stop() {
        if (ctx_.draining && open_sockets_ == 0)
            ctx_.io.stop();
    }

    // Certificate rotation: SIGHUP reads the files again; a bad set is refused and the old one kept.
    void await_reload_signal() {
        reload_signal_.async_wait([self = shared_from_this()](boost::system::error_code ec, int) {
            if (ec)
                return;
            if (auto why = self->tls_->reload())
                log_stderr("SIGHUP: the TLS certificate was not reloaded, the previous one stays: " + *why);
            else
                log_stderr("SIGHUP: TLS certificate and key reloaded from " +
                               self->ctx_.options.tls->cert_file,
                           log::level::info);
            self->await_reload_signal();
        });
    }

    void schedule_sweep() {
        // Every 30 s, or twice per expiry when that is shorter, so a session outlives its expiry by half of
        // it.
        auto const half =
            std::chrono::duration_cast<std::chrono::milliseconds>(ctx_.options.session_expiry / 2);
        sweep_.expires_after(std::clamp<std::chrono::milliseconds>(half, std::chrono::milliseconds(50),
                                                                   std::chrono::seconds(30)));
        sweep_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (ec)
                return;
            for (auto const& s : self->ctx_.sessions->expire(self->ctx_.options.session_expiry))
                end_session(*s);
            self->schedule_sweep();
        });
    }

    // What a socket's handlers run on: the io_context itself when one thread runs it, else a strand each.
    asio::any_io_executor socket_executor() {
        if (ctx_.serial)
            return ctx_.io.get_executor();
        return asio::make_strand(ctx_.io);
    }

    // Waits `backoff` and doubles it (to a second at most); false once a drain began.
    asio::awaitable<bool> accept_pause(asio::steady_timer& pause, std::chrono::milliseconds& backoff) {
        pause.expires_after(backoff);
        co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
        backoff = std::min<std::chrono::milliseconds>(backoff * 2, std::chrono::seconds(1));
        co_return !ctx_.draining;
    }

    // Stops accepting while at max_connections or out of descriptors, and resumes with a backoff (from 10 ms,
    // doubling to a second) as connections close: a full process neither spins on EMFILE nor takes
    // connections it cannot serve. Those waiting meanwhile stay in the kernel's backlog.
    asio::awaitable<void> accept_loop() {
        auto const cap = max_connections_for(ctx_.options);
        asio::steady_timer pause(ctx_.io);
        auto backoff = std::chrono::milliseconds(10);
        bool said = false;
        for (;;) {
            if (open_sockets_ >= cap) {
                if (!said)
                    log_stderr("at " + std::to_string(cap) +
                               " connections (max_connections): accepting again as "
                               "they close");
                said = true;
                if (!co_await accept_pause(pause, backoff))
                    co_return;
                continue;
            }
            // No structured bindings across co_await: GCC 12 mislays them in the coroutine frame.
            auto ec_result =
                co_await acceptor_.async_accept(socket_executor(), asio::as_tuple(asio::use_awaitable));
            auto ec = std::get<0>(ec_result);
            auto socket = std::move(std::get<1>(ec_result));

            if (ec) {
                if (ec == asio::error::operation_aborted || ctx_.draining)
                    co_return;
                if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
                    ec == asio::error::no_memory || ec.value() == ENFILE) {
                    if (!said)
                        log_stderr("cannot accept: " + ec.message() + "; trying again as connections close");
                    said = true;
                    if (!co_await accept_pause(pause, backoff))
                        co_return;
                }
                continue;
            }
            backoff = std::chrono::milliseconds(10);
            said = false;
            support::set_close_on_exec(socket.native_handle());
            socket.set_option(tcp::no_delay(true), ec);
            ++open_sockets_;
            if (ctx_.counters) {
                ctx_.counters->connections_open.fetch_add(1, std::memory_order_relaxed);
                ctx_.counters->connections_total.fetch_add(1, std::memory_order_relaxed);
            }
            auto ex = socket.get_executor();
            asio::co_spawn(
                ex, serve_socket(std::move(socket)), [self = shared_from_this()](std::exception_ptr e) {
                    if (e) {
                        try {
                            std::rethrow_exception(e);
                        } catch (std::exception const& x) {
                            log_stderr(std::string("connection ended: ") + x.what());
                        }
                    }
                    --self->open_sockets_;
                    if (self->ctx_.counters)
                        self->ctx_.counters->connections_open.fetch_sub(1, std::memory_order_relaxed);
                    self->maybe_stop();
                });
        }
    }

    // ---- one TCP connection -------------------------------------------------------------------------------

    asio::awaitable<void> serve_socket(tcp::socket socket) {
        auto const& options = ctx_.options;
        http::bounded_socket stream(std::move(socket), shortest_bound(options));
        beast::flat_buffer buffer;
        http::modern_slot modern;
        http::route_table::view routes; // the routes this connection's requests are looked up in
        auto entry = std::make_shared<http::drain_registry::socket_entry>();
        entry->stream = &stream;
        entry->strand = stream.get_executor();
        auto const registered = ctx_.registry.enter(entry);
        if (tls_) {
            entry->idle = true; // a drain closes a connection still in its handshake
            if (!co_await tls_->handshake(stream)) {
                entry->alive = false;
                ctx_.registry.leave(registered);
                co_return;
            }
        }
        http::read_pacing pacing(stream, options);
        for (std::size_t served = 0;; ++served) {
            if (ctx_.draining && buffer.size() == 0)
                break; // between requests at a drain: nothing to finish
            http::request_parser parser(&pacing, options.max_target_bytes);
            parser.header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
            parser.body_limit(options.max_body_bytes);
            // A new connection's head within header_timeout; a kept-alive one waits up to idle_timeout for
            // its next request to begin; a body gets its own bound once its size is known (read_pacing).
            if (served == 0)
                stream.bound(options.header_timeout);
            else
                stream.bound_next_request(options.idle_timeout, options.header_timeout, buffer);
            entry->idle = buffer.size() == 0;
            // Deferred: the read starts from this frame instead of a coroutine of its own (bench/findings.md,
            // HTTP per-request cost, session 9). No structured bindings across co_await (GCC 12).
            auto ec_result =
                co_await bhttp::async_read(stream, buffer, parser, asio::as_tuple(asio::deferred));
            stream.unbound();
            auto ec = std::get<0>(ec_result);
            entry->idle = false;

            if (ec) {
                if (auto answer = http::answer_to_read_error(ec, parser, options);
                    answer && !stream.timed_out()) {
                    http::request const dummy(11);
                    co_await ctx_.replies.write(stream, dummy, *answer, false);
                    co_await http::linger(stream, 2 * options.max_body_bytes);
                }
                break;
            }
            auto req = parser.release();
            if (ctx_.counters)
                ctx_.counters->request_bytes.fetch_add(req.body().size(), std::memory_order_relaxed);
            bool const keep_alive =
                req.keep_alive() && !ctx_.draining && served + 1 < options.max_requests_per_connection;
            bool const keep = co_await router_.handle(stream, req, keep_alive, modern, routes);
            if (!keep || !keep_alive)
                break;
        }
        entry->alive = false;
        ctx_.registry.leave(registered);
        if (stream.is_tls() && !stream.timed_out())
            co_await http::tls_listener::close(stream);
        boost::system::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }

    // The protected resource metadata first (the endpoints it is published at, the scopes it lists), then the
    // requests: an endpoint is never served before its metadata is.
    void publish(http::route_table::snapshot next) {
        if (bearer_)
            bearer_->set_routes(http::paths_of(*next), scopes_supported(*ctx_.options.authorization, *next));
        routes_.publish(std::move(next));
    }

    std::unique_ptr<asio::io_context> own_io_; ///< null when the caller's io_context is served on
    http::server_context ctx_;
    metrics::registry::registration sessions_gauge_;
    tcp::acceptor acceptor_;
    asio::signal_set signals_;
    asio::signal_set reload_signal_; ///< SIGHUP, when TLS is served
    asio::steady_timer sweep_;
    std::optional<http::tls_listener> tls_;
    std::unique_ptr<http::bearer_guard> bearer_; ///< null: no tokens checked
    http::route_table routes_;
    std::mutex changes_; ///< held by add_route and remove_route
    http::request_guards guards_;
    http::request_router router_;
    std::uint16_t port_ = 0;
    std::atomic<std::size_t> open_sockets_{0};
};

namespace {

// A static bearer_token becomes the authorization it stands for; authorization without a verifier is refused.
http_options checked_options(http_options options) {
    if (options.bearer_token && !options.authorization) {
        auto verifier = auth::make_static_token_verifier(std::move(*options.bearer_token));
        if (!verifier)
            throw std::invalid_argument("http_server: " + verifier.error().message);
        options.authorization = protected_resource{.verifier = std::move(*verifier)};
    }
    options.bearer_token.reset();
    if (options.authorization) {
        auto const& a = *options.authorization;
        if (!a.verifier)
            throw std::invalid_argument("http_server: authorization needs a token verifier");
        if (!a.authorization_servers.empty() && !a.resource.starts_with("https://") &&
            !a.resource.starts_with("http://"))
            throw std::invalid_argument(
                "http_server: authorization needs the resource's URL (its identifier), not \"" + a.resource +
                "\"");
    }
    return options;
}

} // namespace

std::size_t max_connections_for(http_options const& options) {
    if (options.max_connections != 0)
        return options.max_connections;
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
        return 65536;
    // Room for what else the process opens: the listener, files, upstream connections and children's pipes.
    auto const descriptors = static_cast<std::size_t>(limit.rlim_cur);
    return descriptors > 128 ? descriptors - 64 : std::max<std::size_t>(descriptors / 2, 1);
}

std::size_t io_threads_for(http_options const& options) {
    return options.io_threads != 0 ? options.io_threads : usable_cpus();
}

http_server::http_server(server::server& srv, http_options options)
    : http_server(std::vector<http_route>{{options.path, &srv}}, options) {}

http_server::http_server(server::server& srv, http_options options, asio::io_context& io)
    : http_server(std::vector<http_route>{{options.path, &srv}}, options, io) {}

http_server::http_server(std::vector<http_route> routes, http_options options)
    : impl_(std::make_shared<impl>(http::checked_routes(std::move(routes)),
                                   checked_options(std::move(options)), nullptr)) {}

http_server::http_server(std::vector<http_route> routes, http_options options, asio::io_context& io)
    : impl_(std::make_shared<impl>(http::checked_routes(std::move(routes)),
                                   checked_options(std::move(options)), &io)) {}

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
std::optional<std::string> http_server::reload_tls() {
    return impl_->reload_tls();
}
tls_counts http_server::tls_handshakes() const noexcept {
    return impl_->tls_handshakes();
}
void http_server::add_route(http_route route) {
    impl_->add_route(std::move(route));
}
bool http_server::remove_route(std::string_view path) {
    return impl_->remove_route(path);
}
std::vector<std::string> http_server::route_paths() const {
    return impl_->route_paths();
}

} // namespace duet::transport
