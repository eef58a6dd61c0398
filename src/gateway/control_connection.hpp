// File: src/gateway/control_connection.hpp (private)
//
// The gateway's own connection to the upstream, beside the calls it forwards. It meets the upstream when the
// backend is created (and fills in the profile from what the upstream says of itself), brings the
// upstream's announcements (list changes, resource updates) to the attached server, makes the upstream watch
// the resources watched downstream, and, when it ends (a stdio child that died), connects again and re-makes
// what it carried: the announcements' listen and every watch.
//
// Every member is used on the upstream executor, except the attached sink, guarded by its own mutex
// (attach and detach come from elsewhere).
#pragma once

#include <duet/client/client.hpp>
#include <duet/gateway/upstream_backend.hpp>
#include <duet/server/server.hpp>

#include "gateway_log.hpp"
#include "upstream_profile.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace duet::gateway::detail {

class control_connection : public std::enable_shared_from_this<control_connection> {
public:
    control_connection(boost::asio::any_io_executor ex, std::shared_ptr<upstream_profile> profile,
                       std::shared_ptr<gateway_log> log);

    /// Meets the upstream in the mode the options ask for, and fills in the profile: era, version,
    /// capabilities, info, instructions. Fails as the connection did.
    [[nodiscard]] static boost::asio::awaitable<client::result<void>>
    async_meet(std::shared_ptr<control_connection> self);

    /// Announcements go to `sink` from now on (until detach()).
    void attach(std::shared_ptr<announcement_sink> sink);
    void detach();
    /// What attaching starts, on the upstream executor: the tools' header bindings, the announcements, and
    /// the control connection's supervision.
    [[nodiscard]] static boost::asio::awaitable<void> async_start(std::shared_ptr<control_connection> self);

    /// A resource gained its first downstream watcher or lost its last: remembered (a control connection
    /// started again re-establishes every watch), then made or dropped upstream.
    [[nodiscard]] static boost::asio::awaitable<void> async_watch(std::shared_ptr<control_connection> self,
                                                                  std::string uri, bool watched);

    /// What the upstream announced (on this connection, a listen, or a stdio child of the pool), for the
    /// attached server.
    void on_upstream_notification(std::string const& method, boost::json::object const& params);

    /// No restarts, announcements or watches from now on.
    void stop();
    /// Ends the connection itself (after stop()).
    [[nodiscard]] boost::asio::awaitable<void> async_close();

private:
    // Its options: it declares no capabilities (it never calls a tool) and hears every announcement, of a
    // stdio child and of an HTTP server alike. Once the upstream is known, it is reached in its era and
    // version again.
    [[nodiscard]] client::client_options options(client::connect_mode mode, bool known);

    // The x-mcp-header bindings of the upstream's tools, for the server's HTTP header admission.
    [[nodiscard]] static boost::asio::awaitable<void>
    async_learn_tools(std::shared_ptr<control_connection> self);
    [[nodiscard]] static boost::asio::awaitable<void>
    async_apply_watch(std::shared_ptr<control_connection> self, std::string uri, bool watched);
    void start_announcements();
    void start_listen(client::listen_filter filter, std::shared_ptr<client::cancellation> cancel);
    [[nodiscard]] static boost::asio::awaitable<void> async_listen(std::shared_ptr<control_connection> self,
                                                                   client::listen_filter filter,
                                                                   client::request_options options);
    [[nodiscard]] static boost::asio::awaitable<void> async_supervise(std::weak_ptr<control_connection> weak);
    [[nodiscard]] static boost::asio::awaitable<void>
    async_reconnect(std::shared_ptr<control_connection> self);

    boost::asio::any_io_executor ex_;
    std::shared_ptr<upstream_profile> profile_;
    std::shared_ptr<gateway_log> log_;
    std::shared_ptr<client::client> client_;
    std::mutex sink_mutex_;
    std::shared_ptr<announcement_sink> sink_;
    std::set<std::string> watched_; ///< resources watched downstream, hence upstream
    std::map<std::string, std::shared_ptr<client::cancellation>> listens_; ///< modern: one per watched URI
    std::shared_ptr<client::cancellation> announcements_ = std::make_shared<client::cancellation>();
    std::shared_ptr<client::cancellation> stopping_ = std::make_shared<client::cancellation>();
    bool closing_ = false;
};

} // namespace duet::gateway::detail
