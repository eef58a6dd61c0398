// One request, from its head to the coroutine that answers it: a probe's path first (probes.hpp), the guards
// (request_guards.hpp), the bearer token on a protected server (bearer_guard.hpp), the request gate for each
// JSON-RPC request (request_gate.hpp), then the route protocol decides from the body and the session named
// (protocol/http_routing.hpp), carried out by modern_responder or session_streams. Routing is plain functions
// returning that coroutine: a request makes one frame for its last step and none for the routing
// (bench/findings.md, "HTTP response head and session requests", item 2).
#pragma once

#include <duet/jsonrpc/message.hpp>

#include "bearer_guard.hpp"
#include "bounded_socket.hpp"
#include "modern_responses.hpp"
#include "request.hpp"
#include "request_guards.hpp"
#include "route_table.hpp"
#include "server_context.hpp"
#include "session_streams.hpp"

#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>

namespace duet::transport::http {

class request_router {
public:
    /// `bearer` is null on a server that checks no tokens.
    request_router(server_context& ctx, route_table const& routes, request_guards const& guards,
                   bearer_guard const* bearer)
        : ctx_(ctx), routes_(routes), guards_(guards), bearer_(bearer), modern_(ctx), sessions_(ctx) {}

    /// Returns (the coroutine that says) whether the connection may carry another request. `slot` is the
    /// socket's modern connection, `routes` its hold on the routes it looks requests up in.
    boost::asio::awaitable<bool> handle(bounded_socket& stream, request& req, bool keep_alive,
                                        modern_slot& slot, route_table::view& routes);

private:
    // After the guards (and the token, on a protected server): POST, or GET and DELETE.
    boost::asio::awaitable<bool> route(bounded_socket& stream, request& req, bool keep_alive,
                                       server::server& srv, modern_slot& slot);
    boost::asio::awaitable<bool> load_then_route(bounded_socket& stream, request& req, bool keep_alive,
                                                 server::server& srv, modern_slot& slot);
    boost::asio::awaitable<bool> route_known(bounded_socket& stream, request& req, bool keep_alive,
                                             server::server& srv, modern_slot& slot);
    // A token the verifier must fetch keys for or ask about first.
    boost::asio::awaitable<bool> verify_then_route(bounded_socket& stream, request& req, bool keep_alive,
                                                   server::server& srv, modern_slot& slot, std::string token);
    // The 403 for a protected server's request the caller's token lacks a tool's (prompt's, resource's)
    // scope for; nullopt when it holds them, or the server checks no tokens.
    [[nodiscard]] std::optional<reply> scope_refusal(bounded_socket const& stream, server::server const& srv,
                                                     jsonrpc::request const& r) const;
    // The refusal of a whole batch for one of its requests: a scope its caller lacks (scope_refusal), else
    // the request gate's (request_gate.hpp); nullopt when every request passes.
    [[nodiscard]] std::optional<reply> batch_refusal(bounded_socket& stream, server::server const& srv,
                                                     jsonrpc::batch const& b) const;
    // The 503 for a legacy request while a shared session store cannot be reached; nullopt otherwise.
    [[nodiscard]] std::optional<reply> store_away(std::optional<jsonrpc::request_id> const& id) const;
    boost::asio::awaitable<bool> post(bounded_socket& stream, request& req, bool keep_alive,
                                      server::server& srv, modern_slot& slot);
    boost::asio::awaitable<bool> post_request(bounded_socket& stream, request& req, bool keep_alive,
                                              jsonrpc::request r, session_streams::found found,
                                              server::server& srv, modern_slot& slot);
    boost::asio::awaitable<bool> post_batch(bounded_socket& stream, request& req, bool keep_alive,
                                            jsonrpc::batch b, session_streams::found found,
                                            server::server const& srv);
    boost::asio::awaitable<bool> session_request(bounded_socket& stream, request& req, bool keep_alive,
                                                 server::server& srv);

    server_context& ctx_;
    route_table const& routes_;
    request_guards const& guards_;
    bearer_guard const* bearer_;
    modern_responder modern_;
    session_streams sessions_;
};

} // namespace duet::transport::http
