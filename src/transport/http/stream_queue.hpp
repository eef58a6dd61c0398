// A queue of outbound lines for one HTTP response or stream, filled from the connection's strand and drained
// by the HTTP coroutine that owns the socket. Safe to push from any thread. Bounded: a reader (a slow client)
// that lets more than `max_items` lines pile up loses the stream (pop() says `overflowed`), so one stream
// cannot grow the server's memory without limit. interrupt() wakes the reader for something else (the peer
// went away; the handler asked to end the stream).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace duet::transport::http {

class stream_queue : public std::enable_shared_from_this<stream_queue> {
public:
    /// `executor` must be the (strand) executor of the coroutine that calls pop().
    /// `max_items` 0: unbounded (a queue used only to wake its reader).
    explicit stream_queue(boost::asio::any_io_executor executor, std::size_t max_items = 0)
        : timer_(executor), max_items_(max_items) {}

    void push(std::string line) {
        bool wake_reader = false;
        {
            std::lock_guard lock(mutex_);
            if (closed_)
                return;
            if (max_items_ != 0 && items_.size() - head_ >= max_items_) {
                items_.clear();
                head_ = 0;
                overflowed_ = closed_ = true;
            } else {
                items_.push_back(std::move(line));
            }
            wake_reader = waiting_;
        }
        if (wake_reader)
            wake();
    }

    /// pop() returns `interrupted` (once) as soon as it can.
    void interrupt() {
        bool wake_reader = false;
        {
            std::lock_guard lock(mutex_);
            interrupted_ = true;
            wake_reader = waiting_;
        }
        if (wake_reader)
            wake();
    }

    /// No more lines will come; pop() returns what is left, then nothing.
    void close() {
        bool wake_reader = false;
        {
            std::lock_guard lock(mutex_);
            closed_ = true;
            wake_reader = waiting_;
        }
        if (wake_reader)
            wake();
    }

    enum class outcome { line, idle, closed, interrupted, overflowed };

    /// What pop() would return now, without waiting: `idle` when it would wait.
    outcome try_pop(std::string& out) {
        std::lock_guard lock(mutex_);
        return take(out);
    }

    /// Waits up to `idle` for the next line.
    boost::asio::awaitable<outcome> pop(std::string& out, std::chrono::milliseconds idle) {
        auto const deadline = std::chrono::steady_clock::now() + idle;
        for (;;) {
            {
                std::lock_guard lock(mutex_);
                waiting_ = false;
                if (auto const got = take(out); got != outcome::idle)
                    co_return got;
                if (std::chrono::steady_clock::now() >= deadline)
                    co_return outcome::idle;
                // From here on a push, interrupt or close wakes this reader; before, it is seen above.
                waiting_ = true;
            }
            timer_.expires_at(deadline);
            co_await timer_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        }
    }

private:
    // Called with mutex_ held.
    outcome take(std::string& out) {
        if (std::exchange(interrupted_, false))
            return outcome::interrupted;
        if (overflowed_)
            return outcome::overflowed;
        if (head_ < items_.size()) {
            out = std::move(items_[head_]);
            if (++head_ == items_.size()) {
                items_.clear();
                head_ = 0;
            } else if (head_ >= 64 && 2 * head_ >= items_.size()) {
                // A reader that never quite catches up must not keep every line it took.
                items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
                head_ = 0;
            }
            return outcome::line;
        }
        if (closed_)
            return outcome::closed;
        return outcome::idle;
    }

    void wake() {
        boost::asio::post(timer_.get_executor(), [self = shared_from_this()] { self->timer_.cancel(); });
    }

    std::mutex mutex_;
    // Lines not yet taken are items_[head_..]; emptied whenever the reader catches up. A vector rather than a
    // deque: most queues (one per HTTP response) never hold a line, and a deque allocates two blocks up
    // front.
    std::vector<std::string> items_;
    std::size_t head_ = 0;
    bool closed_ = false;
    bool interrupted_ = false;
    bool overflowed_ = false;
    bool waiting_ = false; ///< pop() waits on timer_: whoever changes the queue must wake it
    boost::asio::steady_timer timer_;
    std::size_t max_items_;
};

} // namespace duet::transport::http
