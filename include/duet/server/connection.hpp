/// @file duet/server/connection.hpp
///
/// One ordered, bidirectional message stream to one client: a stdio process, or anything framed like it. It
/// carries both eras at once: at most one legacy session (opened by `initialize`) and any number of modern
/// requests, interleaved (ERA-POLICY: a modern request never reads or changes the session). The connection
/// owns everything stateful for that stream: the legacy session, in-flight requests and their cancellation,
/// modern listen streams, and requests sent to the client. A transport either streams frames into it
/// (receive, finish: the connection admits each request in turn) or routes and admits one request at a time
/// itself (server::admit) and delivers the answer (async_answer, answer_now); HTTP does both for a legacy
/// session.
///
///     auto conn = connection::create(srv, io.get_executor(), [&](std::string line) { out.write(line); });
///     conn->receive(lines);                 // every inbound frame, in order
///     conn->finish([&] { io.stop(); });     // end of input: in-flight requests finish, listens end, then
///     done
///
/// @par Thread safety
/// receive(), receive_oversized(), finish(), cancel_requests() and on_server_event() may be called from any
/// thread; all state lives on the connection's strand. The writer is called from that strand only, one
/// message at a time, in order.
#pragma once

#include <duet/jsonrpc/codec.hpp>
#include <duet/server/admitted_request.hpp>
#include <duet/server/server.hpp>
#include <duet/server/session_state.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace duet::server {

struct connection_options {
    jsonrpc::parse_limits limits;
    /// How long a request to the client waits for its answer by default.
    std::chrono::milliseconds client_request_timeout = std::chrono::seconds(60);
    /// The executor given to create() already runs one handler at a time (a strand the caller owns): the
    /// connection keeps its state on it instead of a strand of its own, and async_answer() called from it
    /// answers the request there and then, with no hand-off. HTTP's one-request connections do this.
    bool executor_is_serial = false;
    /// Whether the connection hears server events (list changes, resource updates). Only a legacy session or
    /// a modern listen has any use for them; a connection that serves one other stateless request skips the
    /// registration.
    bool hears_server_events = true;
    /// Called on the connection's strand whenever its legacy session opened or changed (initialize,
    /// notifications/initialized, logging/setLevel, resources/subscribe and unsubscribe): a shared store
    /// keeps what other processes serving the session need.
    std::function<void(session_state const&)> on_session_change;
    /// Put before the ids of requests to the client ("PREFIX-1", ...; empty: plain numbers), so that the
    /// processes sharing a session never send two requests of one id, and each knows its answers.
    std::string client_request_id_prefix;
    /// The transport's name for the legacy session this connection carries (HTTP's Mcp-Session-Id): the
    /// `session` of its requests' log events. Empty: none (stdio).
    std::string session_id;

    // The kinds of connection a transport makes. The defaults above are the first: one client's stream of
    // frames (stdio), which carries a legacy session, modern requests and listens in one order.

    /// One legacy session whose requests arrive on many sockets (HTTP): a strand of its own, unless the
    /// io_context runs on one thread (`io_is_serial`); it hears server events for the session.
    [[nodiscard]] static connection_options legacy_session(std::string session_id, bool io_is_serial) {
        connection_options o;
        o.executor_is_serial = io_is_serial;
        o.session_id = std::move(session_id);
        return o;
    }
    /// Modern requests served one after another on the caller's strand (HTTP's per-socket slot, or one
    /// request with neither claim nor session): nothing kept from one request to the next, no server events.
    [[nodiscard]] static connection_options modern_requests() {
        connection_options o;
        o.executor_is_serial = true;
        o.hears_server_events = false;
        return o;
    }
    /// One modern subscriptions/listen on the caller's strand: it hears server events until it ends.
    [[nodiscard]] static connection_options modern_listen() {
        connection_options o;
        o.executor_is_serial = true;
        return o;
    }
};

class connection : public event_listener {
public:
    /// Delivers one serialized message (no trailing newline).
    using writer = std::function<void(std::string)>;

    /// The answer to one request the caller delivers itself, and the HTTP status that carries it.
    struct answer {
        std::optional<jsonrpc::message> message; ///< empty: nothing owed now (cancelled, or an open listen)
        unsigned http_status = 200;
    };

    [[nodiscard]] static std::shared_ptr<connection>
    create(server& srv, boost::asio::any_io_executor executor, writer write, connection_options options = {});
    ~connection() override;

    // ---- a stream of frames (stdio) ---------------------------------------------------------------------

    /// Inbound frames, in order, each ended by '\n' (the last may lack it): one frame, or the whole lines of
    /// a stdio read in one string (one hand-off to the strand, and one allocation per read rather than per
    /// line). Frames hold no '\n' of their own.
    void receive(std::string frames);
    /// One inbound message its transport already parsed (HTTP parses each body once): handled like a frame.
    void receive(jsonrpc::message message);
    /// A frame that exceeded the size bound and was discarded unread: answered -32600 with `id: null`.
    void receive_oversized();
    /// End of input: no more frames. In-flight requests finish, open listens end with their result, requests
    /// to the client fail with connection_closed; then `done` runs (once).
    void finish(std::function<void()> done);

    // ---- one request whose answer the caller delivers (HTTP: on the POST that carried it) ---------------

    /// Answers one request the transport admitted (server::admit(), with the session it routed the request
    /// to): carries out the verdict, refusal included. `http` holds the request's HTTP facts (null: none).
    /// Messages that belong to this request (progress, logs, a listen's notifications and its final result,
    /// legacy requests to the client) go to `out` (null: the connection's writer).
    [[nodiscard]] boost::asio::awaitable<answer> async_answer(admitted_request ad,
                                                              protocol::http_facts const* http, writer out);

    /// Answers one request as async_answer() does, without a coroutine when it can: the answer is returned
    /// there and then when it is ready without suspending (admission refused it, a listen opened, a handler
    /// that completed at once) and the request could be answered on the caller's thread: on a connection
    /// whose executor is the caller's (connection_options::executor_is_serial), called from that executor; on
    /// a connection with a strand of its own, called from a thread of its io_context while nothing runs on
    /// or waits for that strand. Otherwise nothing is returned and the request goes on in the connection (in
    /// order with its other work); `later` then receives its answer on the connection's executor. A legacy
    /// handler's request_context::close_sse_stream() calls `end_stream` (HTTP: ends the request's SSE
    /// response early so the client resumes it; null: the call does nothing).
    [[nodiscard]] std::optional<answer> answer_now(admitted_request ad, protocol::http_facts const* http,
                                                   writer out, std::function<void(answer)> later,
                                                   std::function<void()> end_stream = nullptr);

    /// Marks every running request cancelled and ends every listen silently (HTTP: the client went away).
    void cancel_requests();

    // ---- either ------------------------------------------------------------------------------------------

    void on_server_event(server_event const& e) override;

    /// The negotiated version once a legacy session is open on this connection.
    [[nodiscard]] std::optional<protocol::version> legacy_version() const;

    // ---- a legacy session shared by several processes (store/session_store.hpp)
    // ----------------------------

    /// Serves the session another process opened, as a shared store keeps it. Called right after create(),
    /// before anything else reaches the connection.
    void restore_session(session_state const& s);
    /// What another process changed of the session (log level, subscriptions, initialized).
    void refresh_session(session_state s);
    /// Whether server events reach the session through this connection: of the processes sharing it, one
    /// delivers them (the others mute theirs). Listens are not affected.
    void deliver_session_events(bool on);

    class impl;

private:
    explicit connection(std::shared_ptr<impl> p) : impl_(std::move(p)) {}
    std::shared_ptr<impl> impl_;
};

} // namespace duet::server
