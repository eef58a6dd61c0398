// File: src/client/client_impl.hpp (private)
//
// The state behind duet::client::client: the transport, the era and version the connection speaks, the
// requests waiting for answers, and the routing of everything the server sends (answers by id, progress by
// token, listen notifications by subscription id, legacy server-to-client requests to the input handlers,
// change notifications to the cache and listeners).
//
// Its members are defined by side: client_impl.cpp sets the session up and connects it, client_sending.cpp
// sends requests and waits for their answers, client_receiving.cpp routes what the server sends, tasks.cpp
// follows tasks.
#pragma once

#include <duet/client/client.hpp>
#include <duet/client/result_cache.hpp>
#include <duet/protocol/method_table.hpp>
#include <duet/protocol/param_headers.hpp>

#include "transport.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace duet::client {

namespace detail {

// Shared by the impl's three files (client_impl.cpp, client_sending.cpp, client_receiving.cpp).

/// A progress token as a key: strings and integers never mistaken for each other ("" for any other value).
inline std::string token_key(boost::json::value const& token) {
    if (token.is_string())
        return "s:" + std::string(token.get_string());
    if (token.is_int64())
        return "i:" + std::to_string(token.get_int64());
    if (token.is_uint64())
        return "i:" + std::to_string(token.get_uint64());
    return {};
}

/// The object at `key`, or null when there is none or it is not an object.
inline boost::json::object const* object_at(boost::json::object const& o, std::string_view key) {
    auto const* v = o.if_contains(key);
    return v ? v->if_object() : nullptr;
}

} // namespace detail

/// A method name and its row of the method table, null for a name MCP does not define (async_request sends
/// any). A view without a destructor: coroutines take it by value, and a method_id converts to it at the call
/// (README: only temporaries with a destructor must not be passed to a coroutine).
struct method_ref {
    method_ref(protocol::method_id id) noexcept // implicit: a call names the method_id alone
        : name(protocol::info(id).name), row(&protocol::info(id)) {}
    explicit method_ref(std::string_view any) noexcept : name(any), row(protocol::find_method(any)) {}

    std::string_view name;
    protocol::method_info const* row; ///< null for a method MCP does not define

    [[nodiscard]] bool is(protocol::method_id id) const noexcept { return row && row->id == id; }
};

class client::impl : public detail::transport_sink, public std::enable_shared_from_this<client::impl> {
public:
    impl(boost::asio::any_io_executor ex, server_target target, client_options options);

    // ---- transport_sink ----
    void on_message(jsonrpc::message m, unsigned http_status, jsonrpc::request_id const* related) override;
    void on_request_failed(jsonrpc::request_id const& id, error e) override;
    void on_authorizing(jsonrpc::request_id const& id, bool underway) override;
    void on_closed(error e) override;

    /// An answer: the result object, or why there is none. `http_status` of the answer is kept for probing.
    struct answer {
        result<boost::json::object> value;
        unsigned http_status = 0;
    };

    /// (Re)creates and starts the transport.
    boost::asio::awaitable<result<void>> async_start_transport();
    /// One request, one answer: envelope/headers per era, progress, cancellation, timeout. `params` are
    /// copied once, into the request sent (the layers above keep theirs for retries without copies of
    /// their own); the caller keeps them (and a method name not in the table) alive until the answer.
    boost::asio::awaitable<answer> async_round(method_ref method, boost::json::object const& params,
                                               request_options const& options);
    /// async_round() plus the modern -32022 retry.
    boost::asio::awaitable<result<boost::json::object>>
    async_plain(method_ref method, boost::json::object const& params, request_options const& options);
    /// async_plain() plus multi round-trip input rounds (tools/call, prompts/get, resources/read).
    boost::asio::awaitable<result<boost::json::object>>
    async_with_input(method_ref method, boost::json::object const& params, request_options const& options);
    /// Answers a modern round's (or task's) inputRequests through the request's on_input or the handlers.
    boost::asio::awaitable<result<boost::json::object>>
    async_answer_inputs(boost::json::object const& requests, request_options const& options);
    /// tasks/get, read into a task_info.
    boost::asio::awaitable<result<task_info>> async_get_task(std::string const& id,
                                                             request_options const& options);
    /// Follows a task to its end (client::async_task_result; src/client/tasks.cpp).
    boost::asio::awaitable<result<boost::json::object>> async_follow_task(task_info task,
                                                                          request_options const& options);
    /// async_plain() through the cache.
    boost::asio::awaitable<result<boost::json::object>>
    async_cached(method_ref method, boost::json::object params, request_options const& options);
    void notify(protocol::method_id method, boost::json::object params);
    /// Answers a legacy server-to-client request through an in-flight request's own handler.
    /// `owner` is the request it belongs to, whose wait for its answer stops meanwhile.
    static boost::asio::awaitable<void> async_answer(std::shared_ptr<impl> self, async_input_handler handler,
                                                     jsonrpc::request_id owner, jsonrpc::request_id id,
                                                     input_question q);
    /// The client_options handler for a question the server asks (elicitation, sampling, roots), or null.
    [[nodiscard]] input_handlers::handler const* input_handler_for(std::string_view method) const noexcept;

    // ---- connecting ----
    boost::asio::awaitable<result<void>> async_initialize(protocol::version offer);
    void become_modern(protocol::version v);
    boost::asio::awaitable<answer> async_probe(protocol::version v);
    void adopt_discover(boost::json::object const& discover);
    void warn(std::string const& text) const;

    /// Records which tools mirror which arguments into Mcp-Param-* headers; false for an invalid tool.
    bool learn_tool(boost::json::object const& tool);
    /// 2025-11-25: whether the server advertises task-augmented tools/call, and whether a listed tool
    /// requires it (execution.taskSupport "required").
    [[nodiscard]] bool offers_legacy_tasks() const;
    [[nodiscard]] bool tool_requires_task(std::string_view name) const;

    struct pending {
        using clock = boost::asio::steady_timer::clock_type;
        explicit pending(boost::asio::any_io_executor ex) : timer(ex) {}
        boost::asio::steady_timer timer; ///< expires at the request's deadline; cancelled when it ends
        std::optional<answer> outcome;
        bool cancelled = false;
        std::chrono::milliseconds timeout{0};                  ///< 0: none
        clock::time_point limit_at = clock::time_point::max(); ///< client_options::request_time_limit
        int questions_open = 0;   ///< legacy questions of the server being answered (the wait stops)
        bool authorizing = false; ///< the user is authorizing this client (the wait stops too)

        /// The wait for an answer starts again now (sent, progress, a question answered), up to limit_at.
        void restart_wait() {
            if (questions_open > 0 || authorizing || timeout.count() <= 0 ||
                clock::now() + timeout >= limit_at)
                timer.expires_at(limit_at);
            else
                timer.expires_after(timeout);
        }
    };

    boost::asio::any_io_executor ex_;
    server_target target_;
    client_options options_;
    std::shared_ptr<detail::transport> transport_;
    protocol::era era_ = protocol::era::legacy;
    protocol::version version_ = protocol::latest_handshake_version;
    boost::json::object handshake_;
    boost::json::object server_info_;
    boost::json::object server_caps_;
    std::string instructions_;
    boost::json::object client_caps_;
    boost::json::object modern_caps_; ///< client_caps_, plus the tasks extension (client_options::tasks)
    std::int64_t next_id_ = 1;
    std::map<jsonrpc::request_id, std::shared_ptr<pending>> pending_;
    // The routes below point into the request_options of requests in flight: async_round's caller keeps
    // them alive until it returns, and it removes its routes first. Pointers, not copies: a request then
    // costs no allocation for its callbacks.
    /// The in-flight requests that asked for progress, by token_key of their progressToken.
    struct progress_route {
        std::string token;
        std::function<void(progress_event const&)> const* on_progress;
        jsonrpc::request_id id; ///< whose wait its progress restarts
    };
    std::vector<progress_route> progress_;
    /// The in-flight requests that answer questions themselves (request_options::on_input), oldest first.
    std::vector<std::pair<jsonrpc::request_id, async_input_handler const*>> input_routes_;
    /// The in-flight requests that hear their own log lines (request_options::on_log).
    std::vector<std::pair<jsonrpc::request_id, std::function<void(log_event const&)> const*>> log_routes_;
    std::map<jsonrpc::request_id, std::function<void(listen_event const&)>> listens_;
    std::map<int, std::function<void(std::string const&, boost::json::object const&)>> watchers_;
    int next_watcher_ = 0;
    std::map<std::string, std::vector<protocol::param_header>> tool_headers_;
    bool tools_known_ = false;
    std::set<std::string> tasks_required_; ///< 2025-11-25 tools whose execution.taskSupport is "required"
    /// The on_input of each 2025-11-25 task followed now, by task id: its questions name it (related-task).
    std::map<std::string, async_input_handler, std::less<>> task_inputs_;
    result_cache cache_;
    bool closed_ = false;
    std::optional<error> closed_error_;
    /// Wakes legacy listens when the connection ends.
    std::vector<std::weak_ptr<boost::asio::steady_timer>> wakeups_;
};

} // namespace duet::client
