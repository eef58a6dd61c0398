// A queue of outbound lines for one HTTP response or stream, filled from the connection's strand and drained
// by the HTTP coroutine that owns the socket. Safe to push from any thread.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace duet::transport::http {

class stream_queue : public std::enable_shared_from_this<stream_queue> {
public:
    /// `executor` must be the (strand) executor of the coroutine that calls pop().
    explicit stream_queue(boost::asio::any_io_executor executor) : timer_(executor) {}

    void push(std::string line) {
        {
            std::lock_guard lock(mutex_);
            if (closed_)
                return;
            items_.push_back(std::move(line));
        }
        wake();
    }

    /// No more lines will come; pop() returns what is left, then nothing.
    void close() {
        {
            std::lock_guard lock(mutex_);
            closed_ = true;
        }
        wake();
    }

    enum class outcome { line, idle, closed };

    /// Waits up to `idle` for the next line.
    boost::asio::awaitable<outcome> pop(std::string& out, std::chrono::milliseconds idle) {
        auto const deadline = std::chrono::steady_clock::now() + idle;
        for (;;) {
            {
                std::lock_guard lock(mutex_);
                if (!items_.empty()) {
                    out = std::move(items_.front());
                    items_.pop_front();
                    co_return outcome::line;
                }
                if (closed_)
                    co_return outcome::closed;
            }
            if (std::chrono::steady_clock::now() >= deadline)
                co_return outcome::idle;
            timer_.expires_at(deadline);
            co_await timer_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
        }
    }

private:
    void wake() {
        boost::asio::post(timer_.get_executor(), [self = shared_from_this()] { self->timer_.cancel(); });
    }

    std::mutex mutex_;
    std::deque<std::string> items_;
    bool closed_ = false;
    boost::asio::steady_timer timer_;
};

} // namespace duet::transport::http
