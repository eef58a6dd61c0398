// Following a task a tools/call became, in both eras: the extension's tasks/get polls (answering its input
// requests with tasks/update), 2025-11-25's tasks/get polls and then tasks/result (its questions arrive as
// server-to-client requests, answered by the handlers as any other). The server's pollInterval paces it.
#include <duet/jsonrpc/json_text.hpp>
#include <duet/protocol/tasks.hpp>

#include "client_impl.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <set>

namespace duet::client {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using protocol::method_id;

namespace {

// The pace of polling when the server names none, and the bounds a server's pollInterval is kept within (a
// zero or absurd interval must neither spin nor stall the follower).
constexpr std::chrono::milliseconds default_poll{1000};
constexpr std::chrono::milliseconds fastest_poll{50};
constexpr std::chrono::milliseconds slowest_poll{30000};

std::string string_at(json::object const& o, std::string_view key) {
    auto const* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

std::optional<task_info> task_from(json::object const& task) {
    task_info t;
    t.id = string_at(task, "taskId");
    t.status = string_at(task, "status");
    if (t.id.empty() || t.status.empty())
        return std::nullopt;
    t.status_message = string_at(task, "statusMessage");
    for (auto const* key : {"pollIntervalMs", "pollInterval"})
        if (auto const* v = task.if_contains(key); v && v->is_number())
            t.poll_interval = std::chrono::milliseconds(static_cast<std::int64_t>(v->to_number<double>()));
    t.task = task;
    return t;
}

} // namespace

bool task_info::terminal() const noexcept {
    return status == "completed" || status == "failed" || status == "cancelled";
}

std::optional<task_info> task_in(json::object const& result) {
    if (auto const* rt = result.if_contains("resultType");
        rt && rt->is_string() && rt->get_string() == "task")
        return task_from(result);
    if (auto const* t = result.if_contains("task"); t && t->is_object() && !result.contains("content"))
        return task_from(t->get_object());
    return std::nullopt;
}

awaitable<result<task_info>> client::impl::async_get_task(std::string const& id,
                                                          request_options const& options) {
    json::object params{{"taskId", id}};
    auto r = co_await async_plain(method_id::tasks_get, params, options);
    if (!r)
        co_return r.error();
    r->erase("resultType");
    auto t = task_from(*r);
    if (!t)
        co_return make_error(errc::protocol_violation,
                             "tasks/get answered no task: " + jsonrpc::to_json_text(*r));
    co_return std::move(*t);
}

awaitable<result<task_info>> client::async_get_task(std::string id, request_options options) {
    auto t = co_await impl_->async_get_task(id, options);
    co_return t;
}

awaitable<result<json::object>> client::async_task_result(std::string id, request_options options) {
    auto t = co_await impl_->async_get_task(id, options);
    if (!t)
        co_return t.error();
    auto r = co_await impl_->async_follow_task(std::move(*t), options);
    co_return r;
}

awaitable<result<void>> client::async_cancel_task(std::string id, request_options options) {
    json::object params{{"taskId", std::move(id)}};
    auto r = co_await impl_->async_plain(method_id::tasks_cancel, params, options);
    if (!r)
        co_return r.error();
    co_return result<void>();
}

awaitable<result<json::object>> client::impl::async_follow_task(task_info task,
                                                                request_options const& options) {
    bool const modern = era_ == protocol::era::modern;
    std::set<std::string> answered; // inputRequests keys answered: a later poll may still show them
    request_options poll; // each poll is a request of its own, with the caller's cancel and handlers
    poll.cancel = options.cancel;
    poll.on_input = options.on_input;
    poll.trace = options.trace;
    // A 2025-11-25 task's questions arrive as requests naming the task: they go to this caller's on_input.
    std::shared_ptr<void> routed;
    if (!modern && options.on_input) {
        task_inputs_[task.id] = options.on_input;
        routed = std::shared_ptr<void>(
            nullptr, [self = shared_from_this(), id = task.id](void*) { self->task_inputs_.erase(id); });
    }
    asio::steady_timer pause(ex_);
    auto const stop_on_cancel =
        options.cancel ? options.cancel->on_cancel([&pause] { pause.cancel(); }) : std::shared_ptr<void>();
    for (;;) {
        if (options.on_task)
            options.on_task(task);
        if (options.cancel && options.cancel->cancelled()) {
            // Cancelling the wait cancels the task: nobody would fetch its result.
            json::object params{{"taskId", task.id}};
            request_options once;
            [[maybe_unused]] auto acked = co_await async_plain(method_id::tasks_cancel, params, once);
            co_return make_error(errc::cancelled, "cancelled; tasks/cancel sent for task " + task.id);
        }
        if (task.terminal()) {
            if (!modern) {
                json::object params{{"taskId", task.id}};
                auto r = co_await async_plain(method_id::tasks_result, params, poll);
                // The related-task key tied the result to its task on the wire; the caller has the result.
                if (r)
                    if (auto* meta = r->if_contains("_meta"); meta && meta->is_object()) {
                        meta->get_object().erase(protocol::related_task_key);
                        if (meta->get_object().empty())
                            r->erase("_meta");
                    }
                co_return r;
            }
            if (task.status == "completed") {
                auto const* r = task.task.if_contains("result");
                if (!r || !r->is_object())
                    co_return make_error(errc::protocol_violation,
                                         "completed task " + task.id + " has no result");
                co_return r->get_object();
            }
            if (task.status == "failed") {
                auto const* e = task.task.if_contains("error");
                auto const* eo = e ? e->if_object() : nullptr;
                if (!eo || !eo->contains("code") || !eo->at("code").is_int64())
                    co_return make_error(errc::protocol_violation,
                                         "failed task " + task.id + " has no error");
                jsonrpc::error_object err{static_cast<std::int32_t>(eo->at("code").get_int64()),
                                          string_at(*eo, "message"),
                                          eo->contains("data") ? eo->at("data") : nullptr};
                co_return rpc_failure(std::move(err));
            }
            co_return make_error(errc::cancelled,
                                 "task " + task.id + " was cancelled" +
                                     (task.status_message.empty() ? "" : ": " + task.status_message));
        }
        if (modern && task.status == "input_required") {
            json::object unanswered;
            if (auto const* requests = task.task.if_contains("inputRequests");
                requests && requests->is_object())
                for (auto const& kv : requests->get_object())
                    if (!answered.contains(std::string(kv.key())))
                        unanswered.emplace(kv.key(), kv.value());
            if (!unanswered.empty()) {
                auto responses = co_await async_answer_inputs(unanswered, options);
                if (!responses)
                    co_return responses.error();
                for (auto const& kv : *responses)
                    answered.insert(std::string(kv.key()));
                json::object params{{"taskId", task.id}, {"inputResponses", std::move(*responses)}};
                auto acked = co_await async_plain(method_id::tasks_update, params, poll);
                if (!acked && acked.error().code == errc::cancelled)
                    continue; // the top of the loop cancels the task
                if (!acked)
                    co_return acked.error();
                // Answered: look again at once rather than after a whole interval.
                auto again = co_await async_get_task(task.id, poll);
                if (!again && again.error().code == errc::cancelled)
                    continue;
                if (!again)
                    co_return again.error();
                task = std::move(*again);
                continue;
            }
        }
        pause.expires_after(
            std::clamp(task.poll_interval.value_or(default_poll), fastest_poll, slowest_poll));
        co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
        if (options.cancel && options.cancel->cancelled())
            continue; // the top of the loop cancels the task
        auto next = co_await async_get_task(task.id, poll);
        if (!next) {
            if (next.error().code == errc::cancelled)
                continue;
            co_return next.error();
        }
        task = std::move(*next);
    }
}

} // namespace duet::client
