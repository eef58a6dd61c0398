// The legacy session a connection holds once `initialize` opened it: what was negotiated, what the client
// declared, its logging threshold and resource subscriptions, and the methods the session answers itself.
// A modern request never reads or changes it (ERA-POLICY). Lives on its connection's strand.
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/protocol/capabilities.hpp>
#include <duet/protocol/method_table.hpp>
#include <duet/protocol/version.hpp>
#include <duet/server/server.hpp>
#include <duet/server/session_state.hpp>

#include "server_events.hpp"

#include <atomic>
#include <memory>
#include <optional>
#include <string_view>

namespace duet::server::detail {

class legacy_session {
public:
    /// The session an admitted `initialize` (its `params`) opens at the negotiated version `v`, keeping
    /// what the server's backend answered for it (backend::on_session).
    legacy_session(server& srv, protocol::version v, boost::json::object const& params,
                   std::shared_ptr<void> backend_data);
    /// The session another process opened, as a shared store keeps it.
    legacy_session(server& srv, session_state const& s, std::shared_ptr<void> backend_data);

    /// What a shared store keeps of it.
    [[nodiscard]] session_state state() const;
    /// What the session's own methods changed in another process (its log level, subscriptions, the
    /// initialized flag); the negotiated version and the client's declarations never change.
    void apply(session_state const& s);

    [[nodiscard]] protocol::version version() const noexcept { return version_; }
    /// Shared with every request of the session rather than copied into each.
    [[nodiscard]] std::shared_ptr<boost::json::object const> const& client_capabilities() const noexcept {
        return client_capabilities_;
    }
    [[nodiscard]] std::shared_ptr<boost::json::object const> const& client_info() const noexcept {
        return client_info_;
    }
    /// logging/setLevel's threshold, read by running handlers at send time (debug, i.e. every level, until
    /// set).
    [[nodiscard]] std::shared_ptr<std::atomic<int>> const& log_threshold() const noexcept {
        return threshold_;
    }
    /// What the server's backend keeps for this session (backend::on_session); released when it ends.
    [[nodiscard]] std::shared_ptr<void> const& backend_data() const noexcept { return backend_data_; }

    /// notifications/initialized came: server events reach the session from now on.
    void mark_initialized() noexcept { initialized_ = true; }
    [[nodiscard]] bool initialized() const noexcept { return initialized_; }

    /// The answer to a method the session answers itself (ping, logging/setLevel, resources/subscribe and
    /// unsubscribe); empty for any other method. `changed` is set when the answer changed the session.
    [[nodiscard]] std::optional<jsonrpc::message> answer_own_method(jsonrpc::request const& r,
                                                                    protocol::method_id m, bool& changed);

    /// The notification the session gets for `e`, if it wants one: a list change the server announces
    /// (`caps`), or an update of a resource it subscribed to.
    [[nodiscard]] std::optional<jsonrpc::notification>
    notification_for(server_event const& e, protocol::server_capabilities const& caps) const;

    /// Whether the client declared what a request to it of `method` needs (ping needs nothing).
    [[nodiscard]] bool client_can_answer(std::string_view method, boost::json::value const& params) const;

private:
    protocol::version version_;
    std::shared_ptr<boost::json::object const> client_capabilities_;
    std::shared_ptr<boost::json::object const> client_info_;
    bool initialized_ = false;
    std::shared_ptr<std::atomic<int>> threshold_ = std::make_shared<std::atomic<int>>(0);
    resource_watches subscriptions_;
    std::shared_ptr<void> backend_data_;
};

} // namespace duet::server::detail
