// File: src/gateway/upstream_pool.hpp (private)
//
// The upstream connections forwarded calls go out on: the pools modern requests (and legacy sessions that
// share them) are served from, and the own connection of each legacy downstream session.
//
// Which calls may share one upstream connection, so that nothing the upstream sends about a call reaches
// another downstream request (bench/findings.md, "The gateway"). What identifies a call's traffic:
//  - answers: the JSON-RPC id (the client's pending map), on every transport;
//  - progress: the progressToken the client minted for the call;
//  - modern input rounds: inside the call's own result; a modern server sends no requests of its own;
//  - log lines and legacy server-to-client requests over HTTP: the POST stream that carried them (the
//    client hands them to that request's own handlers); on a legacy session's standalone GET stream, and
//    anywhere on stdio, nothing does.
// Hence the rule. A modern upstream's connection carries any number of calls; over stdio at most one of
// them asks for log lines (a modern request gets none unless it sets logLevel, which the gateway does only
// when the downstream request has a threshold), so every line on the connection is that call's. A legacy
// upstream's pooled connection carries several calls only when its upstream session declares none of
// elicitation, sampling and roots (a conforming server then asks nothing) and, over stdio, the upstream
// offers no logging (its lines are session-wide there); otherwise one call at a time, as before. A line that
// still cannot be tied to one call (a misbehaving upstream, a legacy GET stream) goes to the only call on the
// connection, and is dropped when there are several. A legacy downstream session's own connection serves
// that session alone: its session-wide lines go to its latest call.
//
// Every member is used on the upstream executor only.
#pragma once

#include <duet/client/client.hpp>

#include "forwarded_call.hpp"
#include "gateway_log.hpp"
#include "upstream_profile.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/object.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace duet::gateway::detail {

/// One upstream connection and the calls it carries now.
struct upstream_connection {
    std::shared_ptr<client::client> client;
    std::string key;
    /// May carry several calls at once (the rule above).
    bool shares = false;
    /// A legacy downstream session's own connection.
    bool session = false;
    std::size_t calls = 0; ///< pooled calls in flight on it
    std::vector<std::weak_ptr<forwarded_call>> active;
    /// The one call on a shared stdio connection that asked for log lines (expired: none).
    std::weak_ptr<forwarded_call> log_owner;
    bool broken = false;

    [[nodiscard]] bool has_log_owner() const { return !log_owner.expired(); }

    /// A log line nothing tied to a call (never one on a call's own HTTP stream: that call's on_log hears
    /// it).
    void route_log(client::log_event const& e);
};

/// What one legacy downstream session keeps: for a legacy upstream (unless sessions share the pool), its own
/// upstream connection, opened with its capabilities when the session begins and closed when it ends; and
/// what the session's log lines say.
struct session_upstream {
    boost::asio::any_io_executor ex;
    boost::json::object capabilities;
    bool own_connection = false;
    std::shared_ptr<upstream_connection> connection;
    bool connecting = false;
    /// The session-end log line's "method eras upstream" part, and where it goes.
    std::string log_prefix;
    std::function<void(std::string const&)> log;
    std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();
    /// The count of sessions with a child of their own, when this is one of them: given back at the end.
    std::shared_ptr<std::atomic<std::size_t>> children_counted;

    ~session_upstream();
};

/// The connections of one pool key (a legacy upstream's: the capabilities its sessions declare; a modern
/// upstream's: one for all).
struct connection_pool {
    std::vector<std::shared_ptr<upstream_connection>> open;
    std::size_t connecting = 0;
    std::vector<std::shared_ptr<boost::asio::steady_timer>> waiting;

    void wake_all();
};

/// The upstream connections modern requests (and sessions sharing the pool) are served on, kept open between
/// requests: up to gateway_options::pool_size of them per key, a call going to an idle one, else a new one
/// while fewer are open, else the least loaded one that may take it (the rule above). A call no connection
/// may take waits for one (stdio: each connection is a process), at most request_timeout, or gets a
/// connection of its own, closed once idle when more than pool_size are open (HTTP). A legacy stdio
/// upstream's children of all keys together are bounded by max_session_children. A legacy downstream
/// session's own connection is opened and reopened here too.
class upstream_pool : public std::enable_shared_from_this<upstream_pool> {
public:
    using connection_result = client::result<std::shared_ptr<upstream_connection>>;
    /// What a stdio child announces (each is a server of its own, so its announcements are news).
    using announce_fn = std::function<void(std::string const& method, boost::json::object const& params)>;

    upstream_pool(boost::asio::any_io_executor ex, std::shared_ptr<upstream_profile const> profile,
                  std::shared_ptr<gateway_log> log, announce_fn announce);

    /// The connection a call goes out on when one is ready now (the common case), without waiting: the legacy
    /// downstream session's own, else the modern pool's best (checkout's first look), taken for `call`.
    /// Null: async_acquire decides.
    [[nodiscard]] std::shared_ptr<upstream_connection>
    ready_connection(session_upstream const* session, bool hears_logs,
                     std::shared_ptr<forwarded_call> const& call);

    /// The connection a call goes out on: the legacy downstream session's own, else one of the pool.
    /// `capabilities`: what a legacy upstream session declares (the downstream request's).
    [[nodiscard]] static boost::asio::awaitable<connection_result>
    async_acquire(std::shared_ptr<upstream_pool> self, std::shared_ptr<forwarded_call> call,
                  std::shared_ptr<session_upstream> session, boost::json::object capabilities,
                  bool hears_logs);

    /// A pooled call ended on `c`: the connection takes others, or closes when broken or surplus.
    void checkin(std::shared_ptr<upstream_connection> c);

    /// A legacy session's own upstream connection, opened as the session begins: the initialize log line.
    [[nodiscard]] static boost::asio::awaitable<void> async_open_session(std::shared_ptr<upstream_pool> self,
                                                                         std::shared_ptr<session_upstream> s);

    /// No new connections from now on; the idle ones close now, the others as their last call ends.
    [[nodiscard]] static boost::asio::awaitable<void> async_close(std::shared_ptr<upstream_pool> self);

private:
    // Whether a pooled connection whose upstream session declares `capabilities` may carry several calls.
    [[nodiscard]] bool may_share(std::optional<boost::json::object> const& capabilities) const;
    // A stdio upstream's pool is bounded (each connection is a process); an HTTP upstream's opens more
    // connections when calls cannot share and keeps pool_size of them.
    [[nodiscard]] bool bounded() const { return profile_->stdio(); }
    [[nodiscard]] std::size_t size() const;
    // Whether a call of pool `key` may start one more child now (making room by closing an idle one of
    // another key when the upstream's children are at their bound).
    [[nodiscard]] bool room_for_child(std::string const& key);
    // Every waiting call looks again (a connection came free, or room for one).
    void wake_all();
    [[nodiscard]] client::client_options connection_options(std::optional<boost::json::object> capabilities,
                                                            std::weak_ptr<upstream_connection> conn) const;

    [[nodiscard]] static boost::asio::awaitable<connection_result>
    async_connect(std::shared_ptr<upstream_pool> self, std::optional<boost::json::object> capabilities,
                  std::string key);
    [[nodiscard]] static boost::asio::awaitable<connection_result>
    async_checkout(std::shared_ptr<upstream_pool> self, std::string key,
                   std::optional<boost::json::object> capabilities,
                   std::shared_ptr<forwarded_call> log_owner);
    [[nodiscard]] static boost::asio::awaitable<connection_result>
    async_session_connection(std::shared_ptr<upstream_pool> self, std::shared_ptr<session_upstream> s);

    boost::asio::any_io_executor ex_;
    std::shared_ptr<upstream_profile const> profile_;
    std::shared_ptr<gateway_log> log_;
    announce_fn announce_;
    std::map<std::string, connection_pool, std::less<>> pools_;
    /// Legacy sessions with a connection of their own, closed with the pool.
    std::vector<std::weak_ptr<session_upstream>> sessions_;
    bool closing_ = false;
};

} // namespace duet::gateway::detail
