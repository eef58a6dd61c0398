// Legacy Streamable HTTP sessions on the wire: `initialize` opens one, its requests are answered on their
// POST (JSON when the answer comes first, else a resumable SSE stream whose events carry ids), GET delivers
// its standalone stream or resumes any of its streams from `Last-Event-ID`, DELETE ends it. What the session
// holds is in store/session_store.hpp and live_session.hpp; POSTs are in session_posts.cpp, GET and DELETE in
// session_streams.cpp.
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/protocol/admission.hpp>
#include <duet/protocol/http_routing.hpp>
#include <duet/store/event_log.hpp>
#include <duet/store/session_store.hpp>

#include "bounded_socket.hpp"
#include "live_session.hpp"
#include "peer_watch.hpp"
#include "request.hpp"
#include "server_context.hpp"
#include "stream_queue.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <memory>

namespace duet::transport::http {

// Plain functions return the coroutine that serves the request; see reply_writer::send().
class session_streams {
public:
    explicit session_streams(server_context& ctx) : ctx_(ctx) {}

    /// The session a request's Mcp-Session-Id names at the endpoint of `srv`, and what the lookup found; a
    /// session opened with another principal's token (live_session::principal) is unknown to `caller`.
    struct found {
        std::shared_ptr<store::session> session; ///< null unless `lookup` is live
        protocol::session_lookup lookup = protocol::session_lookup::none;
    };
    [[nodiscard]] found find(request const& req, server::server& srv,
                             protocol::caller_identity const* caller);

    /// With a shared store: whether the request names a session this process does not know yet, which
    /// load() asks the store for (a session another process opened).
    [[nodiscard]] bool worth_loading(request const& req) const;
    boost::asio::awaitable<void> load(request const& req);
    /// Returns once what was written to the store so far reached it (at once for a store of one process).
    boost::asio::awaitable<void> flush_store();
    /// Sends `out` once what the request changed of a shared session reached the store, so that the
    /// client's next request finds the change on any process.
    boost::asio::awaitable<bool> flush_then_send(bounded_socket& stream, request const& req, reply out,
                                                 bool keep_alive);

    /// A client's notification or answer for the session: to its connection, or with a shared store to the
    /// connection of every process serving the session (the one whose request it concerns acts on it).
    void to_session(store::session& session, jsonrpc::message m) const;

    // ---- POST (session_posts.cpp)

    /// `initialize`: a new session, kept when the handshake succeeds; its id goes out on the response.
    boost::asio::awaitable<bool> open_session(bounded_socket& stream, request const& req, bool keep_alive,
                                              server::admitted_request ad, protocol::http_facts facts,
                                              server::server& srv);
    /// A request of a live session, admitted by the session's version.
    boost::asio::awaitable<bool> serve(bounded_socket& stream, request const& req, bool keep_alive,
                                       std::shared_ptr<store::session> session, server::admitted_request ad,
                                       protocol::http_facts facts);
    /// A batch of a live session whose version allows batches: every request answered in one response.
    boost::asio::awaitable<bool> serve_batch(bounded_socket& stream, request const& req, bool keep_alive,
                                             jsonrpc::batch b, std::shared_ptr<store::session> session);

    // ---- GET and DELETE (session_streams.cpp)

    /// GET: the session's standalone stream from now on; with Last-Event-ID, the stream that event belongs
    /// to (standalone or a POST's) from after that event, taken over from a reader the server still thinks
    /// alive.
    boost::asio::awaitable<bool> stream_to(bounded_socket& stream, request const& req, bool keep_alive,
                                           std::shared_ptr<store::session> session);
    /// DELETE: ends the session.
    boost::asio::awaitable<bool> end_session(bounded_socket& stream, request const& req, bool keep_alive,
                                             std::shared_ptr<store::session> session);

private:
    // A session another process opened, found here first: a live half of its own, from the saved record.
    void adopt(store::session& s, server::server& srv, std::string_view path);
    // A session connection's options: with a shared store, its changes saved and its ids this process's.
    [[nodiscard]] server::connection_options session_connection_options(store::session& s) const;

    struct session_sink;
    boost::asio::awaitable<bool> follow(bounded_socket& stream, request const& req, bool keep_alive,
                                        std::shared_ptr<store::session> session,
                                        std::shared_ptr<session_sink> sink, bool polling,
                                        jsonrpc::request_id id);

    // How a relayed session stream ended.
    enum class relay_end : std::uint8_t {
        complete,    ///< its last event was written
        closed,      ///< the handler asked to end it (the client resumes it)
        superseded,  ///< a resumption took it over
        over,        ///< the session ended or the server drains (standalone stream)
        peer_gone,   ///< the client went away or a write failed
        fell_behind, ///< events it had not yet written left the replay buffer: ended, never a silent gap
    };
    boost::asio::awaitable<relay_end> relay(bounded_socket& stream, store::event_log& es, std::uint64_t token,
                                            std::uint64_t after, stream_queue& wake, peer_watch const& watch,
                                            store::session& session);
    boost::asio::awaitable<bool> finish_relay(bounded_socket& stream, store::session& session,
                                              store::event_log& es, std::uint64_t token, relay_end end);

    server_context& ctx_;
};

} // namespace duet::transport::http
