// One forwarded request between its upstream coroutine and the downstream handler (forwarded_call.hpp).
#include "forwarded_call.hpp"

#include <duet/protocol/errors.hpp>
#include <duet/protocol/input_key.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

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
} // namespace

forwarded_call::forwarded_call(asio::any_io_executor ex, std::string handle, bool parks)
    : handle_(std::move(handle)), parks_(parks), ex_(ex), handler_wake_(ex) {}

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
    s.progress = std::move(e);
    relay(std::move(s));
}

void forwarded_call::relay_log(client::log_event e) {
    call_step s;
    s.what = call_step::kind::log;
    s.log = std::move(e);
    relay(std::move(s));
}

void forwarded_call::relay(call_step s) {
    if (relayed_.size() >= max_relayed)
        relayed_.pop_front();
    relayed_.push_back(std::move(s));
    wake();
}

void forwarded_call::finish(server::serve_result outcome) {
    outcome_ = std::move(outcome);
    wake();
}

asio::awaitable<call_step> forwarded_call::async_next(std::chrono::milliseconds max_wait) {
    auto const until = std::chrono::steady_clock::now() + max_wait;
    for (;;) {
        if (!relayed_.empty()) {
            auto s = std::move(relayed_.front());
            relayed_.pop_front();
            co_return s;
        }
        if (outcome_ && !outcome_taken_) {
            outcome_taken_ = true;
            call_step s;
            s.what = call_step::kind::done;
            s.outcome = std::move(*outcome_);
            co_return s;
        }
        auto const now = std::chrono::steady_clock::now();
        bool const unanswered =
            std::any_of(pending_.begin(), pending_.end(), [](question const& p) { return !p.answer; });
        if (unanswered && now >= last_question_at_ + settle) {
            call_step s;
            s.what = call_step::kind::questions;
            for (auto const& p : pending_)
                if (!p.answer)
                    s.questions.push_back(p.request);
            co_return s;
        }
        if (now >= until || abandoned_)
            co_return call_step{};
        handler_wake_.expires_at(unanswered ? std::min(until, last_question_at_ + settle) : until);
        co_await handler_wake_.async_wait(tuple_awaitable);
    }
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
    cancel_->cancel();
    for (auto& p : pending_)
        if (p.wake)
            p.wake->cancel();
    wake();
}

} // namespace duet::gateway::detail
