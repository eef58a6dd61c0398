// The Redis store kind for the interface tests (store_kinds.hpp): one redis-server and one io_context thread
// for the whole suite, and a key prefix of its own for every store made, so tests never hear each other.
#pragma once

#include <duet/store/redis.hpp>

#include "common/store_runtime.hpp"
#include "support/redis_server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <string>

namespace duet::store::checks {

class redis_environment {
public:
    static redis_environment& get() {
        static redis_environment env;
        return env;
    }
    [[nodiscard]] redis_options fresh_options() {
        return server_->options("duet-test:" + std::to_string(::getpid()) + ':' + std::to_string(++next_) +
                                ':');
    }
    [[nodiscard]] boost::asio::any_io_executor executor() { return runtime_.start(); }

private:
    redis_environment() : server_(std::make_unique<test::redis_server>()) {}

    apps::store_runtime runtime_;
    std::unique_ptr<test::redis_server> server_;
    std::atomic<int> next_{0};
};

struct redis_kind {
    static std::string unavailable() { return test::redis_server::missing(); }
    static std::shared_ptr<event_bus> make_bus() {
        auto& env = redis_environment::get();
        return make_redis_event_bus(env.executor(), env.fresh_options());
    }
    /// A task store of its own key prefix: no other store made here sees its records.
    static std::shared_ptr<task_store> make_task_store() { return make_task_store(fresh_options()); }
    /// A task store on `where`: several made on the same options stand for several processes sharing tasks.
    static std::shared_ptr<task_store> make_task_store(redis_options where) {
        return make_redis_task_store(redis_environment::get().executor(), std::move(where));
    }
    /// The options of a key prefix no store uses yet, on the suite's Redis.
    static redis_options fresh_options() { return redis_environment::get().fresh_options(); }
    /// Redis keeps time by its own clock: its tests wait for expiry.
    static constexpr bool task_clock_settable = false;
    /// A marker of its own, published after everything so far: Redis delivers one publisher's messages in
    /// order, so once it comes back, everything before it has been delivered.
    static void settle(event_bus& bus) {
        auto arrived = std::make_shared<std::promise<void>>();
        auto once = std::make_shared<std::atomic<bool>>(false);
        auto const token = bus.subscribe("settle-marker", [arrived, once](std::string_view) {
            if (!once->exchange(true))
                arrived->set_value();
        });
        bus.publish("settle-marker", "");
        auto const status = arrived->get_future().wait_for(std::chrono::seconds(20));
        bus.unsubscribe(token);
        ASSERT_EQ(status, std::future_status::ready) << "the settle marker never came back through Redis";
    }
};

} // namespace duet::store::checks
