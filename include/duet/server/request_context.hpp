/// @file duet/server/request_context.hpp
///
/// What a handler knows and can do while it serves one request, the same in both eras: the era and version,
/// the client's capabilities and info *for this request*, progress, logging, cancellation, and (legacy
/// sessions) requests to the client.
///
///     tool_result slow(boost::json::object const&, request_context& ctx) {
///         for(int i = 0; i < 10 && !ctx.cancelled(); ++i) { work(); ctx.report_progress(i + 1, 10); }
///         ...
///     }
///
/// @par Thread safety
/// A context may be used from the thread a plain handler runs on and from the connection's own executor;
/// every member is safe to call concurrently. It must not outlive the handler call it was passed to.
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/protocol/caller.hpp>
#include <duet/protocol/capabilities.hpp>
#include <duet/protocol/envelope.hpp>
#include <duet/protocol/trace_context.hpp>
#include <duet/protocol/version.hpp>
#include <duet/server/input_state.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/result.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::server {

/// Why a request to the client produced no result.
struct peer_failure {
    boost::system::error_code local;             ///< timeout, closed connection, not available in this era
    std::optional<jsonrpc::error_object> remote; ///< the client's JSON-RPC error, when it answered with one

    [[nodiscard]] std::string to_string() const;
};

[[noreturn]] void throw_exception_from_error(peer_failure const& f, boost::source_location const& loc);

using peer_result = boost::system::result<boost::json::value, peer_failure>;

/// Local reasons a request to the client fails.
enum class peer_errc {
    timed_out = 1,      ///< no answer before the deadline
    connection_closed,  ///< the connection ended before the answer
    not_in_this_era,    ///< modern requests cannot carry server-to-client requests
    capability_missing, ///< the client did not declare the capability this request needs
};
[[nodiscard]] boost::system::error_category const& peer_category() noexcept;
[[nodiscard]] boost::system::error_code make_error_code(peer_errc e) noexcept;

/// One question for the client: `key` names it within the request (the handler chooses it; modern clients
/// answer by key), `method` is elicitation/create, sampling/createMessage or roots/list.
struct input_request {
    std::string key;
    std::string method;
    boost::json::value params;
};

namespace detail {

/// Thrown through a modern handler that asked for input the client has not given yet; the dispatcher turns it
/// into an InputRequiredResult. Handlers must let it pass (catch specific exception types only).
struct input_required_signal {};

struct request_state;
class task_link;

/// Where a request's notifications and (legacy) requests to the client go: the connection that serves it.
/// One per connection rather than callbacks per request, so a request's state costs one allocation.
class request_host {
public:
    /// Thread-safe: delivers a notification related to `request` (unless it was cancelled meanwhile).
    virtual void notify(request_state const& request, jsonrpc::notification n) = 0;
    /// Legacy only: sends a request to the client on `request`'s stream and awaits its answer.
    [[nodiscard]] virtual boost::asio::awaitable<peer_result>
    async_request_client(request_state const& request, std::string method, boost::json::value params,
                         std::chrono::milliseconds timeout) = 0;

protected:
    ~request_host() = default;
};

/// The connection's side of one request's context. Built by the dispatcher.
struct request_state {
    static std::shared_ptr<boost::json::object const> const& empty_object() {
        static auto const empty = std::make_shared<boost::json::object const>();
        return empty;
    }

    protocol::era era = protocol::era::legacy;
    protocol::version version = protocol::latest_handshake_version;
    jsonrpc::request_id id{0};
    /// Never null once the request is served (the session's, or the modern request's own).
    std::shared_ptr<boost::json::object const> client_capabilities = empty_object();
    std::shared_ptr<boost::json::object const> client_info;  ///< null: the client sent none
    std::shared_ptr<protocol::caller_identity const> caller; ///< null: the transport established none
    std::optional<protocol::trace_context> trace;            ///< the W3C trace it belongs to, if any
    boost::json::value progress_token;                       ///< null: the client asked for no progress
    /// Legacy: the session's logging/setLevel threshold, read when a message is sent. Null for a modern
    /// request, whose threshold is `log_level`.
    std::shared_ptr<std::atomic<int>> session_log_threshold;
    /// Modern: messages at or above this level are sent; empty sends none (no `logLevel`).
    std::optional<protocol::log_level> log_level;
    std::atomic<bool> cancelled{false};
    /// The connection serving the request (empty once it is gone: nothing is sent then).
    std::weak_ptr<request_host> host;
    /// The request's own stream for its messages (HTTP); empty: the connection's.
    std::function<void(std::string)> out;
    /// Legacy only: whether the request may send requests to the client.
    bool may_request_client = false;
    std::atomic<double> last_progress{-1.0};
    /// Legacy Streamable HTTP sessions that allow SSE polling: ends the request's SSE stream early (null:
    /// not applicable).
    std::function<void()> end_stream;
    /// Modern tools/call, prompts/get, resources/read: input requests become an input_required round.
    /// Legacy sessions of a server with a backend: what the backend keeps for the session (on_session).
    std::shared_ptr<void> session_data;
    bool input_rounds = false;
    /// When it was admitted, if the server keeps metrics.
    std::chrono::steady_clock::time_point started;
    input_state input;           ///< answers so far and the handler's own state
    boost::json::object offered; ///< inputResponses for keys the last round did not ask; used if asked now
    boost::json::object asked;   ///< this round's inputRequests
    /// A tools/call that may become a task (task_registry.hpp); null for every other request.
    std::shared_ptr<task_link> task;
    /// A 2025-11-25 call that became a task: its request was answered, so its messages (requests to the
    /// client, progress, the task's status) go on the session's own stream instead of the request's.
    std::atomic<bool> detached{false};
};

} // namespace detail

class request_context {
public:
    explicit request_context(std::shared_ptr<detail::request_state> state) noexcept
        : state_(std::move(state)) {}

    [[nodiscard]] protocol::era era() const noexcept { return state_->era; }
    [[nodiscard]] protocol::version version() const noexcept { return state_->version; }
    [[nodiscard]] jsonrpc::request_id const& request_id() const noexcept { return state_->id; }
    [[nodiscard]] boost::json::object const& client_capabilities() const noexcept {
        return *state_->client_capabilities;
    }
    /// The client's Implementation object, when it sent one.
    [[nodiscard]] boost::json::object const* client_info() const noexcept {
        return state_->client_info.get();
    }
    /// Who sent this request, as its transport established it (the client certificate of mutual TLS); null
    /// when it established nothing (stdio, plain HTTP, TLS without client certificates).
    [[nodiscard]] protocol::caller_identity const* caller() const noexcept { return state_->caller.get(); }
    /// The W3C trace this request belongs to: its `_meta.traceparent` (and tracestate), else its HTTP
    /// request's headers; null when it carries none. A handler calling further services passes on
    /// protocol::child_of(*trace(), its own span id).
    [[nodiscard]] protocol::trace_context const* trace() const noexcept {
        return state_->trace ? &*state_->trace : nullptr;
    }
    [[nodiscard]] bool declares(protocol::client_capability c) const noexcept {
        return protocol::declares(*state_->client_capabilities, c);
    }

    /// True once the client cancelled this request (notifications/cancelled, or the HTTP stream closed). A
    /// handler should stop soon; whatever it returns afterwards is dropped.
    [[nodiscard]] bool cancelled() const noexcept { return state_->cancelled.load(); }

    /// True when the client asked for progress (sent a `progressToken`): report_progress sends nothing
    /// otherwise, so work done only to report it can be skipped.
    [[nodiscard]] bool wants_progress() const noexcept { return !state_->progress_token.is_null(); }

    /// Sends notifications/progress when the client asked for progress (a `progressToken`). Values must
    /// increase; a value not above the last one is dropped.
    void report_progress(double progress, std::optional<double> total = std::nullopt,
                         std::string_view message = {});

    /// Sends notifications/message when the level passes the threshold: the session's `logging/setLevel`
    /// (legacy), or the request's `logLevel` (modern; none when absent).
    void log(protocol::log_level level, boost::json::value data, std::string_view logger = {});
    /// The level log() sends at and above now (none: it sends nothing).
    [[nodiscard]] std::optional<protocol::log_level> log_threshold() const {
        if (state_->session_log_threshold)
            return static_cast<protocol::log_level>(state_->session_log_threshold->load());
        return state_->log_level;
    }

    /// Legacy sessions on Streamable HTTP at 2025-11-25: ends the SSE stream that carries this request's
    /// messages now, while the request goes on; the client reconnects after the stream's `retry` delay (GET
    /// with `Last-Event-ID`) and receives the rest, the response included (SEP-1699 polling, so a long call
    /// need not hold a connection open). Does nothing elsewhere: stdio, modern requests, older versions.
    void close_sse_stream() const {
        if (state_->end_stream && !state_->detached.load())
            state_->end_stream();
    }

    /// Pass named values, not temporaries: GCC 12 can destroy a temporary argument of a coroutine before the
    /// coroutine has copied it.
    ///
    /// Legacy sessions: sends `method` to the client and awaits the answer (elicitation/create,
    /// sampling/createMessage, roots/list, ping). Modern requests get peer_errc::not_in_this_era. A zero
    /// `timeout` uses the connection's default (connection_options::client_request_timeout).
    [[nodiscard]] boost::asio::awaitable<peer_result>
    async_request_client(std::string method, boost::json::value params,
                         std::chrono::milliseconds timeout = std::chrono::milliseconds::zero());

    /// Asks the client the same way in both eras. Legacy sessions: a real request (`key` unused), awaited.
    /// Modern tools/call, prompts/get and resources/read: the answer when the client's retry carries it;
    /// otherwise this run of the handler ends and the client gets an `input_required` result asking for it,
    /// then retries, and the handler runs again from the start (so work before the question must be
    /// repeatable). A question whose capability the request did not declare is not asked: it fails with
    /// peer_errc::capability_missing (see require()). A malformed answer is a -32602 error for the request.
    [[nodiscard]] boost::asio::awaitable<peer_result> async_input(input_request request);

    /// Several questions in one round: modern clients get every unanswered one in a single input_required
    /// result. Results are in the order asked.
    [[nodiscard]] boost::asio::awaitable<std::vector<peer_result>>
    async_inputs(std::vector<input_request> requests);

    /// A tools/call that may run as a task (tool::tasks, and a request that can follow one) becomes one now,
    /// if it is not one already: its request is answered with the task while the handler goes on, and input
    /// it asks from here on goes through the task. False where the call cannot be a task (or the caller
    /// holds its most tasks). Input asked before, in a modern call, went through the request's own rounds,
    /// so a handler can gather what it needs and then go on as a task (SEP-2663 §Task Creation).
    [[nodiscard]] boost::asio::awaitable<bool> async_become_task();
    /// The id of the task this call runs as, once it is one.
    [[nodiscard]] std::optional<std::string> task_id() const;
    /// In a task: its statusMessage, without a progress value (report_progress's message sets it too).
    /// Elsewhere nothing.
    void set_task_status(std::string_view message);

    /// Legacy sessions of a server served by a backend: what backend::on_session returned for this session
    /// (null elsewhere).
    [[nodiscard]] std::shared_ptr<void> const& session_data() const noexcept { return state_->session_data; }

    /// The handler's own small state: kept across the rounds of one modern request (sealed in requestState),
    /// a fresh object for every legacy call.
    [[nodiscard]] boost::json::object& state() noexcept { return state_->input.handler_state; }

    /// Throws protocol_error(-32021) naming `c` when this request did not declare it: for a handler that
    /// cannot go on without asking.
    void require(protocol::client_capability c) const;

private:
    std::shared_ptr<detail::request_state> state_;
};

} // namespace duet::server

/// @cond
template<>
struct boost::system::is_error_code_enum<duet::server::peer_errc> : std::true_type {};
/// @endcond
