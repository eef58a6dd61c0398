// Answering one admitted request that a handler (or a backend) serves: the state its handler sees, the
// handler run without a coroutine when it completes at once, the input rounds of a modern retry, and the
// answer shaped for the request's era and version. Keeps the requests whose handler is still running, by id,
// for cancellation. Lives on its connection's strand; the connection routes a request here once admission,
// the legacy session and the listens have had their say.
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/protocol/admission.hpp>
#include <duet/server/connection.hpp>
#include <duet/server/request_context.hpp>
#include <duet/server/server.hpp>

#include "legacy_session.hpp"
#include "task_registry.hpp"

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <variant>

namespace duet::server::detail {

/// A request admitted and ready whose handler may suspend: what the coroutine that answers it needs.
struct deferred_request {
    jsonrpc::request r;
    protocol::admission a;
    std::shared_ptr<request_state> state;
    std::optional<task_plan> task; ///< a tools/call that may become a task
    bool tasks_method = false;     ///< tasks/get, update, cancel, result, list: the task store answers
};

class dispatch {
public:
    /// `session`: the connection's legacy session id for log events (connection_options::session_id), which
    /// outlives this object.
    dispatch(server& srv, std::string_view session);

    /// The state a request's handler runs with, or the answer refusing it before the handler runs (a bad
    /// modern retry, an id already in flight). `session` is the connection's legacy session (null: none);
    /// `out` the request's own stream (null: the connection's); `host` the connection serving it.
    [[nodiscard]] std::variant<std::shared_ptr<request_state>, jsonrpc::message>
    prepare(jsonrpc::request const& r, protocol::admission& a, legacy_session const* session,
            connection::writer out, std::function<void()> end_stream, std::weak_ptr<request_host> host);

    /// Runs the handler and answers at once when it completes without suspending; otherwise the request
    /// ready for async_answer(), in flight (cancellable by id), its handler not yet run. `r` and `a` are
    /// moved from only in the second case.
    [[nodiscard]] std::variant<connection::answer, deferred_request>
    answer_or_defer(jsonrpc::request& r, protocol::admission& a, std::shared_ptr<request_state> state);

    /// Runs the handler of a deferred request to its end, and answers.
    [[nodiscard]] boost::asio::awaitable<connection::answer> async_answer(deferred_request d);

    /// The answer to a request admission settled or the connection refused: its HTTP status follows the era.
    [[nodiscard]] static connection::answer answer_with(protocol::admission const& a,
                                                        std::optional<jsonrpc::message> message);

    [[nodiscard]] bool in_flight(jsonrpc::request_id const& id) const { return in_flight_.contains(id); }
    /// Marks a running request cancelled: it gets no answer.
    void cancel(jsonrpc::request_id const& id) {
        if (auto it = in_flight_.find(id); it != in_flight_.end())
            it->second->cancelled = true;
    }
    void cancel_all() {
        for (auto& [id, state] : in_flight_)
            state->cancelled = true;
    }

private:
    // A tools/call that may become a task, or a tasks/* request: answered here, or deferred (filled into
    // `later`); empty for every other request.
    std::optional<connection::answer> answer_tasks(jsonrpc::request& r, protocol::admission& a,
                                                   std::shared_ptr<request_state>& state,
                                                   std::optional<deferred_request>& later);
    boost::asio::awaitable<answer_result> async_run_as_task(deferred_request& d);
    // Who owns the tasks this request makes or asks for (task_registry).
    std::string task_owner(request_state const& state);
    // Runs a call that may become a task to its end (the handler's side of task_link).
    static boost::asio::awaitable<void> async_run_linked(server& srv,
                                                         std::shared_ptr<jsonrpc::request const> r,
                                                         std::shared_ptr<request_state> state,
                                                         std::shared_ptr<task_link> link);
    // What a handler's exception becomes (static: a task's handler outlives its connection's dispatch).
    static answer_result failed(server& srv, jsonrpc::request const& r, request_state& state);
    std::optional<jsonrpc::message> shape(jsonrpc::request const& r, protocol::admission const& a,
                                          request_state const& state, answer_result outcome);
    std::optional<protocol::error_object> restore_input(jsonrpc::request const& r, request_state& state);
    static method_answer input_required(server& srv, jsonrpc::request const& r, request_state& state);

    server& server_;
    std::string_view session_;
    std::string task_scope_; ///< this connection's legacy session as a task owner; made when first needed
    std::map<jsonrpc::request_id, std::shared_ptr<request_state>> in_flight_;
};

} // namespace duet::server::detail
