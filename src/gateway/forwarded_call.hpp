// File: src/gateway/forwarded_call.hpp (private)
//
// One request forwarded upstream, as the downstream handler sees it: the upstream call runs in its own
// coroutine on the upstream executor, and the handler takes what it produces, step by step: progress and log
// lines to relay, a question the upstream asks (a legacy server-to-client request, or an input request of a
// modern input_required round), and finally the outcome. A question stays pending until answered, so a
// modern downstream handler can end its round with input_required (ctx.async_input) while the call waits,
// parked, and the handler of the client's retry finds it again and hands it the answer.
//
// The handler waits for a step by handing the call its completion handler (wait()); the call completes it
// as soon as a step is ready. A plain call (no progress, logs or questions) thus costs one completion: no
// timer and no coroutine of its own on the handler's side.
//
// Every member is used on the upstream executor only (handlers get there with a post), but for
// parked_handle().
#pragma once

#include <duet/client/client.hpp>
#include <duet/server/server.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace duet::gateway::detail {

/// One thing the handler must act on.
struct call_step {
    enum class kind : std::uint8_t {
        idle,      ///< nothing yet (a periodic wake-up): check for cancellation, then wait again
        progress,  ///< relay `progress`
        log,       ///< relay `log`
        questions, ///< ask the downstream client `questions` (until answered), together
        task, ///< the upstream answered with a task: the downstream request becomes one; progress().message
              ///< carries the task's status message when it changed
        done, ///< the upstream call ended with `outcome`
    };
    kind what = kind::idle;
    /// progress, log or questions, as `what` says. One alternative rather than three members: a step moves
    /// about seven times on its way to the handler, and a done step then moves no empty strings and values.
    std::variant<std::monostate, client::progress_event, client::log_event,
                 std::vector<server::input_request>>
        detail;
    std::optional<server::answer_result> outcome;

    [[nodiscard]] client::progress_event& progress() { return std::get<client::progress_event>(detail); }
    [[nodiscard]] client::log_event& log() { return std::get<client::log_event>(detail); }
    [[nodiscard]] std::vector<server::input_request>& questions() {
        return std::get<std::vector<server::input_request>>(detail);
    }
};

class forwarded_call;

/// The calls whose handlers wait now, for the periodic wake-up that lets each look at its request's
/// cancellation. A call leaves the list when its handler gets a step, or when it ends.
class waiting_calls {
public:
    void add(forwarded_call& c);
    void remove(forwarded_call& c);
    /// Every waiting handler gets an idle step.
    void poke_all();
    [[nodiscard]] bool empty() const noexcept { return calls_.empty(); }

private:
    std::vector<forwarded_call*> calls_;
};

class forwarded_call : public std::enable_shared_from_this<forwarded_call> {
public:
    /// How a waiting handler gets its step (and the call, for a handler that attached to a parked one).
    using step_handler =
        boost::asio::any_completion_handler<void(std::shared_ptr<forwarded_call>, call_step)>;

    /// `parks`: the call waits, parked, for a retry when it asks a question (a modern downstream request).
    forwarded_call(boost::asio::any_io_executor ex, bool parks);
    ~forwarded_call();

    /// The name a retry finds the parked call by; made when first asked for (only a call that parks needs
    /// one).
    [[nodiscard]] std::string const& handle();
    /// Whether handle() was ever asked for (the call may be parked under it).
    [[nodiscard]] bool has_handle() const noexcept { return !handle_.empty(); }
    /// The handle of a call parked as it asked; it never changes once made, so the handler that got the
    /// call's questions may read it on its own executor.
    [[nodiscard]] std::string const& parked_handle() const noexcept { return handle_; }
    [[nodiscard]] bool parks() const noexcept { return parks_; }
    /// The upstream request's cancellation; shares the call's lifetime.
    [[nodiscard]] std::shared_ptr<client::cancellation> cancel() { return {shared_from_this(), &cancel_}; }

    // ---- the upstream side -------------------------------------------------------------------------------

    /// The upstream asks: the question is keyed by the upstream's own key, else q1, q2, ... in the order
    /// asked (stable across replays of the same call), and the answer awaited. Questions asked together (a
    /// legacy upstream sends them without waiting for answers) reach the handler as one step.
    [[nodiscard]] boost::asio::awaitable<client::input_answer> async_ask(client::input_question q);
    void relay_progress(client::progress_event e);
    void relay_log(client::log_event e);
    /// The upstream answered with a task (`status` empty), or its task's status message changed.
    void relay_task(std::string status);
    void finish(server::answer_result outcome);

    // ---- the handler side --------------------------------------------------------------------------------

    /// Completes `h` on `h_ex` with the next step: now when one is ready, else as soon as one is (or poke()),
    /// the call being on `list` meanwhile.
    void wait(step_handler h, boost::asio::any_io_executor h_ex, waiting_calls& list);
    /// Whether a handler waits (its step not ready yet).
    [[nodiscard]] bool waiting() const noexcept { return static_cast<bool>(waiter_); }
    /// Hands every waiting handler an idle step, so that it looks at its request's cancellation.
    void poke();
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
    friend class waiting_calls;

    struct question {
        server::input_request request;
        std::optional<client::input_answer> answer;
        boost::asio::steady_timer* wake = nullptr; ///< the asking coroutine's, while it waits
    };

    /// The step a handler may take now, if any.
    [[nodiscard]] std::optional<call_step> ready_step();
    /// A waiting handler gets its step when one is ready; questions still settling wake it once they have.
    void wake();
    void deliver(call_step s);
    void relay(call_step s);
    [[nodiscard]] bool unanswered() const;

    boost::asio::any_io_executor ex_;
    bool parks_ = false;
    std::string handle_;
    client::cancellation cancel_;
    step_handler waiter_;
    boost::asio::any_io_executor waiter_ex_;
    struct waiter {
        step_handler h;
        boost::asio::any_io_executor ex;
    };
    std::list<waiter> more_waiters_; ///< rare: other handlers of the call that wait too
    waiting_calls* listed_on_ = nullptr;
    std::size_t list_index_ = 0;
    std::vector<call_step> relayed_; ///< oldest first
    std::vector<question> pending_;
    /// Made once a question is asked: the handler hears questions once those asked together have arrived.
    std::unique_ptr<boost::asio::steady_timer> settle_;
    std::chrono::steady_clock::time_point settle_armed_for_{};
    std::chrono::steady_clock::time_point last_question_at_;
    std::optional<server::answer_result> outcome_;
    bool outcome_taken_ = false;
    bool abandoned_ = false;
    int asked_ = 0;
    std::set<std::string> used_keys_;
    std::chrono::steady_clock::time_point parked_since_{};
};

} // namespace duet::gateway::detail
