// One forwarded request between its upstream coroutine and the downstream handler (forwarded_call.hpp).
#include "forwarded_call.hpp"

#include <duet/protocol/errors.hpp>
#include <duet/protocol/input_key.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cstdio>
#include <random>

namespace duet::gateway::detail {

namespace asio = boost::asio;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

namespace {
// Relayed lines wait for a handler only while a call is parked; a client that never retries must not make
// them pile up.
constexpr std::size_t max_relayed = 256;
// Questions a legacy upstream sends back to back arrive within this window of each other; the handler asks
// them in one round.
constexpr auto settle = std::chrono::milliseconds(30);

client::input_answer ended() {
    return protocol::make_error(protocol::errc::internal_error, "the downstream request ended");
}

std::string random_handle() {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(rng()));
    return buf;
}
} // namespace

forwarded_call::forwarded_call(asio::any_io_executor ex, bool parks) : ex_(std::move(ex)), parks_(parks) {}

forwarded_call::~forwarded_call() {
    if (listed_on_)
        listed_on_->remove(*this);
}

void waiting_calls::add(forwarded_call& c) {
    if (c.listed_on_ == this)
        return;
    if (c.listed_on_)
        c.listed_on_->remove(c);
    c.listed_on_ = this;
    c.list_index_ = calls_.size();
    calls_.push_back(&c);
}

void waiting_calls::remove(forwarded_call& c) {
    if (c.listed_on_ != this)
        return;
    auto const i = c.list_index_;
    calls_[i] = calls_.back();
    calls_[i]->list_index_ = i;
    calls_.pop_back();
    c.listed_on_ = nullptr;
}

void waiting_calls::poke_all() {
    auto const calls = calls_; // each poke leaves the list
    for (auto* c : calls)
        c->poke();
}

std::string const& forwarded_call::handle() {
    if (handle_.empty())
        handle_ = random_handle();
    return handle_;
}

asio::awaitable<client::input_answer> forwarded_call::async_ask(client::input_question q) {
    if (abandoned_)
        co_return ended();
    // The upstream's own key when it named one (a modern round's, or a legacy Duet server's hint), else
    // q1, q2, ... in the order asked: stable across replays of the call either way. A key used before in
    // this call is never reused (its sealed answer would answer a new question).
    ++asked_;
    std::string key = q.key;
    if (key.empty() || used_keys_.contains(key))
        key = "q" + std::to_string(asked_);
    while (used_keys_.contains(key))
        key += "'";
    used_keys_.insert(key);
    if (auto* meta = q.params.if_contains("_meta"); meta && meta->is_object()) {
        meta->get_object().erase(protocol::meta_key::input_key);
        if (meta->get_object().empty())
            q.params.erase("_meta");
    }
    asio::steady_timer wake(ex_);
    pending_.push_back(question{
        .request =
            server::input_request{.key = key, .method = std::move(q.method), .params = std::move(q.params)},
        .answer = std::nullopt,
        .wake = &wake});
    parked_since_ = last_question_at_ = std::chrono::steady_clock::now();
    this->wake();
    auto find = [&] {
        return std::find_if(pending_.begin(), pending_.end(),
                            [&](question const& p) { return p.request.key == key; });
    };
    for (;;) {
        auto it = find();
        if (it == pending_.end() || abandoned_)
            break;
        if (it->answer) {
            auto a = std::move(*it->answer);
            pending_.erase(it);
            co_return a;
        }
        wake.expires_at(asio::steady_timer::time_point::max());
        co_await wake.async_wait(tuple_awaitable);
    }
    if (auto it = find(); it != pending_.end())
        pending_.erase(it);
    co_return ended();
}

void forwarded_call::relay_progress(client::progress_event e) {
    call_step s;
    s.what = call_step::kind::progress;
    s.detail = std::move(e);
    relay(std::move(s));
}

void forwarded_call::relay_log(client::log_event e) {
    call_step s;
    s.what = call_step::kind::log;
    s.detail = std::move(e);
    relay(std::move(s));
}

void forwarded_call::relay_task(std::string status) {
    call_step s;
    s.what = call_step::kind::task;
    client::progress_event note;
    note.message = std::move(status);
    s.detail = std::move(note);
    relay(std::move(s));
}

void forwarded_call::relay(call_step s) {
    if (relayed_.size() >= max_relayed)
        relayed_.erase(relayed_.begin());
    relayed_.push_back(std::move(s));
    wake();
}

void forwarded_call::finish(server::answer_result outcome) {
    outcome_ = std::move(outcome);
    wake();
}

bool forwarded_call::unanswered() const {
    return std::any_of(pending_.begin(), pending_.end(), [](question const& p) { return !p.answer; });
}

std::optional<call_step> forwarded_call::ready_step() {
    if (!relayed_.empty()) {
        auto s = std::move(relayed_.front());
        relayed_.erase(relayed_.begin());
        return s;
    }
    if (outcome_ && !outcome_taken_) {
        outcome_taken_ = true;
        call_step s;
        s.what = call_step::kind::done;
        s.outcome = std::move(*outcome_);
        return s;
    }
    if (unanswered() && std::chrono::steady_clock::now() >= last_question_at_ + settle) {
        call_step s;
        s.what = call_step::kind::questions;
        auto& questions = s.detail.emplace<std::vector<server::input_request>>();
        for (auto const& p : pending_)
            if (!p.answer)
                questions.push_back(p.request);
        return s;
    }
    return std::nullopt;
}

void forwarded_call::wait(step_handler h, boost::asio::any_io_executor h_ex, waiting_calls& list) {
    // swap, never move-assign: Boost 1.81's any_completion_handler move assignment wraps the source in
    // itself without end.
    if (waiter_) {
        // Another handler of this call waits already (a client that sent its retry twice): both wait, and
        // each step goes to one of them.
        more_waiters_.emplace_back();
        more_waiters_.back().h.swap(h);
        more_waiters_.back().ex = std::move(h_ex);
    } else {
        waiter_.swap(h);
        waiter_ex_ = std::move(h_ex);
    }
    wake();
    if (waiter_)
        list.add(*this);
}

void forwarded_call::wake() {
    while (waiter_) {
        auto s = ready_step();
        if (!s)
            break;
        deliver(std::move(*s));
    }
    if (!waiter_ || !unanswered())
        return;
    // Questions asked together arrive within `settle` of each other: the handler hears them once they have.
    auto const at = last_question_at_ + settle;
    if (settle_ && settle_armed_for_ == at)
        return;
    if (!settle_)
        settle_ = std::make_unique<asio::steady_timer>(ex_);
    settle_armed_for_ = at;
    settle_->expires_at(at);
    settle_->async_wait([weak = weak_from_this()](boost::system::error_code ec) {
        if (ec == asio::error::operation_aborted)
            return; // armed anew meanwhile
        if (auto self = weak.lock())
            self->wake();
    });
}

void forwarded_call::deliver(call_step s) {
    step_handler h;
    h.swap(waiter_);
    auto ex = std::move(waiter_ex_);
    if (!more_waiters_.empty()) {
        waiter_.swap(more_waiters_.front().h);
        waiter_ex_ = std::move(more_waiters_.front().ex);
        more_waiters_.pop_front();
    } else if (listed_on_) {
        listed_on_->remove(*this);
    }
    // Completes on the handler's own executor.
    asio::post(ex, [h = std::move(h), self = shared_from_this(), s = std::move(s)]() mutable {
        std::move(h)(std::move(self), std::move(s));
    });
}

void forwarded_call::poke() {
    while (waiter_)
        deliver(call_step{});
}

void forwarded_call::answer(std::string const& key, client::input_answer a) {
    for (auto& p : pending_)
        if (p.request.key == key && !p.answer) {
            p.answer = std::move(a);
            if (p.wake)
                p.wake->cancel();
        }
}

void forwarded_call::abandon() {
    if (abandoned_)
        return;
    abandoned_ = true;
    cancel_.cancel();
    for (auto& p : pending_)
        if (p.wake)
            p.wake->cancel();
}

} // namespace duet::gateway::detail
