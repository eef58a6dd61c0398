/// @file duet/gateway/upstream_backend.hpp
///
/// `duet gateway`'s core: a server backend (duet/server/server.hpp) that serves what one upstream MCP server
/// offers, of either era, to downstream clients of both eras. The server in front keeps admission, sessions,
/// listens, input rounds and shaping; this backend forwards lists, calls, reads, gets and completion over
/// duet::client connections, and brings back what the upstream asks and announces:
///
///  - modern downstream requests go over a small pool of upstream connections, each carrying several calls at
///    once where everything the upstream sends about a call can be told apart, one at a time elsewhere (the
///    rule is in src/gateway/upstream_pool.hpp); for a legacy upstream the pool is keyed by the request's
///    client capabilities (an upstream session declares exactly what the downstream request declared);
///  - each legacy downstream session of a legacy upstream gets a connection of its own (a stdio upstream: a
///    child of its own), opened with the session's capabilities, closed when the session ends;
///  - a question the upstream asks during a call reaches the downstream client: a real request in a legacy
///    session, an input_required round for a modern request (the call waits, parked, for the retry; a retry
///    that finds no parked call replays it, reusing the answers the client sends again);
///  - upstream list changes and resource updates are announced downstream; resources watched downstream are
///    subscribed upstream while watched;
///  - an upstream that fails is a -32603 error naming it, never a hang; a stdio child that died is started
///    again for the next request;
///  - what an upstream can cost the gateway is bounded: each call's wait for its answer and for a free
///    connection, the size of a message, the calls parked for retries, the children legacy sessions start,
///    and a child's stderr (read into the gateway's log, each line prefixed with the upstream's name). A
///    stdio child inherits no descriptor of the gateway but its stdin, stdout and stderr, and no environment
///    but what its target says.
///
///     auto up = co_await upstream_backend::async_create(options);     // on the upstream executor
///     duet::server::server srv((*up)->describe());
///     (*up)->attach(srv);                                               // srv now serves the upstream
///
/// @par Threads
/// The backend and every upstream connection live on the executor async_create ran on, which must run one
/// handler at a time (an io_context with one thread, or a strand); downstream handlers reach it from their
/// own executors.
#pragma once

#include <duet/client/client.hpp>
#include <duet/protocol/param_headers.hpp>
#include <duet/protocol/server_changes.hpp>
#include <duet/server/server.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace duet::gateway {

/// What a legacy session of a legacy stdio upstream gets once max_session_children have a child each.
enum class over_children : std::uint8_t {
    share,  ///< it is served from the pool, as with share_sessions
    refuse, ///< its initialize fails (HTTP 503): the client may try again later
};

struct gateway_options {
    /// A stdio upstream's children get exactly the environment its stdio_target::env gives; none given, the
    /// default allow-list (client::child_environment()), never the gateway's whole environment.
    client::server_target upstream;
    /// The upstream's name among several (logs and errors name it); empty: unnamed.
    std::string name;
    /// How to reach the upstream's era: legacy, modern, or auto (probe server/discover, fall back).
    client::connect_mode mode = client::connect_mode::auto_detect;
    /// Accept tool arguments sent flat in `params.payload` (moved into `arguments`); otherwise -32602.
    bool lenient_args = false;
    /// The upstream connections modern requests share, per capability set (legacy upstream) or in all
    /// (modern upstream), kept open between requests, each carrying several requests at once where the
    /// upstream's messages about each can be told apart (else one at a time). A stdio upstream has at most
    /// this many children in a pool (a request no child may take waits for one); an HTTP upstream opens
    /// more connections for requests that cannot share and keeps this many.
    std::size_t pool_size = 4;
    /// Legacy sessions of a legacy upstream share that pool too, instead of each getting an upstream
    /// connection (stdio: a child) of its own, opened as the session begins (servers keep per-session state).
    bool share_sessions = false;
    /// Linux: while 8 or more requests are in flight on the thread serving them, that thread runs in the
    /// batch scheduling class, back to its own at 2 or fewer (src/support/busy_batching.hpp). An upstream
    /// sharing the gateway's core then answers a batch before the gateway relays it, instead of being
    /// preempted by every answer it writes. Only for a gateway whose requests are all served on one thread,
    /// and only when that thread's class is the normal one.
    bool batch_when_busy = false;
    /// How long one forwarded request waits for its answer upstream: the upstream's progress notifications
    /// for it start the wait again (up to request_time_limit), and a legacy upstream's question is not
    /// counted while the downstream client answers it. A call waiting this long for a pool connection fails
    /// too.
    std::chrono::milliseconds request_timeout = std::chrono::seconds(60);
    /// The longest a forwarded request may take upstream, however much progress it reports.
    std::chrono::milliseconds request_time_limit = std::chrono::hours(1);
    /// The largest message an upstream may send (a stdio line, an HTTP body, an SSE line or event): a larger
    /// one fails the call with an error naming the upstream, and the connection it came on is replaced.
    std::size_t max_message_bytes = 16 * 1024 * 1024;
    /// A tools/call still running upstream after this long becomes a task for a downstream client that can
    /// follow one (the modern tasks extension, or 2025-11-25 with `params.task`): the gateway holds the
    /// upstream call, so the client may disconnect and come back for the result. Unset: only a call the
    /// upstream itself answers with a task (it offers tasks) becomes one downstream. Either way the gateway
    /// follows an upstream task to its end, polling and answering its questions through the downstream.
    std::optional<std::chrono::milliseconds> task_after;
    /// How long a call waits, parked, for a modern client to retry with its answer.
    std::chrono::seconds parked_ttl = std::chrono::minutes(10);
    /// How many calls may wait parked at once. One more drops the oldest: its upstream request is cancelled
    /// and the client's retry of it, should it come, replays the call with the answers it brings. (Refusing
    /// the new one instead would fail a fresh request for the sake of one whose client may be long gone.)
    std::size_t max_parked_calls = 256;
    /// How many legacy sessions of a legacy stdio upstream may have a child of their own at once; past it,
    /// `over_children` decides. The pool's children of such an upstream are bounded by it too, over every
    /// capability set together (an idle one of another set makes room).
    std::size_t max_session_children = 64;
    over_children when_over_children = over_children::share;
    /// One line per forwarded request (method, era in, era out, upstream, status, latency); default: stderr.
    std::function<void(std::string const&)> log;
};

/// Where an upstream's announcements go: the server attach(server&) serves, or an endpoint that merges
/// several upstreams (duet/gateway/merged_backend.hpp). Called on the upstream executor, one at a time.
class announcement_sink {
public:
    virtual ~announcement_sink() = default;
    virtual void list_changed(protocol::server_change what) = 0;
    virtual void resource_updated(std::string const& uri) = 0;
    /// The x-mcp-header bindings of the upstream tool `tool` (its inputSchema's), learned as its list is
    /// read.
    virtual void tool_headers(std::string const& tool, std::vector<protocol::param_header> headers) = 0;
};

class upstream_backend : public server::backend, public std::enable_shared_from_this<upstream_backend> {
public:
    /// Connects once to learn the upstream (its InitializeResult or DiscoverResult); that connection stays
    /// open to hear the upstream's announcements. Fails as the connection did.
    [[nodiscard]] static boost::asio::awaitable<client::result<std::shared_ptr<upstream_backend>>>
    async_create(gateway_options options);

    ~upstream_backend() override;

    /// Server options describing the upstream (its info and instructions); set the gateway's own knobs on
    /// top before constructing the server.
    [[nodiscard]] server::server_options describe() const;
    /// Serves `srv` from the upstream from now on: sets itself as srv's backend, learns the upstream tools'
    /// x-mcp-header bindings and relays the upstream's announcements to srv until detach() (call it before
    /// srv goes).
    void attach(server::server& srv);
    /// Relays the upstream's announcements to `sink` until detach(), without becoming a server's backend:
    /// for an owner that forwards to this backend itself (async_forward).
    void attach(std::shared_ptr<announcement_sink> sink);
    /// Stops announcing to the attached server or sink.
    void detach();
    /// Ends every upstream connection and parked call.
    [[nodiscard]] boost::asio::awaitable<void> async_close();

    /// Downstream requests being forwarded now: a backend a reload replaced closes once none is left.
    [[nodiscard]] std::size_t calls_in_flight() const noexcept;

    /// What the backend met since it was made, for metrics.
    struct stats {
        std::size_t calls_in_flight = 0;
        std::uint64_t reconnects = 0;    ///< its own connection ended (a stdio child that died) and came back
        std::uint64_t pool_waits = 0;    ///< calls that waited for a free upstream connection
        std::uint64_t pool_timeouts = 0; ///< of which found none within the upstream timeout
        std::uint64_t parked_rounds = 0; ///< modern input rounds whose upstream call was held for the retry
        /// Requests forwarded, by how they ended (an error: the upstream's, or reaching it failed).
        std::uint64_t forwarded_ok = 0, forwarded_error = 0, forwarded_cancelled = 0,
                      forwarded_input_required = 0;
    };
    /// Thread-safe.
    [[nodiscard]] stats counts() const noexcept;
    /// The executor the backend and its upstream connections live on (serial).
    [[nodiscard]] boost::asio::any_io_executor executor() const noexcept;
    /// The upstream's era and version, as found when connecting.
    [[nodiscard]] protocol::era era() const noexcept;
    [[nodiscard]] protocol::version version() const noexcept;

    // ---- server::backend ---------------------------------------------------------------------------------
    [[nodiscard]] std::optional<server::tool_task_policy> task_policy(std::string_view tool) const override;
    [[nodiscard]] protocol::server_capabilities capabilities() const override;
    [[nodiscard]] boost::asio::awaitable<server::answer_result>
    async_answer(protocol::method_id method, boost::json::object const& params,
                 server::request_context& ctx) override;
    void on_watch(std::string const& uri, bool watched) override;
    /// async_answer for an owner that keeps the session's data itself: `session` is what this backend's
    /// on_session returned for the request's legacy session (null: none). `params`, `ctx` and `session` must
    /// outlive the call.
    [[nodiscard]] boost::asio::awaitable<server::answer_result>
    async_forward(protocol::method_id method, boost::json::object const& params, server::request_context& ctx,
                  std::shared_ptr<void> const& session);
    [[nodiscard]] server::session_admission on_session(protocol::version version,
                                                       boost::json::object const& client_capabilities,
                                                       boost::json::object const& client_info) override;

    class impl;

private:
    explicit upstream_backend(std::shared_ptr<impl> p) : impl_(std::move(p)) {}
    std::shared_ptr<impl> impl_;
};

} // namespace duet::gateway
