// File: src/support/deadline_watch.hpp (private)
//
// Many deadlines watched by one timer, lazily. The HTTP client bounds how long the write of a request and
// the read of its answer's head may take; the HTTP server bounds the read of each request and each write of
// a response. Beast's own expiry arms and cancels a timer around every read and write; here setting a
// deadline costs a clock reading, and the one timer, armed for the earliest deadline it knows, looks at
// every watched item when it fires: expired ones get expire(), the others re-arm it. An item without a
// deadline when the timer fires is dropped from the list, and the timer sleeps until the next start().
//
// A watch has a shortest limit (its constructor's) and start() may be given longer ones. The timer never
// waits longer than the shortest limit, so a deadline set later is never earlier than the one the timer
// waits for, and setting it never re-arms the timer: an item that alternates a long limit and a short one
// (a server's wait for a request and its write of the answer) costs a wake-up per shortest limit at most.
//
// T has a member `watched_deadline deadline` and `void expire()`. Items are held weakly. Used on one executor
// (the client's, or a server socket's): not thread-safe.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <memory>
#include <vector>

namespace duet::support {

struct watched_deadline {
    using clock = std::chrono::steady_clock;
    static constexpr clock::time_point none = clock::time_point::max();
    clock::time_point at = none;
    bool watched = false; ///< on a watch's list
    bool expired = false; ///< the watch called expire() since the deadline was set
};

template<class T>
class deadline_watch {
public:
    using clock = watched_deadline::clock;

    /// `limit` is what start(x) allows, and the shortest any start(x, limit) may be given.
    deadline_watch(boost::asio::any_io_executor ex, clock::duration limit)
        : state_(std::make_shared<state>(std::move(ex), limit)) {}

    /// `x` must be through within the watch's limit from now, else x->expire() (and deadline.expired).
    void start(std::shared_ptr<T> const& x) const { start(x, state_->limit); }

    /// `x` must be through within `limit` (not shorter than the watch's) from now, else x->expire().
    void start(std::shared_ptr<T> const& x, clock::duration limit) const {
        assert(limit >= state_->limit);
        auto const now = clock::now();
        auto& d = x->deadline;
        d.at = now + limit;
        d.expired = false;
        if (!d.watched) {
            d.watched = true;
            state_->items.push_back(x);
        }
        if (!state_->armed)
            arm(state_, std::min(d.at, now + state_->limit));
    }

    /// `x` is through: no deadline until the next start().
    static void stop(T& x) noexcept { x.deadline.at = watched_deadline::none; }

private:
    struct state {
        state(boost::asio::any_io_executor ex, clock::duration shortest)
            : timer(std::move(ex)), limit(shortest) {}
        boost::asio::steady_timer timer;
        clock::duration limit; ///< the shortest: the timer never waits longer
        bool armed = false;
        std::vector<std::weak_ptr<T>> items; ///< those that had a deadline since the last look
    };

    static void arm(std::shared_ptr<state> const& s, clock::time_point at) {
        s->armed = true;
        s->timer.expires_at(at);
        s->timer.async_wait([weak = std::weak_ptr<state>(s)](boost::system::error_code) {
            if (auto alive = weak.lock())
                look(alive);
        });
    }

    static void look(std::shared_ptr<state> const& s) {
        s->armed = false;
        auto const now = clock::now();
        auto next = watched_deadline::none;
        std::vector<std::shared_ptr<T>> expired;
        std::erase_if(s->items, [&](std::weak_ptr<T> const& w) {
            auto x = w.lock();
            if (!x)
                return true;
            auto& d = x->deadline;
            if (d.at != watched_deadline::none && d.at > now) {
                next = std::min(next, d.at);
                return false;
            }
            if (d.at != watched_deadline::none) {
                d.at = watched_deadline::none;
                d.expired = true;
                expired.push_back(std::move(x));
            }
            d.watched = false;
            return true;
        });
        if (next != watched_deadline::none)
            arm(s, std::min(next, now + s->limit));
        for (auto& x : expired) // after the list is settled: expire() may start another deadline
            x->expire();
    }

    std::shared_ptr<state> state_;
};

} // namespace duet::support
