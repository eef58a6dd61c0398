// The modern listens (subscriptions/listen) open on one connection: what each asked to hear, where its
// messages go, and its result when it ends. Lives on its connection's strand.
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/protocol/capabilities.hpp>
#include <duet/server/connection.hpp>
#include <duet/server/server.hpp>

#include "server_events.hpp"

#include <bitset>
#include <functional>
#include <map>
#include <memory>
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
    /// Task status (the tasks extension's `taskIds`): the tasks of `task_owner` it names are watched, each
    /// change handed to `task_changed` (from any thread; it brings the change back to deliver_task on the
    /// connection's strand). A request that names tasks without declaring the extension is refused (-32021).
    struct task_watch {
        std::string owner;
        bool declares_extension = false;
        std::function<void(jsonrpc::request_id const& listen, boost::json::object detailed)> changed;
    };
    [[nodiscard]] std::optional<jsonrpc::message> open(jsonrpc::request const& r,
                                                       protocol::server_capabilities const& caps,
                                                       connection::writer out, bool end_at_once,
                                                       task_watch const& tasks);

    /// Sends notifications/tasks for a watched task to listen `id`, if it is still open.
    void deliver_task(jsonrpc::request_id const& id, boost::json::object detailed);

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
        std::vector<std::shared_ptr<void>> task_watches; ///< the honoured taskIds, watched while it lasts
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
