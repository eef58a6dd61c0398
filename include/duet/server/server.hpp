/// @file duet/server/server.hpp
///
/// An MCP server: what it offers (tools, resources, templates, prompts), how it describes itself, and the
/// stateless half of dispatch that both eras share. Transports attach connections
/// (duet/server/connection.hpp) that own the per-session half.
///
///     duet::server::server srv({.info = {.name = "demo", .version = "1.0"}});
///     srv.add_tool({.name = "lookup", .input_schema = ...}, [](json::object const& args, request_context&) {
///         return tool_result::text(read_file(args.at("path")));           // plain: runs off the I/O threads
///     });
///     srv.add_tool({.name = "echo", .input_schema = ..., .run_plain = plain_run::inline_on_io},
///                  [](json::object const& args, request_context&) {       // cheap and never blocks: runs
///                      return tool_result::text(args.at("text").as_string());   // where it is served
///                  });
///     srv.add_typed_tool<forecast_args>({.name = "forecast"}, [](forecast_args const& in, request_context&){
///         return forecast{...};                                             // -> structuredContent + text
///     });
///
/// @par Thread safety
/// Registration and removal may happen at any time from any thread, while requests are served; each change
/// emits the matching list_changed to every listener.
#pragma once

#include <duet/metrics/registry.hpp>
#include <duet/protocol/admission.hpp>
#include <duet/protocol/capabilities.hpp>
#include <duet/protocol/schema/describe.hpp>
#include <duet/protocol/server_changes.hpp>
#include <duet/protocol/shaping.hpp>
#include <duet/server/admitted_request.hpp>
#include <duet/server/argument_check.hpp>
#include <duet/server/definitions.hpp>
#include <duet/server/input_state.hpp>
#include <duet/store/event_bus.hpp>
#include <duet/store/task_store.hpp>
#include <duet/version.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace duet::server {

struct implementation_info {
    std::string name = "duet";
    std::string version = std::string(duet::version);
    std::string title;
    std::string description;
    std::string website_url;
    boost::json::array icons;

    [[nodiscard]] boost::json::object to_json() const;
};

struct server_options {
    implementation_info info;
    std::string instructions;
    protocol::era_support eras = protocol::era_support::both;
    std::size_t page_size = 100;
    /// Cache hints per cacheable method (server/discover, the four lists, resources/read default).
    std::map<protocol::method_id, protocol::cache_hints> cache_hints;
    /// Threads that run plain (blocking) handlers.
    std::size_t blocking_threads = 2;
    /// HMAC key sealing modern `requestState` (at least 16 bytes). Empty: a random key per process, so a
    /// state only opens on the process that issued it (set one shared key when several instances serve one
    /// endpoint).
    std::string request_state_key;
    /// A key ring instead (when not empty): the first key seals, every key opens what it sealed, so processes
    /// sharing the ring can roll a new key in (first) while the old one still opens states in flight.
    std::vector<state_key> request_state_keys;
    /// How long a client has to answer an input_required round.
    std::chrono::seconds request_state_ttl = std::chrono::minutes(10);
    /// Carries announcements (list_changed, resources/updated) to every process serving this endpoint, each
    /// delivering them to its own sessions and listens. Null: an in-memory bus of this server's own.
    std::shared_ptr<store::event_bus> event_bus;
    /// Where every answered request is counted (method, era, outcome, latency; tools/call by tool). Null:
    /// nothing is counted, and nothing is timed.
    std::shared_ptr<metrics::registry> metrics;
    /// This server's topic on `event_bus`: shared by the processes serving one endpoint, distinct for other
    /// servers on the same bus.
    std::string event_topic = "duet/server-events";
    /// Where callers carry verified bearer tokens (request_context::caller()): the lists leave out the
    /// tools, prompts, resources and templates whose required_scopes the caller's token lacks, and are then
    /// never cached beyond the caller (cacheScope private).
    bool list_permitted_only = false;
    /// Tasks (tools whose `tasks` is not forbidden): how long a finished task stays readable after it was
    /// made (a 2025-11-25 client's requested `ttl` is honoured between 1 s and task_max_ttl), how often
    /// clients are told to poll, and how many tasks one caller may hold at once (a legacy session, a token's
    /// subject, a client certificate; callers without an identity share one count).
    std::chrono::milliseconds task_ttl = std::chrono::hours(1);
    std::chrono::milliseconds task_max_ttl = std::chrono::hours(24);
    std::chrono::milliseconds task_poll_interval = std::chrono::seconds(1);
    std::size_t max_tasks_per_caller = 1000;
    /// Where tasks live: shared by the processes serving one endpoint (Redis), so that any of them answers
    /// tasks/get, update, cancel and result for a task another runs, their changes carried on `event_bus`.
    /// Null: in this process's memory. Tasks belong to their caller at this endpoint (`event_topic`).
    std::shared_ptr<store::task_store> task_store;
    /// Carries task changes between the processes sharing `task_store`, where `event_bus` does not (a
    /// gateway's announcements stay in each process). Null: `event_bus`.
    std::shared_ptr<store::event_bus> task_bus;
};

/// Something a server change is announced to (legacy sessions, modern listen streams).
struct server_event {
    /// Its notification, listen flag and capability: protocol/server_changes.hpp.
    using kind = protocol::server_change;
    kind what;
    std::string uri; ///< resource_updated only
};

class event_listener {
public:
    virtual ~event_listener() = default;
    /// Called from the thread that made the change; implementations hand off to their own executor.
    virtual void on_server_event(server_event const& e) = 0;
};

/// What a method answers: a result (newest shape, unshaped) plus its cache hints, or an error.
struct method_answer {
    boost::json::object result;
    protocol::cache_hints hints;
};
using answer_result = boost::system::result<method_answer, protocol::error_object>;

/// What backend::on_session answers: what the backend keeps for the new session, or why it refuses to begin
/// one (a limit of the backend's reached): the `initialize` then fails with that error, over HTTP with 503
/// Service Unavailable, and no session begins.
using session_admission = boost::system::result<std::shared_ptr<void>, protocol::error_object>;

/// What a tools/call's tool says about tasks: whether it may run as one, and how long it runs as a plain
/// request first (tool::tasks, tool::task_after).
struct tool_task_policy {
    std::string name;
    protocol::task_support support = protocol::task_support::forbidden;
    std::chrono::milliseconds after{0};
};

/// Serves what a server offers from somewhere else than its own registries: a gateway's upstream. With a
/// backend set, the server still admits every request, keeps sessions and listens, seals input rounds and
/// shapes every result for its era and version; the backend only answers the offering methods.
class backend {
public:
    virtual ~backend() = default;

    /// What the backend offers now. The server asks again after server::refresh_backend().
    [[nodiscard]] virtual protocol::server_capabilities capabilities() const = 0;

    /// Answers, server/discover's capabilities aside, every method server::async_answer takes: lists,
    /// tools/call, resources/read, prompts/get, completion/complete. Results come in any MCP shape (the
    /// server shapes them); a result's own ttlMs/cacheScope may be returned as `hints`.
    [[nodiscard]] virtual boost::asio::awaitable<answer_result>
    async_answer(protocol::method_id method, boost::json::object const& params, request_context& ctx) = 0;

    /// A legacy session begins (initialize, or a renegotiating one): what the backend keeps for it (an
    /// upstream connection of its own, say), or an error that refuses it. The session holds what is kept
    /// until it ends, however it ends, and its requests see it as request_context::session_data(). Called on
    /// the session's strand; must not block.
    [[nodiscard]] virtual session_admission on_session(protocol::version version,
                                                       boost::json::object const& client_capabilities,
                                                       boost::json::object const& client_info) {
        (void)version;
        (void)client_capabilities;
        (void)client_info;
        return std::shared_ptr<void>();
    }

    /// Whether a tools/call of `tool` may become a task of the server's (whose handler is then this backend's
    /// async_answer, held as long as it takes): empty for never. A backend whose answer is a task of its own
    /// source calls request_context::async_become_task() then, and follows that task itself.
    [[nodiscard]] virtual std::optional<tool_task_policy> task_policy(std::string_view tool) const {
        (void)tool;
        return std::nullopt;
    }

    /// A resource gained its first watcher (a legacy session's resources/subscribe or a modern listen's
    /// resourceSubscriptions) or lost its last one. Called on whatever thread the watch changed (a session's
    /// strand, a connection's destructor), under the server's watch lock: hand the work off, never block and
    /// never call watch_resource from here.
    virtual void on_watch(std::string const& uri, bool watched) {
        (void)uri;
        (void)watched;
    }
};

/// @cond
namespace detail {
class task_registry;
template<class F>
struct callable_traits : callable_traits<decltype(&F::operator())> {};
template<class C, class R, class... A>
struct callable_traits<R (C::*)(A...) const> {
    using result = R;
    using args = std::tuple<A...>;
};
template<class C, class R, class... A>
struct callable_traits<R (C::*)(A...)> : callable_traits<R (C::*)(A...) const> {};
template<class R, class... A>
struct callable_traits<R (*)(A...)> {
    using result = R;
    using args = std::tuple<A...>;
};
template<class T>
struct is_awaitable : std::false_type {};
template<class T, class E>
struct is_awaitable<boost::asio::awaitable<T, E>> : std::true_type {
    using value_type = T;
};
} // namespace detail
/// @endcond

class server {
public:
    explicit server(server_options options = {});
    ~server();
    server(server const&) = delete;
    server& operator=(server const&) = delete;

    [[nodiscard]] server_options const& options() const noexcept { return options_; }

    // ---- tools -------------------------------------------------------------------------------------------

    /// Registers (or replaces) a tool with a coroutine handler. Throws std::invalid_argument for a bad
    /// definition (empty name, inputSchema without type "object", invalid x-mcp-header annotations).
    void add_tool(tool t);

    /// Registers a tool whose handler is a plain function `tool_result(json::object const&,
    /// request_context&)`; it runs on the blocking pool so it never stalls the I/O threads, or inline where
    /// the request is served when `t.run_plain` is plain_run::inline_on_io (a cheap function that never
    /// blocks).
    template<class F>
    requires std::is_invocable_r_v<tool_result, F, boost::json::object const&, request_context&>
    void add_tool(tool t, F f) {
        if (t.run_plain == plain_run::inline_on_io)
            t.direct = f; // called as is when the call can be answered right away
        t.handler = offload<tool_result, boost::json::object const&>(std::move(f), t.run_plain);
        add_tool(std::move(t));
    }

    /// Registers a tool whose handler is a coroutine `awaitable<tool_result>(json::object const&,
    /// request_context&)`; it runs on the connection's executor and must not block.
    template<class F>
    requires std::is_invocable_r_v<boost::asio::awaitable<tool_result>, F, boost::json::object const&,
                                   request_context&> void
    add_tool(tool t, F f) {
        t.handler = std::move(f);
        add_tool(std::move(t));
    }

    /// Registers a typed tool: `In` (a described struct) gives the inputSchema and decodes the arguments; a
    /// decode failure becomes an isError result. The callable returns `Out` (a described struct: outputSchema
    /// and structuredContent), `tool_result`, or `std::string`, directly or as an awaitable.
    template<class In, class F>
    void add_typed_tool(tool t, F f);

    bool remove_tool(std::string const& name);

    // ---- resources, templates, prompts -------------------------------------------------------------------

    // Each takes its handler in the definition (a coroutine: `read` / `get`) or as a second argument: a plain
    // function, run on the blocking pool (or inline when the definition's `run_plain` says
    // plain_run::inline_on_io), or a coroutine, run on the connection's executor (it must not
    // block). Only coroutine handlers can ask the client for input (request_context::async_input). A
    // definition without a handler, name or URI throws std::invalid_argument.

    /// Registers (or replaces) a resource. Plain handler: `read_result(std::string const& uri,
    /// request_context&)`; coroutine: the same returning `awaitable<read_result>`.
    void add_resource(resource r);
    template<class F>
    requires std::is_invocable_r_v<read_result, F, std::string const&, request_context&>
    void add_resource(resource r, F f) {
        r.read = offload<read_result, std::string const&>(std::move(f), r.run_plain);
        add_resource(std::move(r));
    }
    template<class F>
    requires std::is_invocable_r_v<boost::asio::awaitable<read_result>, F, std::string const&,
                                   request_context&> void
    add_resource(resource r, F f) {
        r.read = std::move(f);
        add_resource(std::move(r));
    }
    bool remove_resource(std::string const& uri);

    /// Registers (or replaces) a resource template. Plain handler: `read_result(std::string const& uri,
    /// uri_variables const&, request_context&)`; coroutine: the same returning `awaitable<read_result>`.
    /// Throws std::invalid_argument for a template without a `{variable}`.
    void add_resource_template(resource_template t);
    template<class F>
    requires std::is_invocable_r_v<read_result, F, std::string const&, uri_variables const&, request_context&>
    void add_resource_template(resource_template t, F f) {
        t.read = offload<read_result, std::string const&, uri_variables const&>(std::move(f), t.run_plain);
        add_resource_template(std::move(t));
    }
    template<class F>
    requires std::is_invocable_r_v<boost::asio::awaitable<read_result>, F, std::string const&,
                                   uri_variables const&, request_context&> void
    add_resource_template(resource_template t, F f) {
        t.read = std::move(f);
        add_resource_template(std::move(t));
    }
    bool remove_resource_template(std::string const& uri_template);

    /// Registers (or replaces) a prompt. Plain handler: `prompt_result(prompt_arguments const&,
    /// request_context&)`; coroutine: the same returning `awaitable<prompt_result>`. Required arguments are
    /// checked before the handler runs.
    void add_prompt(prompt p);
    template<class F>
    requires std::is_invocable_r_v<prompt_result, F, prompt_arguments const&, request_context&>
    void add_prompt(prompt p, F f) {
        p.get = offload<prompt_result, prompt_arguments const&>(std::move(f), p.run_plain);
        add_prompt(std::move(p));
    }
    template<class F>
    requires std::is_invocable_r_v<boost::asio::awaitable<prompt_result>, F, prompt_arguments const&,
                                   request_context&> void
    add_prompt(prompt p, F f) {
        p.get = std::move(f);
        add_prompt(std::move(p));
    }
    bool remove_prompt(std::string const& name);

    /// Announces that a resource's content changed: notifications/resources/updated to subscribed legacy
    /// sessions and to modern listens that watch the URI (or a parent of it).
    void notify_resource_updated(std::string const& uri);

    // ---- serving from a backend ---------------------------------------------------------------------------

    /// Serves tools, resources, templates, prompts and completion from `b` instead of the registries (which
    /// are then ignored). Set it before serving.
    void set_backend(std::shared_ptr<backend> b);
    /// Takes the backend's capabilities again.
    void refresh_backend();
    /// Announces a list change the server cannot see itself (a backend's): list_changed to every listener.
    void notify_list_changed(server_event::kind what);
    /// Counts the watchers of a resource; the backend hears of the first and the last (backend::on_watch).
    void watch_resource(std::string const& uri, bool watch);
    /// The x-mcp-header bindings of a backend's tool, for HTTP header admission (the registries keep their
    /// own tools' bindings).
    void set_param_headers(std::string const& tool, std::vector<protocol::param_header> headers);

    // ---- what dispatch needs -----------------------------------------------------------------------------

    /// Capabilities derived from what is registered: an immutable snapshot, recomputed when a registration
    /// changes (never per request). Thread-safe; a snapshot taken before a change keeps its old values.
    [[nodiscard]] std::shared_ptr<protocol::server_capabilities const> capabilities() const noexcept {
        return capabilities_.load(std::memory_order_acquire);
    }
    /// The x-mcp-header bindings of each tool, for HTTP header admission.
    [[nodiscard]] protocol::param_header_lookup const& param_header_lookup() const noexcept {
        return lookup_;
    }

    /// Admits one request (protocol::admit) by this server's eras, capabilities and header bindings: the
    /// session it arrived in (the transport's, when it routes requests itself) and its HTTP facts (null:
    /// none) are the transport's to say. Thread-safe.
    [[nodiscard]] admitted_request admit(jsonrpc::request r, protocol::session_view session,
                                         protocol::http_facts const* http) const;

    /// The scopes a bearer token needs for this request beyond the server-wide ones: the required_scopes of
    /// the tool a tools/call names, the prompt of a prompts/get, the resource (or the template matching the
    /// URI) of a resources/read or resources/subscribe, those of every URI a subscriptions/listen watches,
    /// the prompt or template a completion/complete completes; none for other methods or names that match
    /// nothing. Thread-safe.
    [[nodiscard]] std::vector<std::string> scopes_needed(std::string_view method,
                                                         boost::json::value const& params) const;
    /// Every scope a registered tool, prompt, resource or template requires, each once.
    [[nodiscard]] std::vector<std::string> declared_scopes() const;

    /// Answers a method that needs no session: discover, lists, reads, gets, calls, completion.
    [[nodiscard]] boost::asio::awaitable<answer_result>
    async_answer(protocol::method_id method, boost::json::value const& params, request_context& ctx);

    /// Answers the method right away when it can without suspending: discover, the lists,
    /// completion, a tools/call refused before its handler runs or whose tool has a `direct` handler. Empty
    /// when only async_answer can answer it (a coroutine handler, the blocking pool, a backend); nothing has
    /// run then. Throws what the handler throws, as async_answer does.
    [[nodiscard]] std::optional<answer_result>
    answer_now(protocol::method_id method, boost::json::value const& params, request_context& ctx);

    /// The InitializeResult for a negotiated legacy version (shaped for it).
    [[nodiscard]] boost::json::object initialize_result(protocol::version v) const;
    /// The Implementation object stamped on modern results.
    [[nodiscard]] boost::json::object const& server_info() const noexcept { return server_info_; }
    /// The same, as the `_meta` member a modern result without `_meta` ends with, serialized once
    /// (jsonrpc::response::result_tail): `"_meta":{"io.modelcontextprotocol/serverInfo":{...}}`.
    [[nodiscard]] std::shared_ptr<std::string const> const& server_info_tail() const noexcept {
        return server_info_tail_;
    }
    /// The backend, if one is set.
    [[nodiscard]] std::shared_ptr<backend> current_backend() const;

    void subscribe(std::weak_ptr<event_listener> l);
    /// The listeners held, live or ended but not yet swept (bounded by twice the live ones, at least 64).
    [[nodiscard]] std::size_t listener_count();

    /// What a tools/call's tool says about tasks (empty: no such tool, or one that never runs as a task).
    [[nodiscard]] std::optional<tool_task_policy> task_policy(boost::json::value const& params) const;
    /// The tasks this server runs (server.hpp's tasks section; src/server/task_registry.hpp).
    [[nodiscard]] detail::task_registry& tasks() noexcept { return *tasks_; }
    [[nodiscard]] std::shared_ptr<detail::task_registry> const& tasks_shared() noexcept { return tasks_; }

    /// Seals and opens the `requestState` of modern input_required rounds.
    [[nodiscard]] state_sealer const& sealer() const noexcept { return sealer_; }

    /// The executor plain handlers run on.
    [[nodiscard]] boost::asio::thread_pool& blocking_pool() noexcept { return pool_; }

private:
    // A coroutine handler that runs the plain function `f` on the blocking pool and resumes its caller where
    // it was, or calls it right away for plain_run::inline_on_io. `Args` are the handler's parameters before
    // the request_context.
    template<class R, class... Args, class F>
    std::function<boost::asio::awaitable<R>(Args..., request_context&)> offload(F f, plain_run where) {
        if (where == plain_run::inline_on_io)
            return [f = std::move(f)](Args... args, request_context& ctx) -> boost::asio::awaitable<R> {
                co_return f(args..., ctx); // the closure lives in the definition, which outlives the call
            };
        return [this, f = std::move(f)](Args... args, request_context& ctx) -> boost::asio::awaitable<R> {
            // The references stay valid: this frame lives until the pool's coroutine completes.
            co_return co_await boost::asio::co_spawn(
                pool_, async_run_blocking<R, F, Args...>(f, args..., ctx), boost::asio::use_awaitable);
        };
    }

    // A named coroutine rather than a capturing lambda, whose closure co_spawn may move after starting it.
    template<class R, class F, class... Args>
    static boost::asio::awaitable<R> async_run_blocking(F const& f, Args... args, request_context& ctx) {
        co_return f(args..., ctx);
    }

    // Publishes `e` on the event bus, whose delivery (to every process serving this endpoint) comes back to
    // deliver() here.
    void announce(server_event const& e);
    void deliver(server_event const& e);
    // The required_scopes of the resource `uri` names, else of the first template matching it; null when
    // neither. mutex_ held.
    std::vector<std::string> const* resource_scopes(std::string_view uri) const;
    // Recomputes the capabilities snapshot; called with mutex_ held exclusively, so snapshots are published
    // in the order of the changes they reflect.
    void refresh_capabilities();
    // The tool a tools/call names and the arguments its handler reads (where they lie in the request).
    struct tool_call {
        std::shared_ptr<tool const> definition;
        boost::json::object const* arguments = nullptr;
    };
    // The call to make, or the answer that refuses it before any handler runs.
    std::variant<tool_call, answer_result> resolve_call(boost::json::value const& params) const;
    boost::asio::awaitable<answer_result> async_call_tool(boost::json::value const& params,
                                                          request_context& ctx);
    answer_result list(protocol::method_id method, boost::json::value const& params,
                       protocol::caller_identity const* caller) const;
    boost::asio::awaitable<answer_result> async_read_resource(boost::json::value const& params,
                                                              request_context& ctx) const;
    boost::asio::awaitable<answer_result> async_get_prompt(boost::json::value const& params,
                                                           request_context& ctx) const;
    answer_result complete(boost::json::value const& params) const;
    answer_result discover() const;
    // What answer_now and async_answer both answer before dispatching, in this order: params that are
    // neither missing nor an object (-32602), then server/discover (it needs no backend and no handler).
    std::optional<answer_result> answer_before_dispatch(protocol::method_id method,
                                                        boost::json::value const& params) const;
    protocol::cache_hints hints_for(protocol::method_id m) const;

    server_options options_;
    boost::json::object server_info_;
    std::shared_ptr<std::string const> server_info_tail_;
    state_sealer sealer_;
    boost::asio::thread_pool pool_;
    std::shared_ptr<detail::task_registry> tasks_;
    std::atomic<bool> tasks_offered_{false}; ///< capabilities().tasks, read without the snapshot's lock
    mutable std::shared_mutex mutex_;
    // A tool with its arguments check read out of its schema once, when it is added.
    struct registered_tool {
        tool definition;
        argument_check arguments;
    };
    std::map<std::string, std::shared_ptr<registered_tool const>, std::less<>> tools_;
    std::map<std::string, std::vector<protocol::param_header>> param_headers_;
    std::map<std::string, std::shared_ptr<resource const>> resources_;
    std::map<std::string, std::shared_ptr<resource_template const>> templates_;
    std::map<std::string, std::shared_ptr<prompt const>> prompts_;
    std::atomic<std::shared_ptr<protocol::server_capabilities const>> capabilities_;
    std::mutex listeners_mutex_;
    std::vector<std::weak_ptr<event_listener>> listeners_;
    std::size_t listeners_pruned_at_ = 0; ///< the size after the last sweep of expired listeners
    std::shared_ptr<store::event_bus> bus_;
    std::uint64_t bus_subscription_ = 0;
    std::shared_ptr<backend> backend_;
    std::mutex watch_mutex_;
    std::map<std::string, std::size_t> watchers_;
    protocol::param_header_lookup lookup_;
};

// ---- typed tools ----------------------------------------------------------------------------------------

template<class In, class F>
void server::add_typed_tool(tool t, F f) {
    using traits = detail::callable_traits<F>;
    using raw_result = typename traits::result;
    using out_type =
        typename std::conditional_t<detail::is_awaitable<raw_result>::value, detail::is_awaitable<raw_result>,
                                    std::type_identity<raw_result>>::type;
    static_assert(schema::detail::is_described_struct<In>, "add_typed_tool: In must be a described struct");

    auto described = schema::schema_of<In>();
    // Keep descriptions the caller wrote into input_schema.properties, checked against the members.
    if (auto const* given = t.input_schema.if_contains("properties"); given && given->is_object()) {
        auto& props = described["properties"].as_object();
        for (auto const& kv : given->get_object()) {
            auto* p = props.if_contains(kv.key());
            if (!p)
                throw std::invalid_argument("tool " + t.name + ": input_schema describes \"" +
                                            std::string(kv.key()) +
                                            "\", which is not a member of the arguments");
            if (auto const* extra = kv.value().if_object())
                for (auto const& e : *extra)
                    p->as_object()[e.key()] = e.value();
        }
    }
    t.input_schema = std::move(described);
    if constexpr (schema::detail::is_described_struct<out_type>)
        t.output_schema = schema::schema_of<out_type>();

    auto to_result = [](out_type&& out) -> tool_result {
        if constexpr (std::is_same_v<out_type, tool_result>)
            return std::move(out);
        else if constexpr (std::is_same_v<out_type, std::string>)
            return tool_result::text(out);
        else
            return tool_result::structured_value(schema::encode(out));
    };
    auto call = [f = std::move(f), to_result](In const& in, request_context& ctx) -> raw_result {
        return f(in, ctx);
    };

    if constexpr (detail::is_awaitable<raw_result>::value) {
        t.handler = [call, to_result](boost::json::object const& args,
                                      request_context& ctx) -> boost::asio::awaitable<tool_result> {
            auto in = schema::decode<In>(args);
            if (!in)
                co_return tool_result::error("Invalid arguments: " + in.error().to_string());
            auto out = co_await call(*in, ctx);
            co_return to_result(std::move(out));
        };
        add_tool(std::move(t));
    } else {
        add_tool(std::move(t), [call, to_result](boost::json::object const& args, request_context& ctx) {
            auto in = schema::decode<In>(args);
            if (!in)
                return tool_result::error("Invalid arguments: " + in.error().to_string());
            return to_result(call(*in, ctx));
        });
    }
}

} // namespace duet::server
