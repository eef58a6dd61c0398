// File: apps/common/store_runtime.hpp
//
// The thread a process talks to Redis on (store/redis.hpp), apart from the threads serving requests, so that
// the process can wait for Redis before it serves. The suites that start Redis use it too.
//
//     duet::apps::store_runtime runtime;               // first: it outlives every Redis object
//     auto bus = store::make_redis_event_bus(runtime.start(), where);
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace duet::apps {

/// The thread Redis is talked to on. Declared first in main(), before anything that may hold a Redis object
/// (options, stores, servers): those end while it still runs, each stopping its connections on it, and then
/// it waits for that to finish before it stops.
class store_runtime {
public:
    store_runtime() : work_(boost::asio::make_work_guard(io_)) {}
    ~store_runtime() {
        work_.reset();
        if (!thread_.joinable())
            return;
        // What the Redis objects posted as they ended (closing their connections) runs first; a connection
        // that would not let go is not waited for past a few seconds.
        {
            std::unique_lock lock(mutex_);
            if (!ended_.wait_for(lock, std::chrono::seconds(3), [this] { return done_; }))
                io_.stop();
        }
        thread_.join();
    }
    store_runtime(store_runtime const&) = delete;
    store_runtime& operator=(store_runtime const&) = delete;

    boost::asio::any_io_executor start() {
        if (!thread_.joinable())
            thread_ = std::thread([this] {
                io_.run();
                std::lock_guard lock(mutex_);
                done_ = true;
                ended_.notify_all();
            });
        return io_.get_executor();
    }

private:
    boost::asio::io_context io_;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable ended_;
    bool done_ = false;
};

} // namespace duet::apps
