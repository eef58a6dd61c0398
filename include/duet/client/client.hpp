/// @file duet/client/client.hpp
///
/// A Model Context Protocol client for servers of either era, over a spawned stdio child or Streamable HTTP.
/// One call connects (legacy `initialize`, modern per-request envelope, or `auto`: probe `server/discover`
/// and fall back), and the same calls then work whatever the era: lists (every page fetched), tools,
/// resources, prompts, completion, and listening for change notifications. Requests the server needs answered
/// on the way (elicitation, sampling, roots) go to the `input_handlers`, whether they arrive as legacy
/// server-to-client requests or as modern `input_required` rounds.
///
///     boost::asio::io_context io;
///     co_spawn(io, [&]() -> awaitable<void> {
///         auto c = co_await client::async_connect(http_target{"http://127.0.0.1:8750/mcp"}, {});
///         if(!c) { report(c.error()); co_return; }
///         auto tools = co_await (*c)->async_list_tools();
///         auto r = co_await (*c)->async_call_tool("echo", {{"text", "hi"}});
///         co_await (*c)->async_close();
///     }, detached);
///     io.run();
///
/// @par Thread safety
/// A client lives on the executor it was connected on, which must not run its handlers concurrently (an
/// io_context run by one thread, or a strand). Call it, and cancel its requests, from that executor only.
///
/// @par Errors
/// Every operation returns result<T> (duet/client/error.hpp); the server's JSON-RPC errors come back verbatim
/// as errc::rpc_error. Tool failures are results with `isError: true`, not errors.
#pragma once

#include <duet/client/connect_mode.hpp>
#include <duet/client/error.hpp>
#include <duet/client/target.hpp>
#include <duet/protocol/server_changes.hpp>
#include <duet/protocol/trace_context.hpp>
#include <duet/protocol/version.hpp>
#include <duet/version.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::client {

/// Answers to what a server asks of the client. Each handler gets the request's params (an
/// ElicitRequestParams, a CreateMessageRequestParams, or nothing for roots) and returns the result object
/// (ElicitResult, CreateMessageResult, ListRootsResult) or a JSON-RPC error for the server. A client declares
/// exactly the capabilities whose handler is set (elicitation: form mode; sampling; roots).
struct input_handlers {
    using handler = std::function<boost::system::result<boost::json::object, jsonrpc::error_object>(
        boost::json::object const& params)>;
    handler elicitation;
    handler sampling;
    handler roots;
};

/// A question the server asks during one request: a legacy server-to-client request, or one inputRequest
/// of a modern input_required round.
struct input_question {
    std::string method; ///< elicitation/create, sampling/createMessage, roots/list
    boost::json::object params;
    /// The question's key: its inputRequests key (modern), or the one a legacy Duet server names in
    /// `_meta` (duet/protocol/input_key.hpp); empty when the server named none.
    std::string key;
};
/// The answer to an input_question: the result object, or a JSON-RPC error for the server.
using input_answer = boost::system::result<boost::json::object, jsonrpc::error_object>;
/// Answers one request's questions without blocking the client (request_options::on_input).
using async_input_handler = std::function<boost::asio::awaitable<input_answer>(input_question)>;

/// One notifications/progress for a request.
struct progress_event {
    double progress = 0;
    std::optional<double> total;
    std::string message;
};

/// One notifications/message (server log line).
struct log_event {
    std::string level;
    std::string logger;
    boost::json::value data;
};

/// Cancels the requests it was handed to. Use it on the client's executor.
class cancellation {
public:
    void cancel();
    [[nodiscard]] bool cancelled() const noexcept { return cancelled_; }
    /// Called once on cancel() (immediately when already cancelled); returns a handle to drop the callback.
    std::shared_ptr<void> on_cancel(std::function<void()> f);

private:
    bool cancelled_ = false;
    std::vector<std::weak_ptr<std::function<void()>>> callbacks_;
};

/// A task a tools/call became: the server answered with a handle instead of the result (the modern tasks
/// extension's resultType "task", or 2025-11-25's `{task}`), as the last answer about it showed it.
struct task_info {
    std::string id;
    std::string status; ///< working, input_required, completed, failed, cancelled
    std::string status_message;
    std::optional<std::chrono::milliseconds> poll_interval; ///< how often the server asks to be polled
    boost::json::object task; ///< the Task as sent (modern tasks/get: with inputRequests, result or error)

    /// completed, failed or cancelled: the task will not change again.
    [[nodiscard]] bool terminal() const noexcept;
};

/// The task a tools/call result hands over, if it is one (modern resultType "task", legacy `{task}`).
[[nodiscard]] std::optional<task_info> task_in(boost::json::object const& result);

struct request_options {
    std::function<void(progress_event const&)> on_progress; ///< set: the request asks for progress
    std::shared_ptr<cancellation> cancel;
    std::optional<std::chrono::milliseconds> timeout; ///< default: client_options::request_timeout
    bool bypass_cache = false;                        ///< fetch even when a fresh cached result exists
    /// Answers what the server asks during this request, instead of client_options::inputs: each
    /// inputRequest of a modern input_required round, and (legacy) a server-to-client request that belongs
    /// to this request: one on its own HTTP stream, or any while it is the only request in flight with an
    /// on_input. A question no in-flight request can be told to own (several with on_input, none on a
    /// stream) is refused with an error to the server, never guessed.
    async_input_handler on_input;
    /// Modern: the ClientCapabilities this request declares, instead of the connection's.
    std::optional<boost::json::object> client_capabilities;
    /// The log lines that provably belong to this request (those on its own HTTP stream), instead of
    /// client_options::on_log; every other line still goes there.
    std::function<void(log_event const&)> on_log;
    /// Modern: this request's logLevel instead of client_options::log_level ("" asks for none).
    std::optional<std::string> log_level;
    /// The W3C trace this request belongs to: sent as `_meta.traceparent` (and tracestate), and on HTTP as
    /// the `traceparent` and `tracestate` headers too (protocol::child_of makes one for the next hop).
    std::optional<protocol::trace_context> trace;
    /// tools/call that became a task: called with each status seen while the client follows it to its end.
    std::function<void(task_info const&)> on_task;
    /// tools/call: answer with the task handle (the server's CreateTaskResult, see task_in) instead of
    /// following the task to its result.
    bool detach_task = false;
    /// tools/call on a 2025-11-25 server that offers tasks: ask for one (`params.task`). A tool whose
    /// `execution.taskSupport` is "required" is always asked as one.
    bool ask_for_task = false;
};

struct client_options {
    connect_mode mode = connect_mode::auto_detect;
    /// Pin a version: a handshake version for legacy (a modern one is a usage error there), a modern one for
    /// modern; under auto a modern pin is never downgraded into the legacy fallback.
    std::optional<protocol::version> version;
    boost::json::object client_info{{"name", "duet"}, {"version", duet::version}};
    input_handlers inputs;
    /// A request fails with errc::timeout when nothing comes for it within this long. Its progress
    /// notifications start the wait again (MCP allows it: the server shows it is working), and the time a
    /// legacy server's question to this client takes to answer is not counted.
    std::chrono::milliseconds request_timeout = std::chrono::seconds(60);
    /// The longest a request may take however much progress its server reports (0: no bound but the
    /// timeout).
    std::chrono::milliseconds request_time_limit{0};
    /// The largest message the server may send, in bytes: a stdio line, a whole HTTP answer, one SSE line or
    /// one event's data. A larger one fails what it answers with errc::too_large and is never read to its
    /// end: a stdio connection ends there (every request on it fails alike), an HTTP connection is dropped.
    std::size_t max_message_bytes = 64 * 1024 * 1024;
    /// Stdio: each line the server writes to its stderr, read as it comes, bounded (a line over 2 KiB is
    /// cut; past 100 lines a second the rest are dropped and counted; past 4 MiB a second the reading
    /// waits). Unset: the child's stderr is this process's.
    std::function<void(std::string_view line)> on_server_stderr;
    /// How long auto waits for the server/discover probe before concluding legacy. A stdio server that reads
    /// the probe late and exits on it is started again, once, for the handshake.
    std::chrono::milliseconds probe_timeout = std::chrono::seconds(5);
    /// Where auto remembers its verdicts (null: never remember).
    verdict_cache* verdicts = &default_verdict_cache();
    /// Warnings for people (deprecations); default: stderr.
    std::function<void(std::string const&)> on_warning;
    /// Server log lines (notifications/message).
    std::function<void(log_event const&)> on_log;
    /// Every other notification the server sends outside a listen (after the cache has seen it).
    std::function<void(std::string const& method, boost::json::object const& params)> on_notification;
    /// Modern: the logLevel to ask for on every request (deprecated in 2026-07-28; absent: no log lines).
    std::optional<std::string> log_level;
    bool use_cache = true;
    /// Modern: declare the tasks extension (io.modelcontextprotocol/tasks), so a server may answer a
    /// tools/call with a task; async_call_tool then follows it to its result, polling as the server asks and
    /// answering its input requests through the handlers (request_options::on_task, detach_task).
    bool tasks = true;
    /// The ClientCapabilities to declare instead of those derived from `inputs` (a gateway declares what
    /// its own client declared, and answers through request_options::on_input).
    std::optional<boost::json::object> capabilities;
};

/// What subscriptions/listen (modern) or the legacy notification stream should deliver.
struct listen_filter {
    bool tools_list_changed = false;
    bool prompts_list_changed = false;
    bool resources_list_changed = false;
    std::vector<std::string> resource_subscriptions;
};

/// The member of listen_filter that asks for the list change `what` (a row of protocol/server_changes.hpp);
/// null for resource_updated, which a listen asks for by URI (`resource_subscriptions`).
[[nodiscard]] bool listen_filter::*list_change_flag(protocol::server_change what) noexcept;

/// One event of a listen.
struct listen_event {
    enum class kind : std::uint8_t {
        acknowledged, ///< the server confirmed what it will send (`params.notifications`)
        notification, ///< a change notification (`method`, `params`)
        dropped,      ///< the stream dropped; the client re-listens
    };
    kind what = kind::notification;
    std::string method;
    boost::json::object params;
};

/// The kinds of paginated lists.
enum class list_kind : std::uint8_t { tools, prompts, resources, resource_templates };

class client {
public:
    /// Connects by `options.mode`. Under `auto` the verdict is remembered per server in `options.verdicts`.
    [[nodiscard]] static boost::asio::awaitable<result<std::shared_ptr<client>>>
    async_connect(server_target target, client_options options);

    ~client();
    client(client const&) = delete;
    client& operator=(client const&) = delete;

    [[nodiscard]] protocol::era era() const noexcept;
    [[nodiscard]] protocol::version version() const noexcept;
    /// The server's Implementation (InitializeResult.serverInfo, or the discover result's `_meta`).
    [[nodiscard]] boost::json::object const& server_info() const noexcept;
    [[nodiscard]] boost::json::object const& server_capabilities() const noexcept;
    [[nodiscard]] std::string const& instructions() const noexcept;
    /// The whole InitializeResult (legacy) or DiscoverResult (modern; empty when the server offered none).
    [[nodiscard]] boost::json::object const& handshake_result() const noexcept;
    /// What the client declared (the ClientCapabilities object).
    [[nodiscard]] boost::json::object const& client_capabilities() const noexcept;

    /// Any request; its result object. Modern requests get the envelope and routing headers.
    [[nodiscard]] boost::asio::awaitable<result<boost::json::object>>
    async_request(std::string method, boost::json::object params, request_options options = {});

    /// Modern: server/discover again (from the cache while fresh). Legacy: the InitializeResult.
    [[nodiscard]] boost::asio::awaitable<result<boost::json::object>>
    async_discover(request_options options = {});

    /// Every item of a list, following nextCursor to the end. Modern tools whose `x-mcp-header` annotations
    /// are invalid are left out (DIGEST §9).
    [[nodiscard]] boost::asio::awaitable<result<boost::json::array>> async_list(list_kind kind,
                                                                                request_options options = {});
    [[nodiscard]] boost::asio::awaitable<result<boost::json::array>>
    async_list_tools(request_options options = {});

    /// tools/call. Input requests are answered through the handlers, round after round.
    [[nodiscard]] boost::asio::awaitable<result<boost::json::object>>
    async_call_tool(std::string name, boost::json::object arguments, request_options options = {});
    [[nodiscard]] boost::asio::awaitable<result<boost::json::object>>
    async_read_resource(std::string uri, request_options options = {});
    [[nodiscard]] boost::asio::awaitable<result<boost::json::object>>
    async_get_prompt(std::string name, boost::json::object arguments, request_options options = {});
    /// completion/complete for `ref` ({"type":"ref/prompt","name":..} or {"type":"ref/resource","uri":..}).
    [[nodiscard]] boost::asio::awaitable<result<boost::json::object>>
    async_complete(boost::json::object ref, std::string argument, std::string value,
                   boost::json::object context_arguments = {}, request_options options = {});

    /// Delivers change notifications until `options.cancel` fires or the connection ends. A dropped stream is
    /// re-listened (with backoff). Modern: subscriptions/listen; legacy: resources/subscribe for the URIs and
    /// the session's notifications (HTTP: the GET stream).
    [[nodiscard]] boost::asio::awaitable<result<void>>
    async_listen(listen_filter filter, std::function<void(listen_event const&)> on_event,
                 request_options options = {});

    /// tasks/get: the task's state now.
    [[nodiscard]] boost::asio::awaitable<result<task_info>> async_get_task(std::string id,
                                                                           request_options options = {});
    /// Follows a task to its end, polling as the server asks and answering its input requests through the
    /// handlers: the result of the call it runs, or its error (errc::rpc_error), or errc::cancelled when it
    /// was cancelled. `options.cancel` firing sends tasks/cancel.
    [[nodiscard]] boost::asio::awaitable<result<boost::json::object>>
    async_task_result(std::string id, request_options options = {});
    /// tasks/cancel. Cancelling is cooperative: the task may still end otherwise.
    [[nodiscard]] boost::asio::awaitable<result<void>> async_cancel_task(std::string id,
                                                                         request_options options = {});

    /// Waits until the connection ends (a stdio server exited or broke the protocol, or async_close ran) or
    /// `cancel` fires: whether it ended. An HTTP connection ends only when closed.
    [[nodiscard]] boost::asio::awaitable<bool>
    async_wait_closed(std::shared_ptr<cancellation> cancel = nullptr);

    /// Ends the connection: legacy HTTP sessions are deleted; a stdio child gets EOF, then SIGTERM, then
    /// SIGKILL.
    boost::asio::awaitable<void> async_close();

    class impl;

private:
    explicit client(std::shared_ptr<impl> p) : impl_(std::move(p)) {}
    std::shared_ptr<impl> impl_;
};

} // namespace duet::client
