// The upstream connections forwarded calls go out on (upstream_pool.hpp).
#include "upstream_pool.hpp"

#include <duet/jsonrpc/json_text.hpp>
#include <duet/protocol/method_table.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <utility>

namespace duet::gateway::detail {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
/// The pool modern requests share.
constexpr std::string_view modern_pool_key = "modern";

awaitable<void> close_connection(std::shared_ptr<upstream_connection> c) {
    if (c && c->client)
        co_await c->client->async_close();
}

// Whether `c` may take one more call; `log_owner`: the call is to hear log lines nothing else tells apart.
bool may_take(upstream_connection const& c, bool log_owner) {
    if (c.broken)
        return false;
    if (c.calls == 0)
        return true;
    return c.shares && !(log_owner && c.has_log_owner());
}

void take(upstream_connection& c, std::shared_ptr<forwarded_call> const& log_owner) {
    ++c.calls;
    if (log_owner)
        c.log_owner = log_owner;
}

} // namespace

void upstream_connection::route_log(client::log_event const& e) {
    if (auto c = log_owner.lock()) {
        c->relay_log(e);
        return;
    }
    std::erase_if(active, [](auto const& w) { return w.expired(); });
    if (active.size() == 1 || (session && !active.empty()))
        if (auto c = active.back().lock())
            c->relay_log(e);
}

session_upstream::~session_upstream() {
    // The session ended (DELETE, expiry, or the gateway draining): its own upstream connection with it.
    if (log) {
        auto const lasted =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began);
        log("session-end " + log_prefix + " status=ok after " + std::to_string(lasted.count()) + "ms");
    }
    if (connection)
        asio::co_spawn(ex, close_connection(std::move(connection)), asio::detached);
    if (children_counted)
        children_counted->fetch_sub(1);
}

void connection_pool::wake_all() {
    auto timers = std::move(waiting);
    waiting.clear();
    for (auto& t : timers)
        t->cancel();
}

upstream_pool::upstream_pool(asio::any_io_executor ex, std::shared_ptr<upstream_profile const> profile,
                             std::shared_ptr<gateway_log> log, announce_fn announce)
    : ex_(std::move(ex)), profile_(std::move(profile)), log_(std::move(log)), announce_(std::move(announce)) {
}

std::size_t upstream_pool::size() const {
    return std::max<std::size_t>(1, profile_->options.pool_size);
}

bool upstream_pool::may_share(std::optional<json::object> const& capabilities) const {
    if (profile_->era == protocol::era::modern)
        return true;
    if (capabilities && (capabilities->contains("elicitation") || capabilities->contains("sampling") ||
                         capabilities->contains("roots")))
        return false;
    return !(profile_->stdio() && profile_->caps.logging);
}

client::client_options upstream_pool::connection_options(std::optional<json::object> capabilities,
                                                         std::weak_ptr<upstream_connection> conn) const {
    auto o = profile_->client_options();
    o.mode = profile_->known_mode();
    o.version = profile_->version;
    o.capabilities = std::move(capabilities);
    o.on_log = [conn](client::log_event const& e) {
        if (auto c = conn.lock())
            c->route_log(e);
    };
    // A stdio child is a server of its own: whatever it announces is news. HTTP sessions of one server all
    // hear the same announcement; the control connection relays it once.
    if (profile_->stdio())
        o.on_notification = announce_;
    return o;
}

awaitable<upstream_pool::connection_result>
upstream_pool::async_connect(std::shared_ptr<upstream_pool> self, std::optional<json::object> capabilities,
                             std::string key) {
    auto conn = std::make_shared<upstream_connection>();
    conn->session = key == "session";
    conn->shares = !conn->session && self->may_share(capabilities);
    conn->key = std::move(key);
    auto options = self->connection_options(std::move(capabilities), conn);
    auto target = self->profile_->options.upstream;
    auto c = co_await client::client::async_connect(std::move(target), std::move(options));
    if (!c)
        co_return c.error();
    conn->client = *c;
    auto const& profile = *self->profile_;
    if (profile.era == protocol::era::legacy && profile.caps.logging) {
        // Every line comes back; each downstream request's own threshold filters (ctx.log).
        json::object params{{"level", "debug"}};
        std::string method(protocol::info(protocol::method_id::logging_set_level).name);
        [[maybe_unused]] auto set =
            co_await conn->client->async_request(std::move(method), std::move(params));
    }
    if (profile.era == protocol::era::modern && !profile.stdio() && profile.caps.tools) {
        // Modern HTTP calls mirror x-mcp-header arguments into headers: the connection learns them.
        [[maybe_unused]] auto listed = co_await conn->client->async_list_tools();
    }
    co_return conn;
}

awaitable<upstream_pool::connection_result>
upstream_pool::async_checkout(std::shared_ptr<upstream_pool> self, std::string key,
                              std::optional<json::object> capabilities,
                              std::shared_ptr<forwarded_call> log_owner) {
    auto& pool = self->pools_[key]; // map nodes stay put: the reference outlives the waits
    std::size_t const size = self->size();
    // A call waits for a connection as long as it would wait for its answer, no longer.
    auto const wait = self->profile_->options.request_timeout;
    auto const deadline = std::chrono::steady_clock::now() + wait;
    bool waited = false; // counted once however often it looks again
    for (;;) {
        if (self->closing_)
            co_return client::make_error(client::errc::closed, "the gateway is closing");
        std::shared_ptr<upstream_connection> best;
        for (auto const& c : pool.open)
            if (may_take(*c, log_owner != nullptr) && (!best || c->calls < best->calls))
                best = c;
        bool const room = pool.open.size() + pool.connecting < size;
        if (best && (best->calls == 0 || !room)) {
            take(*best, log_owner);
            co_return best;
        }
        // Beyond pool_size (HTTP) only for a call no connection, open or coming, could share with.
        bool const coming = pool.connecting > 0 && self->may_share(capabilities);
        bool const wants_one = room || (!best && !self->bounded() && !coming);
        // Else every connection it could have is busy: it waits for one.
        if (wants_one && self->room_for_child(key)) {
            ++pool.connecting;
            auto c = co_await async_connect(self, capabilities, key);
            --pool.connecting;
            if (c) {
                take(**c, log_owner);
                pool.open.push_back(*c);
            }
            self->wake_all(); // a new connection, or room for another attempt
            co_return c;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            self->profile_->counted.pool_timeouts.fetch_add(1, std::memory_order_relaxed);
            co_return client::make_error(client::errc::timeout,
                                         "no connection to the upstream was free for this call within " +
                                             std::to_string(wait.count()) + " ms (" +
                                             std::to_string(pool.open.size()) +
                                             " open for its capabilities, all busy)");
        }
        if (!waited)
            self->profile_->counted.pool_waits.fetch_add(1, std::memory_order_relaxed);
        waited = true;
        auto turn = std::make_shared<asio::steady_timer>(self->ex_, deadline);
        pool.waiting.push_back(turn);
        co_await turn->async_wait(tuple_awaitable);
    }
}

bool upstream_pool::room_for_child(std::string const& key) {
    // Only a legacy stdio upstream's pool has more than one key, and each key its own children: together
    // they are bounded, so that clients declaring ever new capabilities cannot start processes without end.
    if (!profile_->stdio() || profile_->era != protocol::era::legacy)
        return true;
    std::size_t children = 0;
    for (auto const& kv : pools_)
        children += kv.second.open.size() + kv.second.connecting;
    if (children < std::max<std::size_t>(1, profile_->options.max_session_children))
        return true;
    // At the bound: an idle child of another capability set makes room.
    for (auto& kv : pools_) {
        if (kv.first == key)
            continue;
        auto& open = kv.second.open;
        auto const idle = std::find_if(open.begin(), open.end(), [](auto const& c) { return c->calls == 0; });
        if (idle != open.end()) {
            auto c = std::move(*idle);
            open.erase(idle);
            asio::co_spawn(ex_, close_connection(std::move(c)), asio::detached);
            return true;
        }
    }
    return false;
}

void upstream_pool::wake_all() {
    for (auto& kv : pools_)
        kv.second.wake_all();
}

void upstream_pool::checkin(std::shared_ptr<upstream_connection> c) {
    auto& pool = pools_[c->key];
    --c->calls;
    if (c->calls == 0) {
        bool const extra = pool.open.size() > size();
        if (c->broken || closing_ || extra) {
            std::erase(pool.open, c);
            asio::co_spawn(ex_, close_connection(std::move(c)), asio::detached);
        }
    } else if (c->broken) {
        std::erase(pool.open, c); // no new calls; closed when its last call ends
    }
    wake_all(); // a call of another capability set may wait for a child to be free
}

awaitable<upstream_pool::connection_result>
upstream_pool::async_session_connection(std::shared_ptr<upstream_pool> self,
                                        std::shared_ptr<session_upstream> s) {
    asio::steady_timer wait(self->ex_);
    while (s->connecting) {
        wait.expires_after(std::chrono::milliseconds(10));
        co_await wait.async_wait(tuple_awaitable);
    }
    if (s->connection && !s->connection->broken)
        co_return s->connection;
    if (s->connection)
        asio::co_spawn(self->ex_, close_connection(std::move(s->connection)), asio::detached);
    s->connecting = true;
    std::optional<json::object> declared = s->capabilities;
    std::string key("session");
    auto c = co_await async_connect(self, std::move(declared), std::move(key));
    s->connecting = false;
    if (c) {
        s->connection = *c;
        std::erase_if(self->sessions_, [](auto const& w) { return w.expired(); });
        self->sessions_.push_back(s);
    }
    co_return c;
}

awaitable<void> upstream_pool::async_open_session(std::shared_ptr<upstream_pool> self,
                                                  std::shared_ptr<session_upstream> s) {
    auto const started = std::chrono::steady_clock::now();
    auto c = co_await async_session_connection(self, s);
    auto const ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    self->log_->line("initialize " + s->log_prefix +
                     " status=" + (c ? std::string("ok") : "failed (" + c.error().to_string() + ")") + " " +
                     std::to_string(ms.count()) + "ms");
}

std::shared_ptr<upstream_connection>
upstream_pool::ready_connection(session_upstream const* session, bool hears_logs,
                                std::shared_ptr<forwarded_call> const& call) {
    if (session) {
        if (!session->connecting && session->connection && !session->connection->broken)
            return session->connection;
        return nullptr;
    }
    if (profile_->era != protocol::era::modern || closing_)
        return nullptr; // a legacy pool's key is the request's capabilities: async_acquire builds it
    auto it = pools_.find(modern_pool_key);
    if (it == pools_.end())
        return nullptr;
    auto& pool = it->second;
    bool const owner = hears_logs && profile_->stdio();
    std::shared_ptr<upstream_connection> best;
    for (auto const& c : pool.open)
        if (may_take(*c, owner) && (!best || c->calls < best->calls))
            best = c;
    bool const room = pool.open.size() + pool.connecting < size();
    if (!best || (best->calls != 0 && room))
        return nullptr;
    take(*best, owner ? call : nullptr);
    return best;
}

awaitable<upstream_pool::connection_result>
upstream_pool::async_acquire(std::shared_ptr<upstream_pool> self, std::shared_ptr<forwarded_call> call,
                             std::shared_ptr<session_upstream> session, json::object capabilities,
                             bool hears_logs) {
    if (session) {
        auto got = co_await async_session_connection(self, std::move(session));
        co_return got;
    }
    if (self->profile_->era == protocol::era::legacy) {
        // A legacy upstream session declares what the downstream request declared.
        auto key = capabilities.empty() ? std::string("{}") : jsonrpc::to_json_text(capabilities);
        std::optional<json::object> declared = std::move(capabilities);
        std::shared_ptr<forwarded_call> no_owner;
        auto got = co_await async_checkout(self, std::move(key), std::move(declared), std::move(no_owner));
        co_return got;
    }
    // Over stdio, nothing ties a log line to its call: one call per connection hears them.
    auto owner = hears_logs && self->profile_->stdio() ? call : nullptr;
    std::string key(modern_pool_key);
    std::optional<json::object> none;
    auto got = co_await async_checkout(self, std::move(key), std::move(none), std::move(owner));
    co_return got;
}

awaitable<void> upstream_pool::async_close(std::shared_ptr<upstream_pool> self) {
    self->closing_ = true;
    std::vector<std::shared_ptr<upstream_connection>> idle;
    for (auto& kv : self->pools_) {
        std::erase_if(kv.second.open, [&](auto& c) {
            if (c->calls != 0)
                return false; // closed as its last call ends
            idle.push_back(c);
            return true;
        });
        kv.second.wake_all(); // they find the gateway closing
    }
    // Sessions' own connections too: a backend closes when the gateway stops, or when a reload removed or
    // replaced it, and then its sessions' children must not outlive it (the session may go on for hours).
    for (auto const& w : std::exchange(self->sessions_, {}))
        if (auto session = w.lock(); session && session->connection)
            idle.push_back(std::move(session->connection));
    for (auto& c : idle)
        co_await close_connection(c);
}

} // namespace duet::gateway::detail
