#include "call_slots.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace duet::gateway::detail {

namespace asio = boost::asio;

asio::awaitable<bool> call_slots::async_acquire(std::shared_ptr<call_slots> self,
                                                std::chrono::milliseconds wait) {
    auto ex = self->ex_;
    auto here = async_acquire_here(std::move(self), wait);
    co_return co_await asio::co_spawn(ex, std::move(here), asio::use_awaitable);
}

asio::awaitable<bool> call_slots::async_acquire_here(std::shared_ptr<call_slots> self,
                                                     std::chrono::milliseconds wait) {
    if (self->free_ > 0 && self->waiters_.empty()) {
        --self->free_;
        co_return true;
    }
    auto w = std::make_shared<waiter>(self->ex_);
    w->timer.expires_after(wait);
    self->waiters_.push_back(w);
    boost::system::error_code ec;
    co_await w->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (w->granted)
        co_return true;
    std::erase(self->waiters_, w);
    co_return false;
}

void call_slots::release() {
    asio::post(ex_, [self = shared_from_this()] {
        if (self->waiters_.empty()) {
            ++self->free_;
            return;
        }
        // The slot passes straight to the longest waiter: it never shows as free in between.
        auto w = std::move(self->waiters_.front());
        self->waiters_.pop_front();
        w->granted = true;
        w->timer.cancel();
    });
}

} // namespace duet::gateway::detail
