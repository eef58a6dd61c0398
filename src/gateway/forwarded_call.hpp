// File: src/gateway/forwarded_call.hpp (private)
//
// One request forwarded upstream, as the downstream handler sees it: the upstream call runs in its own
// coroutine on the upstream executor, and the handler takes what it produces, step by step: progress and log
// lines to relay, a question the upstream asks (a legacy server-to-client request, or an input request of a
// modern input_required round), and finally the outcome. A question stays pending until answered, so a
// modern downstream handler can end its round with input_required (ctx.async_input) while the call waits,
// parked, and the handler of the client's retry finds it again and hands it the answer.
//
// Every member is used on the upstream executor only (handlers get there with co_spawn).
#pragma once

#include <duet/client/client.hpp>
#include <duet/server/server.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace duet::gateway::detail {

/// One thing the handler must act on.
struct call_step {
    enum class kind : std::uint8_t {
        idle,      ///< nothing yet (the wait timed out): check for cancellation, then wait again
        progress,  ///< relay `progress`
        log,       ///< relay `log`
        questions, ///< ask the downstream client `questions` (until answered), together
        done,      ///< the upstream call ended with `outcome`
    };
    kind what = kind::idle;
    client::progress_event progress;
    client::log_event log;
    std::vector<server::input_request> questions;
    std::optional<server::serve_result> outcome;
};

class forwarded_call {
public:
    /// `parks`: the call waits, parked, for a retry when it asks a question (a modern downstream request).
    forwarded_call(boost::asio::any_io_executor ex, std::string handle, bool parks);

    [[nodiscard]] std::string const& handle() const noexcept { return handle_; }
    [[nodiscard]] bool parks() const noexcept { return parks_; }
    [[nodiscard]] std::shared_ptr<client::cancellation> const& cancel() const noexcept { return cancel_; }

    // ---- the upstream side -------------------------------------------------------------------------------

    /// The upstream asks: the question is keyed by the upstream's own key, else q1, q2, ... in the order
    /// asked (stable across replays of the same call), and the answer awaited. Questions asked together (a
    /// legacy upstream sends them without waiting for answers) reach the handler as one step.
    [[nodiscard]] boost::asio::awaitable<client::input_answer> async_ask(client::input_question q);
    void relay_progress(client::progress_event e);
    void relay_log(client::log_event e);
    void finish(server::serve_result outcome);

    // ---- the handler side --------------------------------------------------------------------------------

    /// The next step, waiting at most `max_wait`.
    [[nodiscard]] boost::asio::awaitable<call_step> async_next(std::chrono::milliseconds max_wait);
    /// The answer to the pending question `key` (ignored when no such question waits).
    void answer(std::string const& key, client::input_answer a);
    /// Ends the call: its upstream request is cancelled and a pending question fails.
    void abandon();

    /// When the call last waited for a handler to ask its question (for expiry of parked calls).
    [[nodiscard]] std::chrono::steady_clock::time_point parked_since() const noexcept {
        return parked_since_;
    }
    [[nodiscard]] bool finished() const noexcept { return outcome_.has_value() && !outcome_taken_; }
    [[nodiscard]] bool over() const noexcept { return outcome_taken_ || abandoned_; }

private:
    void wake() { handler_wake_.cancel(); }
    void relay(call_step s);

    std::string handle_;
    bool parks_ = false;
    std::shared_ptr<client::cancellation> cancel_ = std::make_shared<client::cancellation>();
    struct question {
        server::input_request request;
        std::optional<client::input_answer> answer;
        boost::asio::steady_timer* wake = nullptr; ///< the asking coroutine's, while it waits
    };

    boost::asio::any_io_executor ex_;
    boost::asio::steady_timer handler_wake_;
    std::deque<call_step> relayed_;
    std::vector<question> pending_;
    std::chrono::steady_clock::time_point last_question_at_;
    std::optional<server::serve_result> outcome_;
    bool outcome_taken_ = false;
    bool abandoned_ = false;
    int asked_ = 0;
    std::set<std::string> used_keys_;
    std::chrono::steady_clock::time_point parked_since_ = std::chrono::steady_clock::now();
};

} // namespace duet::gateway::detail
