// The handler's and the dispatcher's side of a call that may become a task (task_link.hpp).
#include "task_link.hpp"

#include <duet/protocol/errors.hpp>

#include "task_registry.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace duet::server::detail {

namespace asio = boost::asio;
using protocol::task_status;

// How often a second promotion looks whether the first has settled (a store round trip or two).
constexpr std::chrono::milliseconds promotion_settling{5};

boost::asio::awaitable<bool> wake_signal::async_wait_for(std::chrono::steady_clock::duration timeout) {
    using namespace asio::experimental::awaitable_operators;
    asio::steady_timer timer(co_await asio::this_coro::executor, timeout);
    auto woken = co_await (channel_.async_receive(asio::as_tuple(asio::use_awaitable)) ||
                           timer.async_wait(asio::as_tuple(asio::use_awaitable)));
    co_return woken.index() == 0;
}

task_link::task_link(std::shared_ptr<task_registry> registry, task_plan plan, protocol::era era,
                     protocol::version version, std::weak_ptr<request_state> state,
                     boost::asio::any_io_executor dispatcher)
    : registry_(std::move(registry)), plan_(std::move(plan)), era_(era), version_(version),
      state_(std::move(state)), dispatcher_(dispatcher), dispatcher_wake_(std::move(dispatcher)) {}

boost::asio::awaitable<boost::system::result<void, jsonrpc::error_object>> task_link::async_promote() {
    for (;;) { // the other side (dispatcher, handler) making it a task settles it for both
        {
            std::lock_guard lock(mutex_);
            if (phase_ != phase::promoting)
                break;
        }
        asio::steady_timer pause(co_await asio::this_coro::executor, promotion_settling);
        co_await pause.async_wait(asio::use_awaitable);
    }
    {
        std::lock_guard lock(mutex_);
        if (phase_ != phase::request)
            co_return boost::system::result<void, jsonrpc::error_object>{};
        if (auto st = state_.lock(); st && st->cancelled.load())
            co_return boost::system::result<void, jsonrpc::error_object>{}; // nobody will hear of the task
        phase_ = phase::promoting; // the handler's end, or its rounds, wait for the outcome
    }
    // The task exists in the store before the request is answered with it, so a tasks/get right after
    // finds it (SEP-2663 §Task Creation).
    auto self = shared_from_this();
    auto made = co_await registry_->async_create(self, plan_, era_, version_);
    std::shared_ptr<wake_signal> wake;
    std::optional<answer_result> ended;
    {
        std::lock_guard lock(mutex_);
        wake = input_wake_;
        if (made) {
            phase_ = phase::task;
            created_ = made->view;
            if (auto st = state_.lock(); st && era_ == protocol::era::legacy)
                st->detached = true; // its messages now go on the session's own stream
            if (outcome_) {          // the handler ended meanwhile: the task stores its outcome
                ended = std::move(outcome_);
                outcome_.reset();
            }
        } else {
            phase_ = outcome_ ? phase::answering : phase::request;
        }
    }
    if (ended)
        write({.what = task_write::kind::complete, .outcome = std::move(ended)});
    if (!made || ended)
        dispatcher_wake_.notify();
    if (wake)
        wake->notify(); // a handler waiting to commit to its rounds
    if (!made)
        co_return made.error();
    co_return boost::system::result<void, jsonrpc::error_object>{};
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
    switch (phase_) {
    case phase::task:
        lock.unlock();
        write({.what = task_write::kind::complete, .outcome = std::move(outcome)});
        return;
    case phase::promoting:
        outcome_ = std::move(outcome); // async_promote settles where it goes
        return;
    case phase::request:
    case phase::answering:
        phase_ = phase::answering;
        outcome_ = std::move(outcome);
        lock.unlock();
        dispatcher_wake_.notify();
        return;
    }
}

std::optional<std::string> task_link::task_id() const {
    std::lock_guard lock(mutex_);
    if (!created_)
        return std::nullopt;
    return created_->id;
}

boost::asio::awaitable<bool> task_link::async_commit_to_rounds() {
    for (;;) {
        std::shared_ptr<wake_signal> wake;
        {
            std::lock_guard lock(mutex_);
            if (phase_ == phase::task)
                co_return false;
            if (phase_ != phase::promoting) {
                phase_ = phase::answering;
                co_return true;
            }
            wake = input_wake_;
        }
        if (!wake)
            wake = std::make_shared<wake_signal>(co_await asio::this_coro::executor);
        (void)co_await wake->async_wait_for(task_recheck_every);
    }
}

boost::asio::awaitable<std::vector<peer_result>>
task_link::async_task_inputs(std::vector<input_request> requests, boost::json::object const& client_caps) {
    std::vector<peer_result> results(
        requests.size(), peer_failure{make_error_code(peer_errc::connection_closed), std::nullopt});
    boost::json::object questions;
    std::vector<std::size_t> waiting;
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
    write({.what = task_write::kind::ask, .questions = std::move(questions)});
    auto const id = task_id().value_or("");
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
        // timeout bounds that, as it bounds a task that expired while waiting. Answers another process took
        // are announced; should the announcement miss this one, the task's record has them.
        bool const woken = co_await wake->async_wait_for(task_recheck_every);
        if (!woken && registry_->shared()) {
            auto const stored = co_await registry_->async_stored_answers(id);
            if (!stored)
                cancel(); // cancelled elsewhere, or expired: nothing will answer
            else if (!stored->empty())
                deliver(*stored);
        }
    }
    co_return results;
}

void task_link::note_status(std::string message) {
    if (task_id())
        write({.what = task_write::kind::message, .message = std::move(message)});
}

void task_link::note_waiting_for_client(bool waiting) {
    if (task_id())
        write({.what = task_write::kind::status,
               .status = waiting ? task_status::input_required : task_status::working});
}

void task_link::write(task_write w) {
    {
        std::lock_guard lock(mutex_);
        writes_.push_back(std::move(w));
        if (writing_)
            return;
        writing_ = true;
    }
    // The request's state lives until its writes are done: a 2025-11-25 session hears the last of them
    // through it, though the handler has ended.
    auto self = shared_from_this();
    auto state = state_.lock();
    asio::co_spawn(dispatcher_, async_write_all(std::move(self), std::move(state)), asio::detached);
}

boost::asio::awaitable<void> task_link::async_write_all(std::shared_ptr<task_link> self,
                                                        std::shared_ptr<request_state> /*kept alive*/) {
    auto const id = self->task_id().value_or("");
    for (;;) {
        std::optional<task_write> next;
        {
            std::lock_guard lock(self->mutex_);
            if (self->writes_.empty()) {
                self->writing_ = false;
                break;
            }
            next = std::move(self->writes_.front());
            self->writes_.pop_front();
        }
        auto& w = *next;
        switch (w.what) {
        case task_write::kind::message:
            co_await self->registry_->async_set_message(id, std::move(w.message));
            break;
        case task_write::kind::status:
            co_await self->registry_->async_move(id, w.status);
            break;
        case task_write::kind::ask:
            co_await self->registry_->async_ask(id, std::move(w.questions));
            break;
        case task_write::kind::complete:
            co_await self->registry_->async_complete(id, std::move(*w.outcome));
            break;
        }
    }
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

} // namespace duet::server::detail
