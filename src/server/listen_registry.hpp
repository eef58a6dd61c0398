// The modern listens (subscriptions/listen) open on one connection: what each asked to hear, where its
// messages go, and its result when it ends. Lives on its connection's strand.
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/protocol/capabilities.hpp>
#include <duet/server/connection.hpp>
#include <duet/server/server.hpp>

#include "server_events.hpp"

#include <bitset>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace duet::server::detail {

class listen_registry {
public:
    /// `fallback` receives the messages of a listen without a stream of its own; it outlives the registry.
    listen_registry(server& srv, connection::writer const& fallback) : server_(srv), fallback_(fallback) {}

    [[nodiscard]] bool contains(jsonrpc::request_id const& id) const { return listens_.contains(id); }

    /// Opens the listen `r` asks for, within what the server offers (`caps`): its acknowledgement goes to
    /// `out`, and its result comes when it ends (at once when `end_at_once`: the connection is draining).
    /// The refusal of a malformed request; nothing otherwise (an open listen answers nothing now).
    [[nodiscard]] std::optional<jsonrpc::message> open(jsonrpc::request const& r,
                                                       protocol::server_capabilities const& caps,
                                                       connection::writer out, bool end_at_once);

    /// Ends one listen silently (its client cancelled it).
    void cancel(jsonrpc::request_id const& id) { listens_.erase(id); }
    /// Ends every listen silently (the client went away).
    void cancel_all() { listens_.clear(); }
    /// Ends every listen with its result (end of input).
    void end_all();

    /// Sends `e` to every listen that asked for it.
    void deliver(server_event const& e);

private:
    struct listen {
        connection::writer out; ///< where this listen's messages go (HTTP: its own SSE stream)
        /// The list changes it asked for and the server offers, by protocol::server_change.
        std::bitset<4> lists;
        std::vector<std::string> uris;
        resource_watches watches; ///< the honoured resourceSubscriptions, counted while the listen lasts
    };

    void end(jsonrpc::request_id const& id, connection::writer const& out);
    void send(jsonrpc::message const& m, connection::writer const& out) {
        (out ? out : fallback_)(jsonrpc::serialize(m));
    }

    server& server_;
    connection::writer const& fallback_;
    std::map<jsonrpc::request_id, listen> listens_;
};

} // namespace duet::server::detail
