// Requests answered on their own POST with nothing kept after them: modern ones (stateless, ERA-POLICY), a
// modern listen, and a request with neither claim nor session (admission answers it). JSON when nothing else
// comes first, SSE when the handler sends notifications before its response, and always for a listen. A
// client that closes the connection cancels a modern request (DIGEST §9), noticed at once (peer_watch.hpp),
// so a dead listen frees its slot promptly.
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/protocol/admission.hpp>
#include <duet/server/admitted_request.hpp>
#include <duet/server/connection.hpp>

#include "bounded_socket.hpp"
#include "request.hpp"
#include "server_context.hpp"
#include "stream_queue.hpp"

#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

namespace duet::transport::http {

/// The connection a socket's modern requests (not listens) are served on: made at the first, for the server
/// of its route, and kept while the socket lives. It carries nothing from one request to the next (no
/// session; a socket's requests come one after another), and one per request cost allocations
/// (bench/findings.md, HTTP per-request cost, session 9).
struct modern_slot {
    server::server* srv = nullptr;
    std::shared_ptr<server::connection> conn;
};

// Plain functions return the coroutine that serves the request; see reply_writer::send().
class modern_responder {
public:
    explicit modern_responder(server_context& ctx) : ctx_(ctx) {}

    /// A modern request, on the socket's modern connection.
    boost::asio::awaitable<bool> serve(bounded_socket& stream, request const& req, bool keep_alive,
                                       modern_slot& slot, server::admitted_request ad,
                                       protocol::http_facts facts, server::server& srv);
    /// A modern listen, on a connection of its own (it hears server events), within the bound on open ones.
    boost::asio::awaitable<bool> serve_listen(bounded_socket& stream, request const& req, bool keep_alive,
                                              server::admitted_request ad, protocol::http_facts facts,
                                              server::server& srv);
    /// A request with neither claim nor session, on a connection made for it.
    boost::asio::awaitable<bool> serve_sessionless(bounded_socket& stream, request const& req,
                                                   bool keep_alive, server::admitted_request ad,
                                                   protocol::http_facts facts, server::server& srv);

private:
    enum class kind : std::uint8_t { sessionless, modern, listen };

    boost::asio::awaitable<bool> respond(bounded_socket& stream, request const& req, bool keep_alive,
                                         std::shared_ptr<server::connection> conn,
                                         server::admitted_request ad, protocol::http_facts facts, kind k);
    struct answer_queue;
    boost::asio::awaitable<bool> follow(bounded_socket& stream, request const& req, bool keep_alive,
                                        std::shared_ptr<server::connection> conn,
                                        std::shared_ptr<stream_queue> queue,
                                        std::shared_ptr<server::connection::answer> outcome, std::string line,
                                        stream_queue::outcome got, bool modern);

    server_context& ctx_;
    std::atomic<std::size_t> open_listens_{0};
};

} // namespace duet::transport::http
