// The gateway's backend: downstream requests forwarded over upstream connections, and what the upstream
// asks and announces brought back (duet/gateway/upstream_backend.hpp).
#include <duet/gateway/translate.hpp>
#include <duet/gateway/upstream_backend.hpp>
#include <duet/protocol/envelope.hpp>
#include <duet/protocol/param_headers.hpp>
#include <duet/server/request_context.hpp>

#include "forwarded_call.hpp"
#include "support/busy_batching.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <variant>
#include <vector>

namespace duet::gateway {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using detail::call_step;
using detail::forwarded_call;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

/// The handler's state key naming the parked call of a modern request across its input rounds.
constexpr std::string_view parked_key = "duet.gateway/call";
/// How long a log line may wait for others to share its write to stderr.
constexpr auto log_flush_delay = std::chrono::milliseconds(20);
/// How often a waiting handler looks at its request's cancellation.
constexpr auto poll_interval = std::chrono::milliseconds(200);
/// The pool modern requests share.
constexpr std::string_view modern_pool_key = "modern";

void append_era(std::string& out, protocol::era e, protocol::version v) {
    out += e == protocol::era::modern ? "modern(" : "legacy(";
    out += protocol::to_string(v);
    out += ')';
}

std::string era_text(protocol::era e, protocol::version v) {
    std::string out;
    append_era(out, e, v);
    return out;
}

} // namespace

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

    // A log line nothing tied to a call (never one on a call's own HTTP stream: that call's on_log hears it).
    void route_log(client::log_event const& e) {
        if (auto c = log_owner.lock()) {
            c->relay_log(e);
            return;
        }
        std::erase_if(active, [](auto const& w) { return w.expired(); });
        if (active.size() == 1 || (session && !active.empty()))
            if (auto c = active.back().lock())
                c->relay_log(e);
    }
};

/// What one legacy downstream session keeps: for a legacy upstream (unless sessions share the pool), its own
/// upstream connection, opened with its capabilities when the session begins and closed when it ends; and
/// what the session's log lines say.
struct session_upstream {
    asio::any_io_executor ex;
    json::object capabilities;
    bool own_connection = false;
    std::shared_ptr<upstream_connection> connection;
    bool connecting = false;
    /// The session-end log line's "method eras upstream" part, and where it goes.
    std::string log_prefix;
    std::function<void(std::string const&)> log;
    std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();

    ~session_upstream();
};

/// The upstream connections modern requests (and sessions sharing the pool) are served on, kept open between
/// requests: up to gateway_options::pool_size of them, a call going to an idle one, else a new one while
/// fewer are open, else the least loaded one that may take it (the rule above). A call no connection may
/// take waits for one (stdio: each connection is a process) or gets a connection of its own, closed once
/// idle when more than pool_size are open (HTTP).
struct connection_pool {
    std::vector<std::shared_ptr<upstream_connection>> open;
    std::size_t connecting = 0;
    std::vector<std::shared_ptr<asio::steady_timer>> waiting;

    void wake_all() {
        auto timers = std::move(waiting);
        waiting.clear();
        for (auto& t : timers)
            t->cancel();
    }
};

/// What a handler hands to the upstream side to start a call.
struct call_spec {
    std::string handle; ///< the parked call a retry names (empty: none)
    protocol::method_id method{};
    json::object params;
    json::object capabilities;
    /// The downstream request's log threshold (none: it hears no log lines).
    std::optional<protocol::log_level> log_threshold;
    /// The downstream request carries a progressToken: only then is one minted upstream, so an upstream
    /// never sets up progress reporting that nobody hears.
    bool wants_progress = false;
    bool modern_downstream = false;
    std::shared_ptr<session_upstream> session;
};

class upstream_backend::impl : public std::enable_shared_from_this<impl> {
public:
    impl(asio::any_io_executor ex, gateway_options options)
        : ex_(std::move(ex)), options_(std::move(options)),
          name_((options_.name.empty() ? "" : options_.name + "=") + client::describe(options_.upstream)),
          tick_(ex_) {}

    ~impl() { flush_log(); }

    void log_line(std::string const& line) const {
        log_with([&](std::string& out) { out += line; });
    }

    /// Logs the line `write` appends to the string it is given. Bound for stderr, the line is written
    /// straight into the pending lines: a request's line then costs no string of its own.
    template<typename Write>
    void log_with(Write&& write) const {
        if (options_.log) {
            std::string line;
            write(line);
            options_.log(line);
            return;
        }
        // The lines of requests served meanwhile share one write to stderr, log_flush_delay after the first:
        // handlers log from the HTTP server's threads, and a hand-off to this executor per line costs a
        // reactor wake-up and a contended lock (bench/findings.md, "The gateway's per-call path").
        bool arm = false;
        {
            std::lock_guard lock(log_mutex_);
            write(log_pending_);
            log_pending_ += '\n';
            arm = !flush_armed_;
            flush_armed_ = true;
        }
        if (arm) {
            std::weak_ptr<impl const> weak = weak_from_this();
            asio::co_spawn(ex_, flush_later(std::move(weak)), asio::detached);
        }
    }

    static awaitable<void> flush_later(std::weak_ptr<impl const> weak) {
        asio::steady_timer wait(co_await asio::this_coro::executor, log_flush_delay);
        co_await wait.async_wait(tuple_awaitable);
        if (auto self = weak.lock())
            self->flush_log();
    }

    void flush_log() const {
        std::string lines;
        {
            std::lock_guard lock(log_mutex_);
            lines.swap(log_pending_);
            flush_armed_ = false;
        }
        if (!lines.empty()) {
            std::fwrite(lines.data(), 1, lines.size(), stderr);
            std::fflush(stderr);
        }
    }

    client::client_options connection_options(std::optional<json::object> capabilities,
                                              std::weak_ptr<upstream_connection> conn) {
        client::client_options o;
        o.mode = era_ == protocol::era::modern ? client::connect_mode::modern : client::connect_mode::legacy;
        o.version = version_;
        o.client_info = json::object{{"name", "duet-gateway"}, {"version", "0.1.0"}};
        o.capabilities = std::move(capabilities);
        o.request_timeout = options_.request_timeout;
        o.verdicts = nullptr;
        o.use_cache = false;
        o.on_warning = [](std::string const&) {
        }; // deprecations are the downstream client's business
        o.on_log = [conn](client::log_event const& e) {
            if (auto c = conn.lock())
                c->route_log(e);
        };
        // A stdio child is a server of its own: whatever it announces is news. HTTP sessions of one server
        // all hear the same announcement; the control connection relays it once.
        if (!std::holds_alternative<client::http_target>(options_.upstream)) {
            std::weak_ptr<impl> self = weak_from_this();
            o.on_notification = [self](std::string const& method, json::object const& params) {
                if (auto s = self.lock())
                    s->on_upstream_notification(method, params);
            };
        }
        return o;
    }

    void on_upstream_notification(std::string const& method, json::object const& params) {
        using kind = server::server_event::kind;
        bool tools_changed = false;
        {
            std::lock_guard lock(server_mutex_);
            if (!server_)
                return;
            if (method == "notifications/tools/list_changed") {
                server_->notify_list_changed(kind::tools_changed);
                tools_changed = true;
            } else if (method == "notifications/prompts/list_changed") {
                server_->notify_list_changed(kind::prompts_changed);
            } else if (method == "notifications/resources/list_changed") {
                server_->notify_list_changed(kind::resources_changed);
            } else if (method == "notifications/resources/updated") {
                if (auto const* uri = params.if_contains("uri"); uri && uri->is_string())
                    server_->notify_resource_updated(std::string(uri->get_string()));
            }
        }
        if (tools_changed) { // the new tools' x-mcp-header bindings
            auto self = shared_from_this();
            asio::co_spawn(ex_, learn_tools(std::move(self)), asio::detached);
        }
    }

    // The x-mcp-header bindings of the upstream's tools, for the server's HTTP header admission.
    static awaitable<void> learn_tools(std::shared_ptr<impl> self) {
        if (!self->caps_.tools || !self->control_)
            co_return;
        auto tools = co_await self->control_->async_list_tools();
        if (!tools)
            co_return;
        std::lock_guard lock(self->server_mutex_);
        if (!self->server_)
            co_return;
        for (auto const& t : *tools) {
            auto const* o = t.if_object();
            auto const* name = o ? o->if_contains("name") : nullptr;
            auto const* schema = o ? o->if_contains("inputSchema") : nullptr;
            if (!name || !name->is_string() || !schema || !schema->is_object())
                continue;
            auto headers = protocol::collect_param_headers(schema->get_object());
            if (headers)
                self->server_->set_param_headers(std::string(name->get_string()), std::move(*headers));
        }
    }

    // ---- connections -------------------------------------------------------------------------------------

    bool upstream_is_stdio() const { return !std::holds_alternative<client::http_target>(options_.upstream); }

    // Whether a pooled connection whose upstream session declares `capabilities` may carry several calls.
    bool may_share(std::optional<json::object> const& capabilities) const {
        if (era_ == protocol::era::modern)
            return true;
        if (capabilities && (capabilities->contains("elicitation") || capabilities->contains("sampling") ||
                             capabilities->contains("roots")))
            return false;
        return !(upstream_is_stdio() && caps_.logging);
    }

    static awaitable<client::result<std::shared_ptr<upstream_connection>>>
    connect(std::shared_ptr<impl> self, std::optional<json::object> capabilities, std::string key) {
        auto conn = std::make_shared<upstream_connection>();
        conn->session = key == "session";
        conn->shares = !conn->session && self->may_share(capabilities);
        conn->key = std::move(key);
        auto options = self->connection_options(std::move(capabilities), conn);
        auto target = self->options_.upstream;
        auto c = co_await client::client::async_connect(std::move(target), std::move(options));
        if (!c)
            co_return c.error();
        conn->client = *c;
        if (self->era_ == protocol::era::legacy && self->caps_.logging) {
            // Every line comes back; each downstream request's own threshold filters (ctx.log).
            json::object params{{"level", "debug"}};
            std::string method("logging/setLevel");
            [[maybe_unused]] auto set =
                co_await conn->client->async_request(std::move(method), std::move(params));
        }
        if (self->era_ == protocol::era::modern &&
            std::holds_alternative<client::http_target>(self->options_.upstream) && self->caps_.tools) {
            // Modern HTTP calls mirror x-mcp-header arguments into headers: the connection learns them.
            [[maybe_unused]] auto listed = co_await conn->client->async_list_tools();
        }
        co_return conn;
    }

    // Whether `c` may take one more call; `log_owner`: the call is to hear log lines nothing else tells
    // apart.
    static bool may_take(upstream_connection const& c, bool log_owner) {
        if (c.broken)
            return false;
        if (c.calls == 0)
            return true;
        return c.shares && !(log_owner && c.has_log_owner());
    }

    static awaitable<client::result<std::shared_ptr<upstream_connection>>>
    checkout(std::shared_ptr<impl> self, std::string key, std::optional<json::object> capabilities,
             std::shared_ptr<forwarded_call> log_owner) {
        auto& pool = self->pools_[key]; // map nodes stay put: the reference outlives the waits
        std::size_t const size = std::max<std::size_t>(1, self->options_.pool_size);
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
            if (room || (!best && !self->bounded_pool() && !coming)) {
                ++pool.connecting;
                auto c = co_await connect(self, capabilities, key);
                --pool.connecting;
                if (c) {
                    take(**c, log_owner);
                    pool.open.push_back(*c);
                }
                pool.wake_all(); // a new connection, or room for another attempt
                co_return c;
            }
            auto turn =
                std::make_shared<asio::steady_timer>(self->ex_, asio::steady_timer::time_point::max());
            pool.waiting.push_back(turn);
            co_await turn->async_wait(tuple_awaitable);
        }
    }

    static void take(upstream_connection& c, std::shared_ptr<forwarded_call> const& log_owner) {
        ++c.calls;
        if (log_owner)
            c.log_owner = log_owner;
    }

    void checkin(std::shared_ptr<upstream_connection> c) {
        auto& pool = pools_[c->key];
        --c->calls;
        if (c->calls == 0) {
            bool const extra = pool.open.size() > std::max<std::size_t>(1, options_.pool_size);
            if (c->broken || closing_ || extra) {
                std::erase(pool.open, c);
                asio::co_spawn(ex_, close_connection(std::move(c)), asio::detached);
            }
        } else if (c->broken) {
            std::erase(pool.open, c); // no new calls; closed when its last call ends
        }
        pool.wake_all();
    }

    // A stdio upstream's pool is bounded (each connection is a process); an HTTP upstream's opens more
    // connections when calls cannot share and keeps pool_size of them.
    bool bounded_pool() const { return upstream_is_stdio(); }

    static awaitable<void> close_connection(std::shared_ptr<upstream_connection> c) {
        if (c && c->client)
            co_await c->client->async_close();
    }

    static awaitable<client::result<std::shared_ptr<upstream_connection>>>
    session_connection(std::shared_ptr<impl> self, std::shared_ptr<session_upstream> s) {
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
        auto c = co_await connect(self, std::move(declared), std::move(key));
        s->connecting = false;
        if (c)
            s->connection = *c;
        co_return c;
    }

    // A legacy session's own upstream connection, opened as the session begins: the initialize log line.
    static awaitable<void> open_session(std::shared_ptr<impl> self, std::shared_ptr<session_upstream> s) {
        auto const started = std::chrono::steady_clock::now();
        auto c = co_await session_connection(self, s);
        auto const ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
        self->log_line("duet gateway: initialize " + s->log_prefix +
                       " status=" + (c ? std::string("ok") : "failed (" + c.error().to_string() + ")") + " " +
                       std::to_string(ms.count()) + "ms");
    }

    // ---- one forwarded call (on ex_) ---------------------------------------------------------------------

    static awaitable<client::input_answer> ask(std::weak_ptr<forwarded_call> weak, client::input_question q) {
        auto call = weak.lock();
        if (!call)
            co_return protocol::make_error(protocol::errc::internal_error, "the downstream request ended");
        auto a = co_await call->async_ask(std::move(q));
        co_return a;
    }

    // The connection a call goes out on when one is ready now (the common case), without waiting: the legacy
    // downstream session's own, else the pool's best (checkout's first look). Null: acquire() decides.
    std::shared_ptr<upstream_connection> ready_connection(call_spec const& spec,
                                                          std::shared_ptr<forwarded_call> const& call) {
        if (spec.session) {
            auto const& s = *spec.session;
            if (!s.connecting && s.connection && !s.connection->broken)
                return s.connection;
            return nullptr;
        }
        if (era_ != protocol::era::modern || closing_)
            return nullptr; // a legacy pool's key is the request's capabilities: acquire() builds it
        auto it = pools_.find(modern_pool_key);
        if (it == pools_.end())
            return nullptr;
        auto& pool = it->second;
        bool const owner = spec.log_threshold.has_value() && upstream_is_stdio();
        std::shared_ptr<upstream_connection> best;
        for (auto const& c : pool.open)
            if (may_take(*c, owner) && (!best || c->calls < best->calls))
                best = c;
        bool const room = pool.open.size() + pool.connecting < std::max<std::size_t>(1, options_.pool_size);
        if (!best || (best->calls != 0 && room))
            return nullptr;
        take(*best, owner ? call : nullptr);
        return best;
    }

    // The connection a call goes out on: the legacy downstream session's own, else one of the pool.
    static awaitable<client::result<std::shared_ptr<upstream_connection>>>
    acquire(std::shared_ptr<impl> self, std::shared_ptr<forwarded_call> call,
            std::shared_ptr<session_upstream> session, json::object capabilities, bool hears_logs) {
        if (session) {
            auto got = co_await session_connection(self, std::move(session));
            co_return got;
        }
        if (self->era_ == protocol::era::legacy) {
            // A legacy upstream session declares what the downstream request declared.
            auto key = capabilities.empty() ? std::string("{}") : json::serialize(capabilities);
            std::optional<json::object> declared = std::move(capabilities);
            std::shared_ptr<forwarded_call> no_owner;
            auto got = co_await checkout(self, std::move(key), std::move(declared), std::move(no_owner));
            co_return got;
        }
        // Over stdio, nothing ties a log line to its call: one call per connection hears them.
        auto owner = hears_logs && self->upstream_is_stdio() ? call : nullptr;
        std::string key(modern_pool_key);
        std::optional<json::object> none;
        auto got = co_await checkout(self, std::move(key), std::move(none), std::move(owner));
        co_return got;
    }

    static awaitable<void> run(std::shared_ptr<impl> self, std::shared_ptr<forwarded_call> call,
                               call_spec spec) {
        if (spec.session && !spec.session->own_connection)
            spec.session.reset(); // the session shares the pool
        bool const pooled = !spec.session;
        // A legacy HTTP upstream that forgot its session (404: it restarted, or expired the session) never
        // ran the call: it goes once more, on a session begun anew.
        std::optional<json::object> resend;
        if (self->era_ == protocol::era::legacy && !self->upstream_is_stdio())
            resend = spec.params;
        for (;;) {
            auto conn = self->ready_connection(spec, call);
            if (!conn) {
                auto session = spec.session;
                json::object capabilities;
                if (self->era_ == protocol::era::legacy && !session)
                    capabilities = spec.capabilities;
                auto got = co_await acquire(self, call, std::move(session), std::move(capabilities),
                                            spec.log_threshold.has_value());
                if (!got) {
                    call->finish(upstream_unavailable(self->name_, got.error().to_string()));
                    co_return;
                }
                conn = std::move(*got);
            }
            conn->active.push_back(call);

            client::request_options o;
            o.cancel = call->cancel();
            o.timeout = self->options_.request_timeout;
            // The call outlives its request (this frame holds it), so the callbacks the client calls during
            // the request may point at it; a question's answer is awaited beyond, so it holds it weakly.
            auto* const c = call.get();
            if (spec.wants_progress)
                o.on_progress = [c](client::progress_event const& e) {
                    c->relay_progress(e);
                };
            // A raw pointer fits std::function's small buffer (a weak_ptr would be allocated for every call);
            // the weak reference is taken when the upstream asks, while the call is alive.
            o.on_input = [c](client::input_question q) {
                std::weak_ptr<forwarded_call> weak = c->weak_from_this();
                return ask(std::move(weak), std::move(q));
            };
            // Lines on the call's own HTTP stream are its own, whoever else shares the connection.
            o.on_log = [c](client::log_event const& e) {
                c->relay_log(e);
            };
            if (self->era_ == protocol::era::modern) {
                // Moved: a modern call never goes round again (only a legacy one resends, below).
                o.client_capabilities = std::move(spec.capabilities);
                // The downstream's threshold, upstream: no lines it would drop, none at all when it hears
                // none.
                o.log_level = spec.log_threshold ? std::string(protocol::to_string(*spec.log_threshold)) : "";
            }
            std::string method(protocol::info(spec.method).name);
            auto r =
                co_await conn->client->async_request(std::move(method), std::move(spec.params), std::move(o));
            std::erase_if(conn->active, [&](auto const& w) { return w.expired() || w.lock() == call; });
            if (conn->log_owner.lock() == call)
                conn->log_owner.reset();

            if (!r && r.error().code == client::errc::session_expired && resend) {
                conn->broken = true; // its session is gone: the next call on this key begins another
                if (pooled)
                    self->checkin(std::move(conn));
                spec.params = std::move(*resend);
                resend.reset();
                continue;
            }
            server::serve_result outcome = protocol::internal_error();
            if (r) {
                server::served s;
                s.result = std::move(*r);
                s.hints = take_result_hints(s.result);
                outcome = std::move(s);
            } else if (r.error().code == client::errc::rpc_error && r.error().rpc) {
                outcome = *r.error().rpc;
            } else {
                if (r.error().code != client::errc::cancelled && r.error().code != client::errc::usage)
                    conn->broken = true; // gone, timed out or confused: never reused
                outcome = upstream_unavailable(self->name_, r.error().to_string());
            }
            if (pooled)
                self->checkin(std::move(conn));
            call->finish(std::move(outcome));
            co_return;
        }
    }

    // The call a handler serves: the parked one its retry names, or a new one started now.
    std::shared_ptr<forwarded_call> attach_call(call_spec spec) {
        if (!parked_.empty())
            sweep_parked();
        if (!spec.handle.empty())
            if (auto it = parked_.find(spec.handle); it != parked_.end() && !it->second->over())
                return it->second;
        // Parked once it asks a question (park()), not before: most calls never do.
        auto call = std::make_shared<forwarded_call>(ex_, spec.modern_downstream);
        auto self = shared_from_this();
        asio::co_spawn(ex_, run(std::move(self), call, std::move(spec)), asio::detached);
        return call;
    }

    void sweep_parked() {
        auto const now = std::chrono::steady_clock::now();
        std::erase_if(parked_, [&](auto& kv) {
            auto& c = kv.second;
            if (c->over())
                return true;
            if (now - c->parked_since() > options_.parked_ttl) {
                c->abandon();
                return true;
            }
            return false;
        });
    }

    // The handler waits for the call's next step; while it waits, the periodic wake-up lets it look at its
    // request's cancellation.
    void await_step(std::shared_ptr<forwarded_call> const& call, forwarded_call::step_handler h,
                    asio::any_io_executor h_ex) {
        call->wait(std::move(h), std::move(h_ex), waiting_);
        if (waiting_.empty() || ticking_)
            return;
        ticking_ = true;
        tick_.expires_after(poll_interval);
        tick_.async_wait([weak = weak_from_this()](boost::system::error_code) {
            auto self = weak.lock();
            if (!self)
                return;
            self->ticking_ = false;
            self->waiting_.poke_all(); // each waits again, and the next tick is armed then
        });
    }

    using step_signature = void(std::shared_ptr<forwarded_call>, call_step);

    // Starts the call a handler serves (or attaches to the parked one its retry names) and completes with its
    // first step: one crossing to this executor and one back for a plain call.
    template<typename Token>
    auto async_begin(call_spec spec, Token&& token) {
        return asio::async_initiate<Token, step_signature>(
            [self = shared_from_this()](auto handler, call_spec s) mutable {
                auto h_ex = asio::get_associated_executor(handler, self->ex_);
                auto ex = self->ex_;
                asio::post(ex, [self = std::move(self), s = std::move(s), h_ex = asio::any_io_executor(h_ex),
                                h = forwarded_call::step_handler(std::move(handler))]() mutable {
                    auto call = self->attach_call(std::move(s));
                    self->await_step(call, std::move(h), std::move(h_ex));
                });
            },
            token, std::move(spec));
    }

    // The call's next step, once there is one.
    template<typename Token>
    auto async_step(std::shared_ptr<forwarded_call> call, Token&& token) {
        return asio::async_initiate<Token, step_signature>(
            [self = shared_from_this()](auto handler, std::shared_ptr<forwarded_call> c) mutable {
                auto h_ex = asio::get_associated_executor(handler, self->ex_);
                auto ex = self->ex_;
                asio::post(ex, [self = std::move(self), c = std::move(c), h_ex = asio::any_io_executor(h_ex),
                                h = forwarded_call::step_handler(std::move(handler))]() mutable {
                    self->await_step(c, std::move(h), std::move(h_ex));
                });
            },
            token, std::move(call));
    }

    // A modern downstream request's call that asks a question is parked under its handle, for the retry that
    // brings the answer (and unparked by the sweep once its outcome is taken).
    static awaitable<std::string> park(std::shared_ptr<impl> self, std::shared_ptr<forwarded_call> call) {
        auto const& handle = call->handle();
        self->parked_.emplace(handle, call);
        co_return handle;
    }

    static awaitable<void> answer_call(std::shared_ptr<forwarded_call> call, std::string key,
                                       client::input_answer a) {
        call->answer(key, std::move(a));
        co_return;
    }

    static awaitable<void> end_call(std::shared_ptr<impl> self, std::shared_ptr<forwarded_call> call,
                                    bool abandon) {
        if (abandon)
            call->abandon();
        if (call->has_handle())
            self->parked_.erase(call->handle());
        co_return;
    }

    // ---- the control connection: discovery, announcements, watches ----------------------------------------

    // The control connection's options: it declares no capabilities (it never calls a tool) and hears every
    // announcement, of a stdio child and of an HTTP server alike. Once the upstream is known, it is reached
    // in its era and version again.
    client::client_options control_options(client::connect_mode mode, bool known) {
        client::client_options o;
        o.mode = mode;
        if (known)
            o.version = version_;
        o.client_info = json::object{{"name", "duet-gateway"}, {"version", "0.1.0"}};
        o.capabilities = json::object{};
        o.request_timeout = options_.request_timeout;
        o.verdicts = nullptr;
        o.use_cache = false;
        o.on_warning = [](std::string const&) {
        };
        std::weak_ptr<impl> weak = weak_from_this();
        o.on_notification = [weak](std::string const& method, json::object const& params) {
            if (auto s = weak.lock())
                s->on_upstream_notification(method, params);
        };
        return o;
    }

    // A resource gained its first downstream watcher or lost its last: remembered (a control connection
    // started again re-establishes every watch), then made or dropped upstream.
    static awaitable<void> watch(std::shared_ptr<impl> self, std::string uri, bool watched) {
        if (watched)
            self->watched_.insert(uri);
        else
            self->watched_.erase(uri);
        co_await apply_watch(self, uri, watched);
    }

    // Legacy upstream: resources/subscribe or resources/unsubscribe. Modern upstream: a listen of its own
    // for the resource, or its end.
    static awaitable<void> apply_watch(std::shared_ptr<impl> self, std::string uri, bool watched) {
        if (!self->control_)
            co_return;
        if (self->era_ == protocol::era::legacy) {
            json::object params{{"uri", uri}};
            std::string method(watched ? "resources/subscribe" : "resources/unsubscribe");
            auto control = self->control_;
            auto r = co_await control->async_request(std::move(method), std::move(params));
            if (!r)
                self->log_line(
                    "duet gateway: " + std::string(watched ? "subscribing to " : "unsubscribing from ") +
                    uri + " upstream failed: " + r.error().to_string());
            co_return;
        }
        if (auto it = self->listens_.find(uri); it != self->listens_.end()) {
            it->second->cancel();
            self->listens_.erase(it);
        }
        if (!watched)
            co_return;
        auto cancel = std::make_shared<client::cancellation>();
        self->listens_[uri] = cancel;
        client::listen_filter f;
        f.resource_subscriptions.push_back(uri);
        self->start_listen(std::move(f), std::move(cancel));
    }

    // Modern upstream: the listen that brings the list changes it advertises.
    void start_announcements() {
        if (era_ != protocol::era::modern ||
            !(caps_.tools_list_changed || caps_.prompts_list_changed || caps_.resources_list_changed))
            return;
        client::listen_filter f;
        f.tools_list_changed = caps_.tools_list_changed;
        f.prompts_list_changed = caps_.prompts_list_changed;
        f.resources_list_changed = caps_.resources_list_changed;
        start_listen(std::move(f), announcements_);
    }

    void start_listen(client::listen_filter filter, std::shared_ptr<client::cancellation> cancel) {
        client::request_options o;
        o.cancel = std::move(cancel);
        auto self = shared_from_this();
        asio::co_spawn(ex_, listen(std::move(self), std::move(filter), std::move(o)), asio::detached);
    }

    static awaitable<void> listen(std::shared_ptr<impl> self, client::listen_filter filter,
                                  client::request_options options) {
        std::weak_ptr<impl> weak = self;
        auto on_event = [weak](client::listen_event const& e) {
            if (e.what != client::listen_event::kind::notification)
                return;
            if (auto s = weak.lock())
                s->on_upstream_notification(e.method, e.params);
        };
        auto control = self->control_;
        self.reset(); // a listen must not keep the backend alive
        auto r = co_await control->async_listen(std::move(filter), std::move(on_event), std::move(options));
        (void)r;
    }

    // What attaching starts, on the upstream executor: the tools' header bindings, the announcements, and
    // the control connection's supervision.
    static awaitable<void> start(std::shared_ptr<impl> self) {
        asio::co_spawn(self->ex_, learn_tools(self), asio::detached);
        self->start_announcements();
        std::weak_ptr<impl> weak = self;
        asio::co_spawn(self->ex_, supervise(weak), asio::detached);
        co_return;
    }

    // Watches the control connection for as long as the backend serves: when it ends (a stdio child that
    // died), it is started again and what it carried is re-established.
    static awaitable<void> supervise(std::weak_ptr<impl> weak) {
        for (;;) {
            std::shared_ptr<client::client> control;
            std::shared_ptr<client::cancellation> stop;
            {
                auto self = weak.lock();
                if (!self || self->closing_ || !self->control_)
                    co_return;
                control = self->control_;
                stop = self->stopping_;
            }
            bool const ended = co_await control->async_wait_closed(stop);
            auto self = weak.lock();
            if (!ended || !self || self->closing_)
                co_return;
            self->log_line("duet gateway: the control connection to " + self->name_ +
                           " ended; connecting again");
            co_await reconnect_control(self);
        }
    }

    static awaitable<void> reconnect_control(std::shared_ptr<impl> self) {
        asio::steady_timer backoff(self->ex_);
        auto delay = std::chrono::milliseconds(100);
        for (;;) {
            if (self->closing_)
                co_return;
            auto target = self->options_.upstream;
            auto mode = self->era_ == protocol::era::modern ? client::connect_mode::modern
                                                            : client::connect_mode::legacy;
            auto options = self->control_options(mode, true);
            auto c = co_await client::client::async_connect(std::move(target), std::move(options));
            if (self->closing_) {
                if (c)
                    co_await (*c)->async_close();
                co_return;
            }
            if (c) {
                self->control_ = *c;
                break;
            }
            self->log_line("duet gateway: connecting again to " + self->name_ +
                           " failed: " + c.error().to_string());
            backoff.expires_after(delay);
            co_await backoff.async_wait(tuple_awaitable);
            delay = std::min(delay * 2, std::chrono::milliseconds(5000));
        }
        // The old connection's listens ended with it.
        for (auto& kv : self->listens_)
            kv.second->cancel();
        self->listens_.clear();
        self->announcements_ = std::make_shared<client::cancellation>();
        self->start_announcements();
        auto const uris = self->watched_;
        for (auto const& uri : uris) {
            std::string u = uri;
            co_await apply_watch(self, std::move(u), true);
        }
        asio::co_spawn(self->ex_, learn_tools(self), asio::detached);
        // What a server started again offers may differ from before: clients that listen re-read it.
        using kind = server::server_event::kind;
        std::lock_guard lock(self->server_mutex_);
        if (self->server_) {
            if (self->caps_.tools_list_changed)
                self->server_->notify_list_changed(kind::tools_changed);
            if (self->caps_.prompts_list_changed)
                self->server_->notify_list_changed(kind::prompts_changed);
            if (self->caps_.resources_list_changed)
                self->server_->notify_list_changed(kind::resources_changed);
        }
    }

    asio::any_io_executor ex_;
    gateway_options options_;
    std::string name_;
    std::shared_ptr<client::client> control_;
    protocol::era era_ = protocol::era::legacy;
    protocol::version version_ = protocol::latest_handshake_version;
    protocol::server_capabilities caps_;
    json::object server_info_;
    std::string instructions_;
    std::mutex server_mutex_;
    mutable std::mutex log_mutex_;
    mutable std::string log_pending_;  ///< stderr lines not written yet
    mutable bool flush_armed_ = false; ///< a flush_later waits
    server::server* server_ = nullptr;
    std::map<std::string, connection_pool, std::less<>> pools_;
    detail::waiting_calls waiting_; ///< the calls whose handlers wait for a step
    std::map<std::string, std::shared_ptr<forwarded_call>> parked_;
    asio::steady_timer tick_; ///< their periodic wake-up, armed while any waits
    bool ticking_ = false;
    std::set<std::string> watched_; ///< resources watched downstream, hence upstream
    std::map<std::string, std::shared_ptr<client::cancellation>> listens_; ///< modern: one per watched URI
    std::shared_ptr<client::cancellation> announcements_ = std::make_shared<client::cancellation>();
    std::shared_ptr<client::cancellation> stopping_ = std::make_shared<client::cancellation>();
    bool closing_ = false;
};

namespace {

awaitable<void> close_client(std::shared_ptr<upstream_connection> c) {
    if (c && c->client)
        co_await c->client->async_close();
}

} // namespace

session_upstream::~session_upstream() {
    // The session ended (DELETE, expiry, or the gateway draining): its own upstream connection with it.
    if (log) {
        auto const lasted =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began);
        log("duet gateway: session-end " + log_prefix + " status=ok after " + std::to_string(lasted.count()) +
            "ms");
    }
    if (connection)
        asio::co_spawn(ex, close_client(std::move(connection)), asio::detached);
}

// ---- upstream_backend ------------------------------------------------------------------------------------

awaitable<client::result<std::shared_ptr<upstream_backend>>>
upstream_backend::async_create(gateway_options options) {
    auto ex = co_await asio::this_coro::executor;
    auto self = std::make_shared<impl>(ex, std::move(options));
    auto o = self->control_options(self->options_.mode, false);
    auto target = self->options_.upstream;
    auto c = co_await client::client::async_connect(std::move(target), std::move(o));
    if (!c)
        co_return c.error();
    self->control_ = *c;
    self->era_ = (*c)->era();
    self->version_ = (*c)->version();
    self->caps_ = capabilities_from_json((*c)->server_capabilities());
    self->server_info_ = (*c)->server_info();
    self->instructions_ = (*c)->instructions();
    co_return std::shared_ptr<upstream_backend>(new upstream_backend(std::move(self)));
}

upstream_backend::~upstream_backend() {
    detach();
}

server::server_options upstream_backend::describe() const {
    server::server_options o;
    o.info = implementation_from_json(impl_->server_info_);
    o.instructions = impl_->instructions_;
    return o;
}

void upstream_backend::attach(server::server& srv) {
    srv.set_backend(shared_from_this());
    {
        std::lock_guard lock(impl_->server_mutex_);
        impl_->server_ = &srv;
    }
    asio::co_spawn(impl_->ex_, impl::start(impl_), asio::detached);
}

void upstream_backend::detach() {
    std::lock_guard lock(impl_->server_mutex_);
    impl_->server_ = nullptr;
}

namespace {

awaitable<void> close_all(std::shared_ptr<upstream_backend::impl> self);

} // namespace

awaitable<void> upstream_backend::async_close() {
    detach();
    auto closing = close_all(impl_);
    co_await asio::co_spawn(impl_->ex_, std::move(closing), asio::use_awaitable);
}

protocol::era upstream_backend::era() const noexcept {
    return impl_->era_;
}

protocol::version upstream_backend::version() const noexcept {
    return impl_->version_;
}

protocol::server_capabilities upstream_backend::capabilities() const {
    return impl_->caps_;
}

void upstream_backend::on_watch(std::string const& uri, bool watched) {
    asio::co_spawn(impl_->ex_, impl::watch(impl_, uri, watched), asio::detached);
}

std::shared_ptr<void> upstream_backend::on_session(protocol::version version,
                                                   json::object const& client_capabilities,
                                                   json::object const&) {
    auto s = std::make_shared<session_upstream>();
    s->ex = impl_->ex_;
    s->capabilities = client_capabilities;
    // A modern upstream keeps no sessions: the pool serves, with per-request capabilities.
    s->own_connection = impl_->era_ == protocol::era::legacy && !impl_->options_.share_sessions;
    s->log_prefix = era_text(protocol::era::legacy, version) + " -> " +
                    era_text(impl_->era_, impl_->version_) + " upstream=" + impl_->name_;
    std::weak_ptr<impl> weak = impl_;
    s->log = [weak](std::string const& line) {
        if (auto i = weak.lock())
            i->log_line(line);
    };
    if (s->own_connection) // the session's child starts now; its first request finds it ready
        asio::co_spawn(impl_->ex_, impl::open_session(impl_, s), asio::detached);
    else
        impl_->log_line("duet gateway: initialize " + s->log_prefix + " status=ok 0ms");
    return s;
}

namespace {

client::input_answer to_input_answer(server::peer_result const& r) {
    if (r) {
        if (r->is_object())
            return r->get_object();
        return protocol::make_error(protocol::errc::internal_error,
                                    "the downstream client's answer is not an object");
    }
    if (r.error().remote)
        return *r.error().remote;
    return protocol::make_error(protocol::errc::internal_error,
                                "the downstream client did not answer: " + r.error().to_string());
}

std::string status_of(server::serve_result const& r) {
    if (r)
        return "ok";
    return "error " + std::to_string(r.error().code);
}

awaitable<void> close_all(std::shared_ptr<upstream_backend::impl> self) {
    self->closing_ = true;
    self->tick_.cancel();
    self->stopping_->cancel();
    self->announcements_->cancel();
    for (auto& kv : self->listens_)
        kv.second->cancel();
    self->listens_.clear();
    for (auto& kv : self->parked_)
        kv.second->abandon();
    self->parked_.clear();
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
    for (auto& c : idle)
        co_await close_client(c);
    if (self->control_)
        co_await self->control_->async_close();
    self->flush_log();
}

} // namespace

awaitable<server::serve_result> upstream_backend::async_serve(protocol::method_id method,
                                                              json::object const& params,
                                                              server::request_context& ctx) {
    auto const started = std::chrono::steady_clock::now();
    auto self = impl_;
    auto log = [&](std::string const& status) {
        auto const ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
        // Written in place (log_with): this runs for every request.
        self->log_with([&](std::string& line) {
            line += "duet gateway: ";
            line += protocol::info(method).name;
            line += ' ';
            append_era(line, ctx.era(), ctx.version());
            line += " -> ";
            append_era(line, self->era_, self->version_);
            line += " upstream=";
            line += self->name_;
            line += " status=";
            line += status;
            line += ' ';
            char digits[24];
            auto const end = std::to_chars(digits, digits + sizeof digits, ms.count()).ptr;
            line.append(digits, end);
            line += "ms";
        });
    };

    std::optional<support::busy_batching_hold> busy;
    if (self->options_.batch_when_busy)
        busy.emplace(support::hold_busy_thread());
    auto up = upstream_params(method, params, self->options_.lenient_args);
    if (!up) {
        server::serve_result refused = up.error();
        log(status_of(refused));
        co_return refused;
    }
    call_spec spec;
    spec.method = method;
    spec.params = std::move(*up);
    spec.capabilities = ctx.client_capabilities();
    spec.log_threshold = ctx.log_threshold();
    spec.wants_progress = ctx.wants_progress();
    spec.modern_downstream = ctx.era() == protocol::era::modern;
    spec.session = std::static_pointer_cast<session_upstream>(ctx.session_data());
    if (auto const* h = ctx.state().if_contains(parked_key); h && h->is_string())
        spec.handle = std::string(h->get_string());

    // Named, then taken apart by reference: GCC 12 miscompiles a structured binding of a co_await result.
    auto current = co_await self->async_begin(std::move(spec), asio::use_awaitable);
    auto& call = std::get<0>(current);
    auto& step = std::get<1>(current);
    server::serve_result outcome = protocol::internal_error();
    std::exception_ptr failure;
    try {
        for (;;) {
            if (ctx.cancelled()) {
                auto ending = impl::end_call(self, call, true);
                co_await asio::co_spawn(self->ex_, std::move(ending), asio::use_awaitable);
                log("cancelled");
                co_return protocol::internal_error(); // a cancelled request's answer is dropped
            }
            if (step.what == call_step::kind::done) {
                outcome = std::move(*step.outcome);
                break;
            }
            switch (step.what) {
            case call_step::kind::progress:
                ctx.report_progress(step.progress().progress, step.progress().total, step.progress().message);
                break;
            case call_step::kind::log:
                if (auto level = protocol::parse_log_level(step.log().level))
                    ctx.log(*level, std::move(step.log().data), step.log().logger);
                break;
            case call_step::kind::questions: {
                if (call->parks()) { // the retry that brings the answers finds the call by this
                    auto parking = impl::park(self, call);
                    ctx.state()[parked_key] =
                        co_await asio::co_spawn(self->ex_, std::move(parking), asio::use_awaitable);
                }
                std::vector<std::string> keys;
                for (auto const& q : step.questions())
                    keys.push_back(q.key);
                auto answers = co_await ctx.async_inputs(std::move(step.questions()));
                for (std::size_t i = 0; i < keys.size() && i < answers.size(); ++i) {
                    auto a = to_input_answer(answers[i]);
                    auto answering = impl::answer_call(call, keys[i], std::move(a));
                    co_await asio::co_spawn(self->ex_, std::move(answering), asio::use_awaitable);
                }
                break;
            }
            default:
                break;
            }
            current = co_await self->async_step(call, asio::use_awaitable);
        }
    } catch (server::detail::input_required_signal const&) {
        log("input_required"); // the call stays parked for the retry
        throw;
    } catch (...) {
        failure = std::current_exception(); // a malformed answer, say: the call is over
    }
    if (failure) {
        auto ending = impl::end_call(self, call, true);
        co_await asio::co_spawn(self->ex_, std::move(ending), asio::use_awaitable);
        log("failed");
        std::rethrow_exception(failure);
    }
    // Done: the sweep unparks it, if it was parked.
    if (!outcome && method == protocol::method_id::resources_read)
        if (auto respelled = respell_not_found(outcome.error(), params, ctx.era()))
            outcome = std::move(*respelled);
    log(status_of(outcome));
    co_return outcome;
}

} // namespace duet::gateway
