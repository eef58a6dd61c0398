// Waiting on one executor without a mutex: `waiters` are coroutines parked on timers that never expire until
// someone wakes them all; `one_at_a_time` lets one piece of work run (an authorization, a key set fetch)
// while the others wait for it, then look again at what it did.
//
//     co_await slot.async_enter(ex);
//     one_at_a_time::held held(slot);    // let go, and the waiters woken, when it goes out of scope
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <memory>
#include <vector>

namespace duet::auth::detail {

class waiters {
public:
    /// Returns once wake_all() was called (or the executor stopped).
    boost::asio::awaitable<void> async_wait(boost::asio::any_io_executor ex) {
        auto turn =
            std::make_shared<boost::asio::steady_timer>(ex, boost::asio::steady_timer::time_point::max());
        timers_.push_back(turn);
        co_await turn->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    }
    void wake_all() noexcept {
        for (auto& t : timers_)
            t->cancel();
        timers_.clear();
    }

private:
    std::vector<std::shared_ptr<boost::asio::steady_timer>> timers_;
};

class one_at_a_time {
public:
    /// Returns when nothing else holds the slot; the caller then holds it (see `held`).
    boost::asio::awaitable<void> async_enter(boost::asio::any_io_executor ex) {
        while (busy_)
            co_await waiting_.async_wait(ex);
        busy_ = true;
    }

    /// Holds the slot entered until it goes out of scope, whatever way the work ends.
    class held {
    public:
        explicit held(one_at_a_time& slot) noexcept : slot_(&slot) {}
        held(held const&) = delete;
        held& operator=(held const&) = delete;
        ~held() {
            slot_->busy_ = false;
            slot_->waiting_.wake_all();
        }

    private:
        one_at_a_time* slot_;
    };

private:
    bool busy_ = false;
    waiters waiting_;
};

} // namespace duet::auth::detail
