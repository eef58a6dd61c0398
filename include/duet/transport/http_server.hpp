/// @file duet/transport/http_server.hpp
///
/// Streamable HTTP (DIGEST §9) for both eras on one endpoint, on Boost.Beast. A POST whose body claims a
/// protocol version in `_meta` is modern and served statelessly (JSON, or SSE when the handler streams
/// notifications, and always for subscriptions/listen); `initialize` opens a legacy session
/// (`Mcp-Session-Id`), which later POSTs, GET (its standalone SSE stream) and DELETE continue. A session's
/// SSE streams carry event ids and resume with `Last-Event-ID` from a bounded replay buffer; at 2025-11-25
/// they open with a priming event and `retry`, and a handler may end its POST stream early for the client to
/// resume it (request_context::close_sse_stream, SEP-1699 polling). The era is decided by protocol::admit,
/// never here; this file maps its verdicts to HTTP.
///
///     duet::transport::http_options opts{.port = 0};
///     duet::transport::http_server http(srv, opts);
///     if(auto ec = http.listen()) ...;            // binds; http.url() names the endpoint
///     http.run();                                  // serves until SIGINT/SIGTERM, then drains
///
/// @par Safety
/// Binds 127.0.0.1 by default; rejects foreign `Origin`/`Host` headers (403, DNS-rebinding protection);
/// bounds bodies (413), headers (431), sessions, listen streams (503) and idle time before any JSON is
/// parsed; optionally an OAuth 2.1 resource server (protected_resource.hpp: bearer tokens, 401/403
/// challenges, protected resource metadata).
///
/// @par Policy hooks
/// What a deployment decides (which requests to refuse, whether it is healthy) stays with it: request_gate
/// and probes are asked, and the server carries out their answers.
#pragma once

#include <duet/metrics/registry.hpp>
#include <duet/protocol/caller.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/server/server.hpp>
#include <duet/store/session_store.hpp>
#include <duet/tls/config.hpp>
#include <duet/transport/protected_resource.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/json/object.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::transport {

/// One JSON-RPC request as http_options::request_gate sees it. Views into the request being served, valid
/// for the call only.
struct gate_facts {
    std::string_view method;
    /// The request's params; never null: an empty object when it has none (or sent an array).
    boost::json::object const* params = nullptr;
    /// Who sent it, as far as authentication established it (mutual TLS, the bearer token verified for this
    /// request); null when nothing was.
    protocol::caller_identity const* caller = nullptr;
    /// The TCP peer's IP address as text (an IPv4-mapped IPv6 one as IPv4): the hop in front of the server,
    /// a proxy's when one forwards the request.
    std::string_view peer_address;
};

/// A gate's refusal of a request.
struct gate_refusal {
    unsigned http_status = 429;
    /// Sent as `Retry-After`, in whole seconds and at least 1: a client told 0 would come straight back.
    std::chrono::seconds retry_after{1};
    /// The JSON-RPC error the refused request is answered with (under its id).
    protocol::error_object error;
};

/// What a probe (http_options::probes) answers.
struct probe_answer {
    unsigned status = 200;
    std::string body;
    std::string content_type = "text/plain; charset=utf-8";
};

struct http_options {
    std::string host = "127.0.0.1";
    std::uint16_t port = 8750; ///< 0 picks a free port
    std::string path = "/mcp";
    /// Threads serving connections. 0: one per CPU this process may run on (its affinity mask), so a
    /// process pinned to one core does not hand requests between threads that take turns on it. With one
    /// thread, sockets and sessions run on the io_context itself, without a strand each.
    std::size_t io_threads = 0;
    std::size_t max_body_bytes = 4 * 1024 * 1024;
    std::size_t max_header_bytes = 16 * 1024;
    /// A request target longer than this is answered 414.
    std::size_t max_target_bytes = 8 * 1024;
    /// Each write of a response must be through within it.
    std::chrono::milliseconds read_timeout = std::chrono::seconds(30);
    /// How long a kept-alive connection waits for its next request to begin.
    std::chrono::milliseconds idle_timeout = std::chrono::seconds(120);
    /// A new connection's first request line and header fields, and any request's fields once its request
    /// line arrived, must be in within this: a client trickling its head (slowloris) holds a connection for
    /// seconds, not minutes.
    std::chrono::milliseconds header_timeout = std::chrono::seconds(10);
    /// The slowest a body may arrive, on average: a body gets header_timeout plus its size at this rate.
    std::size_t min_body_bytes_per_second = 8 * 1024;
    /// Requests one kept-alive connection serves; the last is answered with `Connection: close`.
    std::size_t max_requests_per_connection = 10000;
    /// Open connections at once; the listener stops accepting at the cap (and when out of descriptors) and
    /// resumes as connections close. 0: derived from the process's descriptor limit (RLIMIT_NOFILE).
    std::size_t max_connections = 0;
    /// The legacy sessions and their resumable streams. Null: an in-memory store within max_sessions,
    /// replay_events and resumable_streams (which a given store does not read: it has limits of its own).
    std::shared_ptr<store::session_store> session_store;
    std::size_t max_sessions = 10000;
    std::chrono::milliseconds session_expiry = std::chrono::hours(1);
    /// Legacy sessions one peer address may open: a burst, then this many per second (0: unbounded). Beyond
    /// it `initialize` is answered 429, so one peer cannot fill max_sessions and lock everyone else out.
    std::size_t session_burst_per_peer = 1024;
    double sessions_per_second_per_peer = 1.0;
    std::size_t max_listen_streams = 1000;
    /// Per legacy session stream (the standalone one and each POST's), kept for Last-Event-ID resumption;
    /// also the bound of what waits there for a slow client.
    std::size_t replay_events = 256;
    /// POST streams a legacy session keeps for resumption; beyond it the oldest no client reads is dropped.
    std::size_t resumable_streams = 32;
    /// Messages a modern response stream holds for a slow client; beyond it the stream is dropped (and the
    /// request cancelled).
    std::size_t stream_backlog = 1024;
    /// The SSE `retry` delay: how long a client waits before it resumes a stream the server ended.
    std::chrono::milliseconds sse_retry = std::chrono::seconds(1);
    std::chrono::milliseconds keepalive = std::chrono::seconds(15);
    std::chrono::milliseconds drain_deadline = std::chrono::seconds(10);
    /// Origins allowed besides loopback ones (e.g. "https://app.example"), compared whole (scheme, host
    /// and port).
    std::vector<std::string> allowed_origins;
    /// Host names (or host:port) clients may use besides loopback ones. A server bound beyond loopback
    /// accepts only these, plus the address it is bound to; "*" accepts any Host.
    std::vector<std::string> allowed_hosts;
    /// When set, the server is an OAuth 2.1 resource server: every request needs a bearer token its
    /// verifier accepts (protected_resource.hpp).
    std::optional<protected_resource> authorization;
    /// When set (and `authorization` is not), every request needs `Authorization: Bearer <token>`, compared
    /// in constant time: authorization with auth::make_static_token_verifier and no metadata.
    std::optional<std::string> bearer_token;
    /// When set, the server speaks HTTPS only (url() says https://); SIGHUP then reloads the certificate and
    /// key (reload_tls()). Plain HTTP otherwise, with no TLS code on its path.
    std::optional<tls::server_config> tls;
    /// Asked about every JSON-RPC request a POST carries (each of a batch) once the caller is authenticated
    /// and holds the request's scopes, before the request reaches its server: where a deployment's policy
    /// (rate limits per caller or per tool, an upstream to spare) refuses requests without the transport
    /// knowing that policy. A refusal is answered with its status, `Retry-After` and its error under the
    /// request's id; one refused request of a batch refuses the whole batch (its error under that request's
    /// id), so no part of a batch runs that its client will retry. Notifications and responses are never
    /// asked about: nothing answers them that could carry a refusal. Called inline on the I/O threads,
    /// concurrently: it must neither block nor throw (an exception ends the connection). Empty: no gate.
    std::function<std::optional<gate_refusal>(gate_facts const&)> request_gate;
    /// Health endpoints for orchestrators, by path (e.g. "/healthz", "/readyz"): a GET is answered with the
    /// function's answer, a HEAD with the same head and no body, any other method 405. They are answered
    /// before the Origin and Host checks and without a token, since an orchestrator probes a pod by its IP
    /// and holds none; so an answer must reveal nothing a stranger may not know. A path must start with "/"
    /// and must neither be an MCP route's path nor sit under one (route + "/"), so no upstream a gateway
    /// adds under its path is ever shadowed: the constructor (and add_route) throws std::invalid_argument
    /// naming it. Called
    /// inline on any I/O thread, concurrently: it must neither block nor throw.
    std::map<std::string, std::function<probe_answer()>> probes;
    /// Where the server counts what it holds open and carries (connections, SSE streams, listens, legacy
    /// sessions, body bytes, responses by status class). Give the same registry to the servers it serves
    /// (server_options::metrics) for their requests. Null: nothing is counted.
    std::shared_ptr<metrics::registry> metrics;
};

/// The TLS handshakes an https server has seen.
struct tls_counts {
    std::uint64_t completed = 0; ///< handshakes that succeeded
    std::uint64_t resumed = 0;   ///< of which resumed an earlier session (a ticket)
    std::uint64_t failed = 0;    ///< refused, timed out, or not TLS at all
};

/// The threads an http_server given `options` serves on: io_threads, or when 0 one per CPU this process may
/// run on.
[[nodiscard]] std::size_t io_threads_for(http_options const& options);

/// The connections an http_server given `options` serves at once: max_connections, or when 0 the process's
/// descriptor limit less 64 for what else it opens.
[[nodiscard]] std::size_t max_connections_for(http_options const& options);

/// One endpoint of an http_server: the server answering at `path` (e.g. "/mcp/search"). Each endpoint keeps
/// its own legacy sessions.
struct http_route {
    std::string path;
    server::server* srv = nullptr;
};

class http_server {
public:
    /// One endpoint, at options.path.
    http_server(server::server& srv, http_options options);
    /// Several endpoints on one port, each at its own path (options.path is not used); any other path is
    /// answered 404 naming the served ones. Throws std::invalid_argument for no route, a route without a
    /// server, a path not starting with "/" (or holding a query), or two routes at one path; for a probe
    /// path that is not one, or is at or under a route's (options.probes), or a probe without a function; and
    /// for TLS files that cannot be used (options.tls), naming the file and why.
    http_server(std::vector<http_route> routes, http_options options);
    /// The same, serving on `io`, which the caller owns and which must outlive this object: other work on
    /// `io` (e.g. a gateway's upstream connections) then shares the server's threads instead of handing every
    /// request to a thread of its own. run() runs `io` and returns once it stopped it after the drain; to
    /// finish other work on `io` afterwards, restart it.
    http_server(std::vector<http_route> routes, http_options options, boost::asio::io_context& io);
    /// One endpoint at options.path, served on `io` as above (an embedded gateway's upstream connections
    /// and the server on one io_context).
    http_server(server::server& srv, http_options options, boost::asio::io_context& io);
    ~http_server();
    http_server(http_server const&) = delete;
    http_server& operator=(http_server const&) = delete;

    /// Binds and listens. On success url() and port() are known.
    [[nodiscard]] boost::system::error_code listen();
    [[nodiscard]] std::uint16_t port() const noexcept;
    /// "http://127.0.0.1:PORT/mcp": the URL of the first endpoint served now (the server's root,
    /// "http://127.0.0.1:PORT", once every route was removed).
    [[nodiscard]] std::string url() const;
    /// The URL of the endpoint at `path`, served or not.
    [[nodiscard]] std::string url(std::string_view path) const;

    /// Serves `route` from now on, while the server runs (`duet gateway` reloading its upstreams): a request
    /// whose head is read after this returns reaches it. Throws std::invalid_argument naming the path for a
    /// route the constructor refuses: no server, a path not starting with "/" (or holding a query), a path
    /// already served, or one that a probe is at or under (options.probes). Thread-safe, as are the two
    /// below; requests are looked up in an immutable snapshot of the routes, so serving never waits for a
    /// change.
    void add_route(http_route route);
    /// Stops serving `path`: requests that begin after it returns get the 404 any unknown path gets (naming
    /// the paths served), legacy sessions opened there included, since their endpoint is gone. What is under
    /// way carries on: requests in flight run to their answers, streams and sessions stay until they end,
    /// expire or the server drains. So the route's server must outlive the http_server, as every route's
    /// does. False when no route is at `path`. Removing the last route leaves a server answering 404 to every
    /// MCP request (probes and metadata still answer).
    bool remove_route(std::string_view path);
    /// The paths served now, in the order they were added (the constructor's first).
    [[nodiscard]] std::vector<std::string> route_paths() const;

    /// Serves on io_threads threads until stop() or SIGINT/SIGTERM, then drains: stops accepting, lets
    /// in-flight requests finish within drain_deadline, ends streams with their final messages, and returns.
    void run();
    /// Starts the drain from any thread.
    void stop();

    /// Reads options.tls's certificate and key again (certificate rotation; SIGHUP does the same): new
    /// connections use them, open ones keep theirs. When the files are not usable the server keeps what it
    /// has and the reason is returned. Thread-safe.
    [[nodiscard]] std::optional<std::string> reload_tls();
    [[nodiscard]] tls_counts tls_handshakes() const noexcept;

    class impl;

private:
    std::shared_ptr<impl> impl_;
};

} // namespace duet::transport
