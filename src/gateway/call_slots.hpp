// File: src/gateway/call_slots.hpp (private)
//
// At most N calls to one upstream at once: a call past the bound waits, first come first served, for a slot
// or until its wait runs out. Lives on one serial executor (the upstream's strand): every member is used
// there, so no lock is needed and a waiter's timer is only ever touched on it.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>

namespace duet::gateway::detail {

class call_slots : public std::enable_shared_from_this<call_slots> {
public:
    call_slots(boost::asio::any_io_executor ex, std::size_t slots) : ex_(std::move(ex)), free_(slots) {}

    /// True once a slot is held (give it back with release()); false when none came within `wait`. Runs on
    /// the executor whatever executor awaits it.
    [[nodiscard]] static boost::asio::awaitable<bool> async_acquire(std::shared_ptr<call_slots> self,
                                                                    std::chrono::milliseconds wait);
    /// From any thread.
    void release();

    [[nodiscard]] std::size_t capacity_left() const noexcept { return free_; }

private:
    struct waiter {
        explicit waiter(boost::asio::any_io_executor const& ex) : timer(ex) {}
        boost::asio::steady_timer timer;
        bool granted = false;
    };
    [[nodiscard]] static boost::asio::awaitable<bool> async_acquire_here(std::shared_ptr<call_slots> self,
                                                                         std::chrono::milliseconds wait);

    boost::asio::any_io_executor ex_;
    std::size_t free_;
    std::deque<std::shared_ptr<waiter>> waiters_;
};

} // namespace duet::gateway::detail
