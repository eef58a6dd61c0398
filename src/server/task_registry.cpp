#include "task_registry.hpp"

#include <duet/protocol/errors.hpp>
#include <duet/protocol/shaping.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace duet::server::detail {

namespace asio = boost::asio;
using protocol::task_status;
using clock = std::chrono::system_clock;

// How long a waiter sleeps at most before it looks again (named: no temporary goes to a coroutine).
constexpr std::chrono::steady_clock::duration recheck_every = std::chrono::seconds(1);

boost::asio::awaitable<bool> wake_signal::async_wait_for(std::chrono::steady_clock::duration timeout) {
    using namespace asio::experimental::awaitable_operators;
    asio::steady_timer timer(co_await asio::this_coro::executor, timeout);
    auto woken = co_await (channel_.async_receive(asio::as_tuple(asio::use_awaitable)) ||
                           timer.async_wait(asio::as_tuple(asio::use_awaitable)));
    co_return woken.index() == 0;
}

// ---- task_link
// ---------------------------------------------------------------------------------------------

task_link::task_link(std::shared_ptr<task_registry> registry, task_plan plan, protocol::era era,
                     protocol::version version, std::weak_ptr<request_state> state,
                     boost::asio::any_io_executor dispatcher)
    : registry_(std::move(registry)), plan_(std::move(plan)), era_(era), version_(version),
      state_(std::move(state)), dispatcher_wake_(std::move(dispatcher)) {}

boost::system::result<void, jsonrpc::error_object> task_link::promote() {
    // The lock is held while the task is made (registry and store locks nest inside it, never around it), so
    // the handler cannot end between the check and the promotion; the task exists before the request is
    // answered with it, so a tasks/get right after finds it (SEP-2663 §Task Creation).
    std::lock_guard lock(mutex_);
    if (phase_ != phase::request)
        return {};
    if (auto st = state_.lock(); st && st->cancelled.load())
        return {}; // its request was cancelled: nobody will hear of the task
    auto made = registry_->create(shared_from_this(), plan_, era_, version_);
    if (!made)
        return made.error();
    phase_ = phase::task;
    created_ = made->view;
    if (auto st = state_.lock(); st && era_ == protocol::era::legacy)
        st->detached = true; // its messages now go on the session's own stream
    return {};
}

std::optional<protocol::task_view> task_link::created() const {
    std::lock_guard lock(mutex_);
    return created_;
}

std::optional<answer_result> task_link::take_outcome() {
    std::lock_guard lock(mutex_);
    if (phase_ != phase::answering || !outcome_)
        return std::nullopt;
    auto out = std::move(outcome_);
    outcome_.reset();
    return out;
}

void task_link::start(boost::asio::any_io_executor handler) {
    std::lock_guard lock(mutex_);
    input_wake_ = std::make_shared<wake_signal>(std::move(handler));
}

void task_link::finish(answer_result outcome) {
    std::unique_lock lock(mutex_);
    if (phase_ != phase::task) {
        phase_ = phase::answering;
        outcome_ = std::move(outcome);
        lock.unlock();
        dispatcher_wake_.notify();
        return;
    }
    auto const id = created_->id;
    lock.unlock();
    registry_->complete(id, std::move(outcome));
}

std::optional<std::string> task_link::task_id() const {
    std::lock_guard lock(mutex_);
    if (!created_)
        return std::nullopt;
    return created_->id;
}

bool task_link::commit_to_rounds() {
    std::lock_guard lock(mutex_);
    if (phase_ == phase::task)
        return false;
    phase_ = phase::answering;
    return true;
}

boost::asio::awaitable<std::vector<peer_result>>
task_link::async_task_inputs(std::vector<input_request> requests, boost::json::object const& client_caps) {
    std::vector<peer_result> results(
        requests.size(), peer_failure{make_error_code(peer_errc::connection_closed), std::nullopt});
    boost::json::object questions;
    std::vector<std::size_t> waiting;
    auto const id = task_id().value_or("");
    {
        std::lock_guard lock(mutex_);
        for (std::size_t i = 0; i < requests.size(); ++i) {
            auto& r = requests[i];
            if (auto c = protocol::capability_needed(r.method, r.params);
                c && !protocol::declares(client_caps, *c)) {
                results[i] = peer_failure{make_error_code(peer_errc::capability_missing), std::nullopt};
                continue;
            }
            if (auto const* answer = answers_.if_contains(r.key)) {
                results[i] = *answer;
                continue;
            }
            boost::json::object ask{{"method", r.method}};
            if (!r.params.is_null())
                ask["params"] = r.params;
            questions[r.key] = std::move(ask);
            waiting.push_back(i);
        }
    }
    if (waiting.empty())
        co_return results;
    registry_->ask(id, questions);
    for (;;) {
        std::shared_ptr<wake_signal> wake;
        {
            std::lock_guard lock(mutex_);
            bool const all = std::all_of(waiting.begin(), waiting.end(),
                                         [&](std::size_t i) { return answers_.contains(requests[i].key); });
            if (all || cancelled_) {
                for (auto i : waiting)
                    if (auto const* answer = answers_.if_contains(requests[i].key))
                        results[i] = *answer;
                break;
            }
            wake = input_wake_;
        }
        // A wake may be missed only by a change that lands between the check and the wait: the second's
        // timeout bounds that, as it bounds a task that expired while waiting.
        (void)co_await wake->async_wait_for(recheck_every);
    }
    co_return results;
}

void task_link::note_status(std::string message) {
    if (auto id = task_id())
        registry_->set_message(*id, std::move(message));
}

void task_link::note_waiting_for_client(bool waiting) {
    if (auto id = task_id())
        registry_->move(*id, waiting ? task_status::input_required : task_status::working);
}

void task_link::deliver(boost::json::object const& answers) {
    std::shared_ptr<wake_signal> wake;
    {
        std::lock_guard lock(mutex_);
        for (auto const& kv : answers)
            answers_[kv.key()] = kv.value();
        wake = input_wake_;
    }
    if (wake)
        wake->notify();
}

void task_link::cancel() {
    std::shared_ptr<wake_signal> wake;
    {
        std::lock_guard lock(mutex_);
        cancelled_ = true;
        wake = input_wake_;
    }
    if (auto st = state_.lock())
        st->cancelled = true;
    if (wake)
        wake->notify();
}

void task_link::changed(task_entry const& e) {
    if (era_ != protocol::era::legacy)
        return;
    auto st = state_.lock();
    auto host = st ? st->host.lock() : nullptr;
    if (!host)
        return;
    // The status notification goes even after the handler saw a cancellation: it reports exactly that.
    bool const was_cancelled = st->cancelled.exchange(false);
    host->notify(*st, jsonrpc::notification{"notifications/tasks/status", protocol::task_json(e.view, era_)});
    if (was_cancelled)
        st->cancelled = true;
}

// ---- task_registry
// -----------------------------------------------------------------------------------------

namespace {

protocol::error_object not_found(std::string_view id) {
    return protocol::invalid_params("Invalid params: no task \"" + std::string(id) +
                                    "\" (it never existed, belongs to another caller, or has expired)");
}

} // namespace

boost::system::result<task_entry, jsonrpc::error_object>
task_registry::create(std::shared_ptr<task_link> const& link, task_plan const& plan, protocol::era era,
                      protocol::version version) {
    sweep();
    auto ttl = plan.ttl.value_or(options_.ttl);
    ttl = std::clamp(ttl, std::chrono::milliseconds(1000), options_.max_ttl);
    auto made = store_.create(plan.owner, era, version, ttl, options_.poll_interval, clock::now());
    if (made && link) {
        std::lock_guard lock(mutex_);
        running_[made->view.id] = link;
    }
    return made;
}

std::shared_ptr<task_link> task_registry::running(std::string const& id) {
    std::lock_guard lock(mutex_);
    auto it = running_.find(id);
    if (it == running_.end())
        return nullptr;
    auto link = it->second.lock();
    if (!link)
        running_.erase(it);
    return link;
}

void task_registry::changed(task_entry const& e) {
    if (auto link = running(e.view.id))
        link->changed(e);
    if (e.era == protocol::era::modern) {
        std::vector<std::shared_ptr<task_watcher>> watching;
        {
            std::lock_guard lock(mutex_);
            auto [first, last] = watchers_.equal_range(e.view.id);
            for (auto it = first; it != last;) {
                if (auto w = it->second.lock()) {
                    watching.push_back(std::move(w));
                    ++it;
                } else {
                    it = watchers_.erase(it);
                }
            }
        }
        if (!watching.empty()) {
            auto const detailed = detailed_task(e);
            for (auto const& w : watching)
                (*w)(detailed);
        }
    }
    if (!protocol::is_terminal(e.view.status))
        return;
    std::vector<std::shared_ptr<wake_signal>> waiting;
    {
        std::lock_guard lock(mutex_);
        auto [first, last] = result_waiters_.equal_range(e.view.id);
        for (auto it = first; it != last; ++it)
            if (auto w = it->second.lock())
                waiting.push_back(std::move(w));
    }
    for (auto& w : waiting)
        w->notify();
}

void task_registry::complete(std::string const& id, answer_result outcome) {
    auto changed_entry = store_.update(id, clock::now(), [&](task_entry& e) {
        if (!outcome) {
            e.view.status = task_status::failed;
            e.error = outcome.error();
            if (e.view.status_message.empty())
                e.view.status_message = outcome.error().message;
        } else {
            auto result = std::move(outcome->result);
            auto const* rt = result.if_contains("resultType");
            if (rt && rt->is_string() && rt->get_string() != "complete") {
                // Only a run that ended as a request can end in input_required; a task never does.
                e.view.status = task_status::failed;
                e.error = protocol::internal_error();
            } else {
                protocol::shape_result(
                    result, {.era = e.era, .version = e.version, .method = protocol::method_id::tools_call});
                // A 2025-11-25 source's related-task key (a gateway's upstream) is no part of the result: the
                // extension forbids it inline, and tasks/result adds this task's own.
                if (auto* meta = result.if_contains("_meta"); meta && meta->is_object()) {
                    meta->get_object().erase(protocol::related_task_key);
                    if (meta->get_object().empty())
                        result.erase("_meta");
                }
                auto const* is_error = result.if_contains("isError");
                bool const tool_error = is_error && is_error->is_bool() && is_error->get_bool();
                // A tool error is a completed task in the extension, a failed one in 2025-11-25 (whose
                // tasks/result still returns the result).
                e.view.status = tool_error && e.era == protocol::era::legacy ? task_status::failed
                                                                             : task_status::completed;
                e.view.status_message.clear(); // the last progress note says nothing of the outcome
                e.result = std::move(result);
            }
        }
        e.input_requests.clear();
        return true;
    });
    if (changed_entry)
        changed(*changed_entry); // while the link is still found: a 2025-11-25 session hears the end
    std::lock_guard lock(mutex_);
    running_.erase(id);
}

void task_registry::move(std::string const& id, protocol::task_status to) {
    if (auto e = store_.move(id, to, clock::now()))
        changed(*e);
}

void task_registry::set_message(std::string const& id, std::string message) {
    auto e = store_.update(id, clock::now(), [&](task_entry& t) {
        if (t.view.status_message == message)
            return false;
        t.view.status_message = std::move(message);
        return true;
    });
    if (e)
        changed(*e);
}

void task_registry::ask(std::string const& id, boost::json::object const& questions) {
    auto e = store_.update(id, clock::now(), [&](task_entry& t) {
        for (auto const& kv : questions)
            t.input_requests[kv.key()] = kv.value();
        t.view.status = task_status::input_required;
        return true;
    });
    if (e)
        changed(*e);
}

std::optional<answer_result> task_registry::answer(protocol::method_id method,
                                                   boost::json::value const& params, std::string const& owner,
                                                   protocol::era era) {
    using protocol::method_id;
    if (method == method_id::tasks_list)
        return list(params, owner);
    auto id = protocol::task_id_param(params);
    if (!id)
        return id.error();
    switch (method) {
    case method_id::tasks_get:
        return get(*id, owner, era);
    case method_id::tasks_update:
        return update(*id, params, owner);
    case method_id::tasks_cancel:
        return cancel(*id, owner, era);
    case method_id::tasks_result: {
        auto e = store_.find(*id, owner, clock::now());
        if (!e)
            return not_found(*id);
        return finished(*e);
    }
    default:
        return protocol::method_not_found(protocol::info(method).name, "not a tasks method");
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

answer_result task_registry::get(std::string_view id, std::string const& owner, protocol::era era) {
    auto e = store_.find(id, owner, clock::now());
    if (!e)
        return not_found(id);
    if (era == protocol::era::modern)
        return method_answer{detailed_task(*e), {}};
    return method_answer{protocol::task_json(e->view, era), {}};
}

std::shared_ptr<void> task_registry::watch(std::string const& id, task_watcher w) {
    auto held = std::make_shared<task_watcher>(std::move(w));
    std::lock_guard lock(mutex_);
    watchers_.emplace(id, held);
    return held;
}

answer_result task_registry::update(std::string_view id, boost::json::value const& params,
                                    std::string const& owner) {
    auto const* responses = params.get_object().if_contains("inputResponses");
    if (!responses || !responses->is_object())
        return protocol::invalid_params("Invalid params: inputResponses must be an object");
    if (!store_.find(id, owner, clock::now()))
        return not_found(id);
    // Answers to what the task asks now are taken; any other key is ignored (SEP-2663 §Task Update
    // Requests). A malformed answer refuses the whole update, so nothing is half applied.
    boost::json::object taken;
    std::optional<protocol::error_object> refused;
    auto e = store_.update(id, clock::now(), [&](task_entry& t) {
        for (auto const& kv : responses->get_object()) {
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
        for (auto const& kv : taken)
            t.input_requests.erase(kv.key());
        if (t.input_requests.empty())
            t.view.status = task_status::working;
        return true;
    });
    if (refused)
        return *refused;
    if (e) {
        if (auto link = running(std::string(id)))
            link->deliver(taken);
        changed(*e);
    }
    return method_answer{};
}

answer_result task_registry::cancel(std::string_view id, std::string const& owner, protocol::era era) {
    auto e = store_.find(id, owner, clock::now());
    if (!e)
        return not_found(id);
    if (protocol::is_terminal(e->view.status)) {
        // The extension acknowledges any known task (idempotent); 2025-11-25 refuses a finished one.
        if (era == protocol::era::modern)
            return method_answer{};
        return protocol::invalid_params("Invalid params: task \"" + std::string(id) + "\" is already " +
                                        std::string(protocol::to_string(e->view.status)) +
                                        " and cannot be cancelled");
    }
    auto after = store_.update(id, clock::now(), [](task_entry& t) {
        t.view.status = task_status::cancelled;
        t.view.status_message = "The task was cancelled by request.";
        t.input_requests.clear();
        return true;
    });
    if (auto link = running(std::string(id)))
        link->cancel();
    if (!after) // it ended between the two looks: what it ended as stands
        after = store_.find(id, owner, clock::now());
    if (after)
        changed(*after);
    if (era == protocol::era::modern || !after)
        return method_answer{};
    return method_answer{protocol::task_json(after->view, era), {}};
}

answer_result task_registry::list(boost::json::value const& params, std::string const& owner) {
    std::string after;
    if (auto const* c = params.get_object().if_contains("cursor"); c && !c->is_null()) {
        if (!c->is_string())
            return protocol::invalid_params("Invalid params: cursor must be a string");
        after = c->get_string();
        bool const ours = after.size() == 32 && std::all_of(after.begin(), after.end(), [](char ch) {
                              return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
                          });
        if (!after.empty() && !ours)
            return protocol::invalid_params("Invalid params: invalid cursor",
                                            boost::json::object{{"cursor", after}});
    }
    auto [tasks, more] = store_.list(owner, after, options_.page_size, clock::now());
    boost::json::array out;
    for (auto const& t : tasks)
        out.push_back(protocol::task_json(t.view, protocol::era::legacy));
    boost::json::object result{{"tasks", std::move(out)}};
    if (more && !tasks.empty())
        result["nextCursor"] = tasks.back().view.id; // ids are opaque and ordered: the last one shown
    return method_answer{std::move(result), {}};
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
        auto e = store_.find(id, owner, clock::now());
        if (!e) {
            outcome = not_found(id);
            break;
        }
        if (auto done = finished(*e)) {
            outcome = std::move(*done);
            break;
        }
        // A wake lost between the look and the wait, or an expiry, is caught by the next look.
        (void)co_await wake->async_wait_for(recheck_every);
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

void task_registry::sweep() {
    auto const now = std::chrono::steady_clock::now();
    {
        std::lock_guard lock(mutex_);
        if (now - swept_ < std::chrono::seconds(1))
            return;
        swept_ = now;
    }
    for (auto const& id : store_.sweep(clock::now())) {
        if (auto link = running(id))
            link->cancel();
        std::lock_guard lock(mutex_);
        running_.erase(id);
        watchers_.erase(id);
    }
}

} // namespace duet::server::detail
