// The tasks/* requests (tasks/get, update, cancel in the extension; tasks/get, result, list, cancel in
// 2025-11-25), answered from the task store for the caller who owns the task.
#include <duet/protocol/errors.hpp>

#include "task_registry.hpp"
#include "task_store_calls.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace duet::server::detail {

namespace asio = boost::asio;
using protocol::task_status;

boost::asio::awaitable<answer_result> task_registry::async_answer(protocol::method_id method,
                                                                  boost::json::value params,
                                                                  std::string owner, protocol::era era) {
    using protocol::method_id;
    owner = scoped(owner);
    if (method == method_id::tasks_list)
        co_return co_await async_list(std::move(params), std::move(owner));
    auto read = protocol::task_id_param(params);
    if (!read)
        co_return read.error();
    std::string id(*read);
    switch (method) {
    case method_id::tasks_get:
        co_return co_await async_get(std::move(id), std::move(owner), era);
    case method_id::tasks_update:
        co_return co_await async_update(std::move(id), std::move(params), std::move(owner));
    case method_id::tasks_cancel:
        co_return co_await async_cancel(std::move(id), std::move(owner), era);
    case method_id::tasks_result:
        co_return co_await async_result(std::move(id), std::move(owner));
    default:
        co_return protocol::method_not_found(protocol::info(method).name, "not a tasks method");
    }
}

std::string modern_task_owner(protocol::caller_identity const* c) {
    if (c && c->token)
        return "token:" + c->token->issuer + " " +
               (c->token->subject.empty() ? "client " + c->token->client_id : c->token->subject);
    if (c && !c->tls_subject.empty())
        return "tls:" + c->tls_subject;
    return {};
}

boost::json::object detailed_task(task_entry const& e) {
    auto task = protocol::task_json(e.view, protocol::era::modern);
    switch (e.view.status) {
    case task_status::input_required:
        task["inputRequests"] = e.input_requests;
        break;
    case task_status::completed:
        task["result"] = e.result.value_or(boost::json::object{});
        break;
    case task_status::failed:
        if (e.error) {
            boost::json::object error{{"code", e.error->code}, {"message", e.error->message}};
            if (!e.error->data.is_null())
                error["data"] = e.error->data;
            task["error"] = std::move(error);
        }
        break;
    default:
        break;
    }
    return task;
}

boost::asio::awaitable<answer_result> task_registry::async_get(std::string id, std::string owner,
                                                               protocol::era era) {
    auto e = co_await async_find(id, std::move(owner));
    if (!e)
        co_return e.error();
    if (!*e)
        co_return task_not_found(id);
    if (era == protocol::era::modern)
        co_return method_answer{detailed_task(**e), {}};
    co_return method_answer{protocol::task_json((*e)->view, era), {}};
}

boost::asio::awaitable<answer_result> task_registry::async_update(std::string id, boost::json::value params,
                                                                  std::string owner) {
    auto const* responses = params.get_object().if_contains("inputResponses");
    if (!responses || !responses->is_object())
        co_return protocol::invalid_params("Invalid params: inputResponses must be an object");
    auto found = co_await async_find(id, owner);
    if (!found)
        co_return found.error();
    if (!*found)
        co_return task_not_found(id);
    // Answers to what the task asks now are taken; any other key is ignored (SEP-2663 §Task Update
    // Requests). A malformed answer refuses the whole update, so nothing is half applied.
    boost::json::object taken;
    std::optional<protocol::error_object> refused;
    auto const& given = responses->get_object();
    std::function<bool(task_entry&)> const take_answers = [&given, &taken, &refused](task_entry& t) {
        taken.clear(); // the change may be tried again on a fresher record
        refused.reset();
        for (auto const& kv : given) {
            auto const* asked = t.input_requests.if_contains(kv.key());
            if (!asked)
                continue;
            auto const& method = asked->as_object().at("method").as_string();
            if (!protocol::well_formed_input_response(method, kv.value())) {
                refused =
                    protocol::invalid_params("Invalid params: inputResponses[\"" + std::string(kv.key()) +
                                                 "\"] is not a valid result of " + std::string(method),
                                             boost::json::object{{"key", kv.key()}});
                return false;
            }
            taken[kv.key()] = kv.value();
        }
        if (taken.empty())
            return false;
        for (auto const& kv : taken) {
            t.input_requests.erase(kv.key());
            t.answers[kv.key()] = kv.value();
        }
        if (t.input_requests.empty())
            t.view.status = task_status::working;
        return true;
    };
    auto e = co_await async_change(id, take_answers);
    if (refused)
        co_return *refused;
    if (!e)
        co_return e.error();
    if (*e) {
        if (auto link = running(id))
            link->deliver(taken);
        else
            announce_answers(id, taken); // the process running the handler hears them
        changed(**e);
    }
    co_return method_answer{};
}

boost::asio::awaitable<answer_result> task_registry::async_cancel(std::string id, std::string owner,
                                                                  protocol::era era) {
    auto e = co_await async_find(id, owner);
    if (!e)
        co_return e.error();
    if (!*e)
        co_return task_not_found(id);
    if (protocol::is_terminal((*e)->view.status)) {
        if (auto link = running(id); link && (*e)->view.status == task_status::cancelled)
            link->cancel(); // cancelled elsewhere, and this process had not heard
        // The extension acknowledges any known task (idempotent); 2025-11-25 refuses a finished one.
        if (era == protocol::era::modern)
            co_return method_answer{};
        co_return protocol::invalid_params("Invalid params: task \"" + id + "\" is already " +
                                           std::string(protocol::to_string((*e)->view.status)) +
                                           " and cannot be cancelled");
    }
    std::function<bool(task_entry&)> const mark_cancelled = [](task_entry& t) {
        t.view.status = task_status::cancelled;
        t.view.status_message = "The task was cancelled by request.";
        t.input_requests.clear();
        t.answers.clear();
        return true;
    };
    auto after = co_await async_change(id, mark_cancelled);
    if (!after)
        co_return after.error();
    if (auto link = running(id))
        link->cancel(); // elsewhere, the process running it hears the cancellation (apply)
    std::optional<task_entry> now;
    if (*after) {
        now = std::move(**after);
        changed(*now);
    } else { // it ended between the two looks: what it ended as stands
        auto again = co_await async_find(id, owner);
        if (again && *again)
            now = std::move(**again);
    }
    if (era == protocol::era::modern || !now)
        co_return method_answer{};
    co_return method_answer{protocol::task_json(now->view, era), {}};
}

boost::asio::awaitable<answer_result> task_registry::async_list(boost::json::value params,
                                                                std::string owner) {
    std::string after;
    if (auto const* c = params.get_object().if_contains("cursor"); c && !c->is_null()) {
        if (!c->is_string())
            co_return protocol::invalid_params("Invalid params: cursor must be a string");
        after = c->get_string();
        bool const ours = after.size() == 32 && std::all_of(after.begin(), after.end(), [](char ch) {
                              return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
                          });
        if (!after.empty() && !ours)
            co_return protocol::invalid_params("Invalid params: invalid cursor",
                                               boost::json::object{{"cursor", after}});
    }
    auto const target = store_;
    auto const limit = options_.page_size;
    store_call<store::task_store::page> const list = [target, owner, after, limit](auto done) {
        target->list(owner, after, limit, std::move(done));
    };
    auto page = co_await async_store(list);
    if (!page)
        co_return task_store_failed(page.error());
    boost::json::array out;
    for (auto const& r : page->records) {
        auto t = from_record(r);
        if (t && t->orphaned) { // fails now, as a tasks/get of it would
            auto const id = r.id;
            auto fresh = co_await async_find(id, owner);
            if (fresh && *fresh)
                t = std::move(**fresh);
        }
        if (t)
            out.push_back(protocol::task_json(t->view, protocol::era::legacy));
    }
    boost::json::object result{{"tasks", std::move(out)}};
    if (page->more && !page->records.empty())
        result["nextCursor"] = page->records.back().id; // ids are opaque and ordered: the last one shown
    co_return method_answer{std::move(result), {}};
}

std::optional<answer_result> task_registry::finished(task_entry const& e) const {
    if (!protocol::is_terminal(e.view.status))
        return std::nullopt;
    if (e.error)
        return *e.error;
    if (!e.result)
        return protocol::invalid_params("Invalid params: task \"" + e.view.id +
                                        "\" was cancelled; it has no result");
    auto result = *e.result;
    auto& meta = result["_meta"];
    if (!meta.is_object())
        meta = boost::json::object{};
    meta.get_object()[protocol::related_task_key] = boost::json::object{{"taskId", e.view.id}};
    return method_answer{std::move(result), {}};
}

boost::asio::awaitable<answer_result> task_registry::async_result(std::string id, std::string owner) {
    auto wake = std::make_shared<wake_signal>(co_await asio::this_coro::executor);
    {
        std::lock_guard lock(mutex_);
        result_waiters_.emplace(id, wake);
    }
    answer_result outcome = protocol::internal_error();
    for (;;) {
        auto e = co_await async_find(id, owner);
        if (!e) {
            outcome = e.error();
            break;
        }
        if (!*e) {
            outcome = task_not_found(id);
            break;
        }
        if (auto done = finished(**e)) {
            outcome = std::move(*done);
            break;
        }
        // A wake lost between the look and the wait, or an expiry, is caught by the next look.
        (void)co_await wake->async_wait_for(task_recheck_every);
    }
    {
        std::lock_guard lock(mutex_);
        auto [first, last] = result_waiters_.equal_range(id);
        for (auto it = first; it != last;)
            it =
                it->second.expired() || it->second.lock() == wake ? result_waiters_.erase(it) : std::next(it);
    }
    co_return outcome;
}

} // namespace duet::server::detail
