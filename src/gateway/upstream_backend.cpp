// The gateway's backend: downstream requests forwarded over upstream connections, and what the upstream
// asks and announces brought back (duet/gateway/upstream_backend.hpp). Here: a downstream request's handler
// and the upstream side of its call. The parts it stands on have files of their own: the upstream pool
// (upstream_pool.hpp, with the rule for which calls share a connection), the control connection
// (control_connection.hpp), the calls parked between input rounds (parked_calls.hpp), one forwarded call
// between its two sides (forwarded_call.hpp), and the log (gateway_log.hpp).
#include <duet/gateway/translate.hpp>
#include <duet/gateway/upstream_backend.hpp>
#include <duet/log/log.hpp>
#include <duet/protocol/tasks.hpp>
#include <duet/server/request_context.hpp>

#include "control_connection.hpp"
#include "forwarded_call.hpp"
#include "gateway_log.hpp"
#include "parked_calls.hpp"
#include "support/busy_batching.hpp"
#include "support/span_id.hpp"
#include "upstream_pool.hpp"
#include "upstream_profile.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <charconv>
#include <chrono>
#include <exception>
#include <optional>
#include <tuple>
#include <vector>

namespace duet::gateway {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using detail::call_step;
using detail::control_connection;
using detail::forwarded_call;
using detail::session_upstream;
using detail::upstream_pool;

namespace {

/// The handler's state key naming the parked call of a modern request across its input rounds.
constexpr std::string_view parked_key = "duet.gateway/call";
/// How often a waiting handler looks at its request's cancellation.
constexpr auto poll_interval = std::chrono::milliseconds(200);

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

std::string status_of(server::answer_result const& r) {
    if (r)
        return "ok";
    return "error " + std::to_string(r.error().code);
}

} // namespace

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
    /// The downstream request's trace, with the gateway's hop as its parent (none: it carried none).
    std::optional<protocol::trace_context> trace;
    bool modern_downstream = false;
    std::shared_ptr<session_upstream> session;
};

class upstream_backend::impl : public std::enable_shared_from_this<impl> {
public:
    impl(asio::any_io_executor ex, std::shared_ptr<detail::upstream_profile const> profile,
         std::shared_ptr<detail::gateway_log> log, std::shared_ptr<control_connection> control)
        : ex_(std::move(ex)), profile_(std::move(profile)), log_(std::move(log)),
          control_(std::move(control)),
          pool_(std::make_shared<upstream_pool>(ex_, profile_, log_, announcer(control_))),
          parked_(profile_->options.parked_ttl, profile_->options.max_parked_calls, parked_drop_logger(log_),
                  &profile_->counted.parked_rounds),
          tick_(ex_) {}

    // The line a parked call dropped to make room leaves in the log.
    static std::function<void(std::size_t)>
    parked_drop_logger(std::shared_ptr<detail::gateway_log> const& log) {
        std::weak_ptr<detail::gateway_log> weak = log;
        return [weak](std::size_t cap) {
            if (auto l = weak.lock())
                l->line(std::to_string(cap) +
                        " calls wait parked for their clients' retries (the most allowed): the oldest was "
                        "dropped; its retry, should it come, replays it");
        };
    }

    ~impl() { log_->flush(); }

    // ---- tasks
    // ---------------------------------------------------------------------------------------------

    // A listed tool's task support: an upstream tool that requires a task is asked as one (2025-11-25);
    // where downstream clients may get tasks, a 2025-11-25 client is told it may ask (modern ones are not
    // told: the extension has no per-tool flag).
    void learn_tools(json::object& list) {
        auto* tools = list.if_contains("tools");
        if (!tools || !tools->is_array())
            return;
        profile_->learn_task_support(tools->get_array());
        if (!profile_->caps.tasks)
            return;
        for (auto& t : tools->get_array())
            if (auto* tool = t.if_object())
                (*tool)["execution"] = json::object{{"taskSupport", "optional"}};
    }

    bool upstream_task_wanted(json::object const& params, bool downstream_follows) const {
        if (profile_->era != protocol::era::legacy || profile_->version != protocol::version::v2025_11_25)
            return false;
        auto const* name = params.if_contains("name");
        if (!name || !name->is_string())
            return false;
        auto const required = profile_->task_support_of(name->get_string());
        return required && (*required || downstream_follows);
    }

    bool upstream_requires_task(std::string_view tool) const {
        return profile_->task_support_of(tool).value_or(false);
    }

    // What a stdio child of the pool announces goes where the control connection's announcements go.
    static upstream_pool::announce_fn announcer(std::shared_ptr<control_connection> const& control) {
        std::weak_ptr<control_connection> weak = control;
        return [weak](std::string const& method, json::object const& params) {
            if (auto c = weak.lock())
                c->on_upstream_notification(method, params);
        };
    }

    // ---- one forwarded call, upstream (on ex_) -----------------------------------------------------------

    static awaitable<client::input_answer> ask(std::weak_ptr<forwarded_call> weak, client::input_question q) {
        auto call = weak.lock();
        if (!call)
            co_return protocol::make_error(protocol::errc::internal_error, "the downstream request ended");
        auto a = co_await call->async_ask(std::move(q));
        co_return a;
    }

    static awaitable<void> run(std::shared_ptr<impl> self, std::shared_ptr<forwarded_call> call,
                               call_spec spec) {
        auto const& profile = *self->profile_;
        if (spec.session && !spec.session->own_connection)
            spec.session.reset(); // the session shares the pool
        bool const pooled = !spec.session;
        // A legacy HTTP upstream that forgot its session (404: it restarted, or expired the session) never
        // ran the call: it goes once more, on a session begun anew.
        std::optional<json::object> resend;
        if (profile.era == protocol::era::legacy && !profile.stdio())
            resend = spec.params;
        for (;;) {
            auto conn =
                self->pool_->ready_connection(spec.session.get(), spec.log_threshold.has_value(), call);
            if (!conn) {
                auto session = spec.session;
                json::object capabilities;
                if (profile.era == protocol::era::legacy && !session)
                    capabilities = spec.capabilities;
                auto got = co_await upstream_pool::async_acquire(self->pool_, call, std::move(session),
                                                                 std::move(capabilities),
                                                                 spec.log_threshold.has_value());
                if (!got) {
                    call->finish(upstream_unavailable(profile.name, got.error().to_string()));
                    co_return;
                }
                conn = std::move(*got);
            }
            conn->active.push_back(call);

            // The call outlives its request (this frame holds it), so the callbacks the client calls during
            // the request may point at it; a question's answer is awaited beyond, so it holds it weakly.
            auto* const c = call.get();
            auto const options_for = [&] {
                client::request_options o;
                o.cancel = call->cancel();
                o.timeout = profile.options.request_timeout;
                o.trace = spec.trace;
                if (spec.wants_progress)
                    o.on_progress = [c](client::progress_event const& e) {
                        c->relay_progress(e);
                    };
                // Two raw pointers fit std::function's small buffer (a weak_ptr would be allocated for every
                // call); the weak reference is taken when the upstream asks, while the call is alive. The
                // client asks only while the request is in flight, so this frame holds the parked calls too.
                o.on_input = [c, parked = &self->parked_](client::input_question q) {
                    // A modern downstream request's call is parked as it asks, here on this executor, so that
                    // its handler needs no crossing of its own to park it before ending the round.
                    if (c->parks())
                        parked->park(c->shared_from_this());
                    std::weak_ptr<forwarded_call> weak = c->weak_from_this();
                    return ask(std::move(weak), std::move(q));
                };
                // Lines on the call's own HTTP stream are its own, whoever else shares the connection.
                o.on_log = [c](client::log_event const& e) {
                    c->relay_log(e);
                };
                if (profile.era == protocol::era::modern) {
                    o.client_capabilities = spec.capabilities;
                    if (spec.method == protocol::method_id::tools_call && profile.upstream_tasks) {
                        // The gateway follows an upstream task itself, whatever its own client can follow.
                        auto& ext = (*o.client_capabilities)["extensions"];
                        if (!ext.is_object())
                            ext = json::object{};
                        ext.get_object()[protocol::tasks_extension] = json::object{};
                    }
                    // The downstream's threshold, upstream: no lines it would drop, none at all when it
                    // hears none.
                    o.log_level =
                        spec.log_threshold ? std::string(protocol::to_string(*spec.log_threshold)) : "";
                }
                return o;
            };
            std::string method(protocol::info(spec.method).name);
            auto o = options_for();
            auto r =
                co_await conn->client->async_request(std::move(method), std::move(spec.params), std::move(o));
            if (auto task = r && spec.method == protocol::method_id::tools_call ? client::task_in(*r)
                                                                                : std::nullopt) {
                // The upstream made a task: the downstream request becomes one (where its client can follow
                // it), and the gateway follows the upstream's to its end.
                c->relay_task({});
                auto follow = options_for();
                // The upstream task's status message becomes the gateway task's.
                follow.on_task = [c, last = std::string()](client::task_info const& t) mutable {
                    if (t.status_message.empty() || t.status_message == last)
                        return;
                    last = t.status_message;
                    c->relay_task(t.status_message);
                };
                r = co_await conn->client->async_task_result(task->id, std::move(follow));
            }
            std::erase_if(conn->active, [&](auto const& w) { return w.expired() || w.lock() == call; });
            if (conn->log_owner.lock() == call)
                conn->log_owner.reset();

            if (!r && r.error().code == client::errc::session_expired && resend) {
                conn->broken = true; // its session is gone: the next call on this key begins another
                if (pooled)
                    self->pool_->checkin(std::move(conn));
                spec.params = std::move(*resend);
                resend.reset();
                continue;
            }
            server::answer_result outcome = protocol::internal_error();
            if (r) {
                server::method_answer s;
                s.result = std::move(*r);
                s.hints = take_result_hints(s.result);
                outcome = std::move(s);
            } else if (r.error().code == client::errc::rpc_error && r.error().rpc) {
                outcome = *r.error().rpc;
            } else if (r.error().code == client::errc::too_large) {
                conn->broken = true; // left unread: replaced, never reused
                auto said = "Internal error: the upstream server " + profile.name +
                            " sent a message over the gateway's limit of " +
                            std::to_string(profile.options.max_message_bytes) +
                            " bytes; its connection was dropped and will be replaced";
                outcome = protocol::make_error(protocol::errc::internal_error, std::move(said));
            } else {
                if (r.error().code != client::errc::cancelled && r.error().code != client::errc::usage)
                    conn->broken = true; // gone, timed out or confused: never reused
                outcome = upstream_unavailable(profile.name, r.error().to_string());
            }
            if (pooled)
                self->pool_->checkin(std::move(conn));
            call->finish(std::move(outcome));
            co_return;
        }
    }

    // ---- the handler's side: what it hands to ex_ and gets back -------------------------------------------

    // The call a handler serves: the parked one its retry names, or a new one started now.
    std::shared_ptr<forwarded_call> attach_call(call_spec spec) {
        parked_.sweep();
        if (!spec.handle.empty())
            if (auto parked = parked_.find(spec.handle))
                return parked;
        // Parked once it asks a question (run's on_input), not before: most calls never do.
        auto call = std::make_shared<forwarded_call>(ex_, spec.modern_downstream);
        auto self = shared_from_this();
        asio::co_spawn(ex_, run(std::move(self), call, std::move(spec)), asio::detached);
        return call;
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

    /// The downstream client's answers to a call's questions, by question key.
    using answers = std::vector<std::pair<std::string, client::input_answer>>;

    // Hands the call the downstream client's answers and completes with its next step: one crossing to this
    // executor and one back for the whole round, as for any step.
    template<typename Token>
    auto async_answer(std::shared_ptr<forwarded_call> call, answers given, Token&& token) {
        return asio::async_initiate<Token, step_signature>(
            [self = shared_from_this()](auto handler, std::shared_ptr<forwarded_call> c, answers a) mutable {
                auto h_ex = asio::get_associated_executor(handler, self->ex_);
                auto ex = self->ex_;
                asio::post(ex, [self = std::move(self), c = std::move(c), a = std::move(a),
                                h_ex = asio::any_io_executor(h_ex),
                                h = forwarded_call::step_handler(std::move(handler))]() mutable {
                    for (auto& answer : a)
                        c->answer(answer.first, std::move(answer.second));
                    self->await_step(c, std::move(h), std::move(h_ex));
                });
            },
            token, std::move(call), std::move(given));
    }

    static awaitable<void> end_call(std::shared_ptr<impl> self, std::shared_ptr<forwarded_call> call,
                                    bool abandon) {
        if (abandon)
            call->abandon();
        self->parked_.unpark(*call);
        co_return;
    }

    static awaitable<void> close_all(std::shared_ptr<impl> self) {
        self->control_->stop();
        self->tick_.cancel();
        self->parked_.abandon_all();
        co_await upstream_pool::async_close(self->pool_);
        co_await self->control_->async_close();
        self->log_->flush();
    }

    asio::any_io_executor ex_;
    std::shared_ptr<detail::upstream_profile const> profile_;
    std::shared_ptr<detail::gateway_log> log_;
    std::shared_ptr<control_connection> control_;
    std::shared_ptr<upstream_pool> pool_;
    detail::parked_calls parked_;
    detail::waiting_calls waiting_; ///< the calls whose handlers wait for a step
    asio::steady_timer tick_;       ///< their periodic wake-up, armed while any waits
    bool ticking_ = false;
    /// Legacy sessions with a stdio child of their own now (gateway_options::max_session_children).
    std::shared_ptr<std::atomic<std::size_t>> session_children_ =
        std::make_shared<std::atomic<std::size_t>>(0);
    /// Downstream requests forwarded now (calls_in_flight()).
    std::atomic<std::size_t> in_flight_{0};
};

namespace {

// Counts a forwarded request for as long as it runs, however it ends.
struct in_flight_count {
    explicit in_flight_count(std::atomic<std::size_t>& n) noexcept : n_(n) {
        n_.fetch_add(1, std::memory_order_relaxed);
    }
    ~in_flight_count() { n_.fetch_sub(1, std::memory_order_relaxed); }
    in_flight_count(in_flight_count const&) = delete;
    in_flight_count& operator=(in_flight_count const&) = delete;

private:
    std::atomic<std::size_t>& n_;
};

} // namespace

// ---- upstream_backend ------------------------------------------------------------------------------------

awaitable<client::result<std::shared_ptr<upstream_backend>>>
upstream_backend::async_create(gateway_options options) {
    auto ex = co_await asio::this_coro::executor;
    auto profile = std::make_shared<detail::upstream_profile>(std::move(options));
    auto log = std::make_shared<detail::gateway_log>(ex, profile->options.log);
    {
        // Every stdio child's stderr, into the log: named, so that several upstreams' lines can be told
        // apart, and bounded by the client (a long line cut, a flood thinned).
        std::weak_ptr<detail::gateway_log> weak = log;
        profile->on_stderr = [weak,
                              prefix = "upstream=" + profile->name + " stderr: "](std::string_view line) {
            if (auto l = weak.lock())
                l->line(prefix + std::string(line));
        };
    }
    auto control = std::make_shared<control_connection>(ex, profile, log);
    auto met = co_await control_connection::async_meet(control);
    if (!met)
        co_return met.error();
    auto self = std::make_shared<impl>(ex, std::move(profile), std::move(log), std::move(control));
    co_return std::shared_ptr<upstream_backend>(new upstream_backend(std::move(self)));
}

upstream_backend::~upstream_backend() {
    detach();
}

server::server_options upstream_backend::describe() const {
    server::server_options o;
    o.info = implementation_from_json(impl_->profile_->server_info);
    o.instructions = impl_->profile_->instructions;
    return o;
}

namespace {

// Announcements for the one server this backend serves.
class server_sink final : public announcement_sink {
public:
    explicit server_sink(server::server& srv) : srv_(srv) {}
    void list_changed(protocol::server_change what) override { srv_.notify_list_changed(what); }
    void resource_updated(std::string const& uri) override { srv_.notify_resource_updated(uri); }
    void tool_headers(std::string const& tool, std::vector<protocol::param_header> headers) override {
        srv_.set_param_headers(tool, std::move(headers));
    }

private:
    server::server& srv_;
};

} // namespace

void upstream_backend::attach(server::server& srv) {
    srv.set_backend(shared_from_this());
    attach(std::make_shared<server_sink>(srv));
}

void upstream_backend::attach(std::shared_ptr<announcement_sink> sink) {
    impl_->control_->attach(std::move(sink));
    asio::co_spawn(impl_->ex_, control_connection::async_start(impl_->control_), asio::detached);
}

void upstream_backend::detach() {
    impl_->control_->detach();
}

awaitable<void> upstream_backend::async_close() {
    detach();
    auto closing = impl::close_all(impl_);
    co_await asio::co_spawn(impl_->ex_, std::move(closing), asio::use_awaitable);
}

std::size_t upstream_backend::calls_in_flight() const noexcept {
    return impl_->in_flight_.load(std::memory_order_relaxed);
}

upstream_backend::stats upstream_backend::counts() const noexcept {
    auto const& c = impl_->profile_->counted;
    return {.calls_in_flight = calls_in_flight(),
            .reconnects = c.reconnects.load(std::memory_order_relaxed),
            .pool_waits = c.pool_waits.load(std::memory_order_relaxed),
            .pool_timeouts = c.pool_timeouts.load(std::memory_order_relaxed),
            .parked_rounds = c.parked_rounds.load(std::memory_order_relaxed),
            .forwarded_ok = c.forwarded[0].load(std::memory_order_relaxed),
            .forwarded_error = c.forwarded[1].load(std::memory_order_relaxed),
            .forwarded_cancelled = c.forwarded[2].load(std::memory_order_relaxed),
            .forwarded_input_required = c.forwarded[3].load(std::memory_order_relaxed)};
}

asio::any_io_executor upstream_backend::executor() const noexcept {
    return impl_->ex_;
}

protocol::era upstream_backend::era() const noexcept {
    return impl_->profile_->era;
}

protocol::version upstream_backend::version() const noexcept {
    return impl_->profile_->version;
}

protocol::server_capabilities upstream_backend::capabilities() const {
    return impl_->profile_->caps;
}

std::optional<server::tool_task_policy> upstream_backend::task_policy(std::string_view tool) const {
    auto const& profile = *impl_->profile_;
    if (!profile.caps.tasks)
        return std::nullopt;
    // Without task_after, a call becomes a task only when the upstream answers with one (become_task). A
    // 2025-11-25 upstream tool that requires a task keeps that contract downstream.
    constexpr auto only_when_the_upstream_says = std::chrono::hours(24 * 365);
    return server::tool_task_policy{std::string(tool),
                                    impl_->upstream_requires_task(tool) ? protocol::task_support::required
                                                                        : protocol::task_support::optional,
                                    profile.options.task_after.value_or(only_when_the_upstream_says)};
}

void upstream_backend::on_watch(std::string const& uri, bool watched) {
    asio::co_spawn(impl_->ex_, control_connection::async_watch(impl_->control_, uri, watched),
                   asio::detached);
}

server::session_admission upstream_backend::on_session(protocol::version version,
                                                       json::object const& client_capabilities,
                                                       json::object const&) {
    auto const& profile = *impl_->profile_;
    auto s = std::make_shared<session_upstream>();
    s->ex = impl_->ex_;
    s->capabilities = client_capabilities;
    // A modern upstream keeps no sessions: the pool serves, with per-request capabilities.
    s->own_connection = profile.era == protocol::era::legacy && !profile.options.share_sessions;
    if (s->own_connection && profile.stdio()) {
        // Each such session is a process: counted, and past the bound shared or refused. Sessions begin on
        // their own strands, hence the atomic count; the session's end gives its place back.
        auto& children = *impl_->session_children_;
        if (children.fetch_add(1) >= profile.options.max_session_children) {
            children.fetch_sub(1);
            if (profile.options.when_over_children == over_children::refuse)
                return protocol::make_error(protocol::errc::internal_error,
                                            "The gateway runs " +
                                                std::to_string(profile.options.max_session_children) +
                                                " upstream processes for legacy sessions of " + profile.name +
                                                " already (the most allowed); retry later");
            s->own_connection = false;
        } else {
            s->children_counted = impl_->session_children_;
        }
    }
    s->log_prefix = era_text(protocol::era::legacy, version) + " -> " +
                    era_text(profile.era, profile.version) + " upstream=" + profile.name;
    std::weak_ptr<detail::gateway_log> weak = impl_->log_;
    s->log = [weak](std::string const& line) {
        if (auto l = weak.lock())
            l->line(line);
    };
    if (s->own_connection) // the session's child starts now; its first request finds it ready
        asio::co_spawn(impl_->ex_, upstream_pool::async_open_session(impl_->pool_, s), asio::detached);
    else
        impl_->log_->line("initialize " + s->log_prefix + " status=ok 0ms");
    return std::shared_ptr<void>(std::move(s));
}

awaitable<server::answer_result> upstream_backend::async_answer(protocol::method_id method,
                                                                json::object const& params,
                                                                server::request_context& ctx) {
    auto const& session = ctx.session_data();
    return async_forward(method, params, ctx, session); // no frame of its own: the hot path
}

awaitable<server::answer_result> upstream_backend::async_forward(protocol::method_id method,
                                                                 json::object const& params,
                                                                 server::request_context& ctx,
                                                                 std::shared_ptr<void> const& session) {
    auto const started = std::chrono::steady_clock::now();
    auto self = impl_;
    in_flight_count counted(self->in_flight_);
    auto log = [&](std::string const& status) {
        // Counted by its first letter: ok, error or failed, cancelled, input_required.
        auto const kind = status[0] == 'o' ? 0 : status[0] == 'c' ? 2 : status[0] == 'i' ? 3 : 1;
        self->profile_->counted.forwarded[kind].fetch_add(1, std::memory_order_relaxed);
        if (!log::enabled(log::level::info))
            return;
        auto const took = std::chrono::steady_clock::now() - started;
        if (!self->log_->to_sink() && log::current_format() == log::format::json) {
            auto const era = era_text(ctx.era(), ctx.version());
            std::string message =
                std::string(protocol::info(method).name) + " forwarded to " + self->profile_->name;
            self->log_->write_with([&](std::string& line) {
                log::append(line,
                            {.component = "duet gateway",
                             .name = "forwarded",
                             .message = message,
                             .method = protocol::info(method).name,
                             .era = era,
                             .upstream = self->profile_->options.name.empty() ? self->profile_->name
                                                                              : self->profile_->options.name,
                             .outcome = status,
                             .latency_ms = std::chrono::duration<double, std::milli>(took).count(),
                             .trace_id = ctx.trace() ? ctx.trace()->trace_id() : std::string_view()},
                            log::format::json);
            });
            return;
        }
        auto const ms = std::chrono::duration_cast<std::chrono::milliseconds>(took);
        // Written in place (gateway_log::write_with): this runs for every request.
        self->log_->write_with([&](std::string& line) {
            line += "duet gateway: ";
            line += protocol::info(method).name;
            line += ' ';
            append_era(line, ctx.era(), ctx.version());
            line += " -> ";
            append_era(line, self->profile_->era, self->profile_->version);
            line += " upstream=";
            line += self->profile_->name;
            line += " status=";
            line += status;
            line += ' ';
            char digits[24];
            auto const end = std::to_chars(digits, digits + sizeof digits, ms.count()).ptr;
            line.append(digits, end);
            line += "ms";
            if (auto const* trace = ctx.trace()) {
                line += " trace=";
                line += trace->trace_id();
            }
        });
    };

    std::optional<support::busy_batching_hold> busy;
    if (self->profile_->options.batch_when_busy)
        busy.emplace(support::hold_busy_thread());
    auto up = upstream_params(method, params, self->profile_->options.lenient_args);
    if (!up) {
        server::answer_result refused = up.error();
        log(status_of(refused));
        co_return refused;
    }
    if (method == protocol::method_id::tools_call) {
        // The downstream's task is the gateway's; upstream, a 2025-11-25 task is asked for where the tool
        // needs one, or where it offers one and the downstream client can follow a task (the gateway then
        // follows the upstream's, and the downstream request becomes a task of its own).
        bool const downstream_follows = ctx.era() == protocol::era::modern
                                            ? ctx.declares(protocol::client_capability::tasks)
                                            : params.contains("task");
        up->erase("task");
        if (self->upstream_task_wanted(params, downstream_follows))
            (*up)["task"] = json::object{};
    }
    call_spec spec;
    spec.method = method;
    spec.params = std::move(*up);
    spec.capabilities = ctx.client_capabilities();
    spec.log_threshold = ctx.log_threshold();
    spec.wants_progress = ctx.wants_progress();
    if (auto const* trace = ctx.trace())
        spec.trace = protocol::child_of(*trace, support::new_span_id());
    spec.modern_downstream = ctx.era() == protocol::era::modern;
    spec.session = std::static_pointer_cast<session_upstream>(session);
    if (auto const* h = ctx.state().if_contains(parked_key); h && h->is_string())
        spec.handle = std::string(h->get_string());

    // Named, then taken apart by reference: GCC 12 miscompiles a structured binding of a co_await result.
    auto current = co_await self->async_begin(std::move(spec), asio::use_awaitable);
    auto& call = std::get<0>(current);
    auto& step = std::get<1>(current);
    server::answer_result outcome = protocol::internal_error();
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
            case call_step::kind::task:
                (void)co_await ctx.async_become_task(); // a client that cannot follow one just waits
                // A status message of the upstream's task: the gateway task's.
                if (auto const& note = step.progress().message; !note.empty())
                    ctx.set_task_status(note);
                break;
            case call_step::kind::questions: {
                // The retry that brings the answers finds the call by its handle (parked as it asked).
                if (call->parks())
                    ctx.state()[parked_key] = call->parked_handle();
                std::vector<std::string> keys;
                for (auto const& q : step.questions())
                    keys.push_back(q.key);
                auto answers = co_await ctx.async_inputs(std::move(step.questions()));
                impl::answers given;
                given.reserve(keys.size());
                for (std::size_t i = 0; i < keys.size() && i < answers.size(); ++i)
                    given.emplace_back(std::move(keys[i]), to_input_answer(answers[i]));
                current = co_await self->async_answer(call, std::move(given), asio::use_awaitable);
                continue;
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
    if (outcome && method == protocol::method_id::tools_list)
        self->learn_tools(outcome->result);
    // Done: the sweep unparks it, if it was parked.
    if (!outcome && method == protocol::method_id::resources_read)
        if (auto respelled = respell_not_found(outcome.error(), params, ctx.era()))
            outcome = std::move(*respelled);
    log(status_of(outcome));
    co_return outcome;
}

} // namespace duet::gateway
