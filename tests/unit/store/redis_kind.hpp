// The Redis store kind for the interface tests (store_kinds.hpp): one redis-server and one io_context thread
// for the whole suite, and a key prefix of its own for every store made, so tests never hear each other. A
// test may also speak to Redis itself (redis_kind::command), as another client would.
#pragma once

#include <duet/store/redis.hpp>

#include "common/store_runtime.hpp"
#include "support/redis_server.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <future>
#include <istream>
#include <memory>
#include <string>
#include <vector>

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
    /// One command sent to the Redis `where` names on a connection of its own, blocking: the reply's text (a
    /// status, a string, an integer in decimal; empty for nil). An error reply, an array or no reply at all
    /// fails the test and gives "".
    static std::string command(redis_options const& where, std::vector<std::string> const& args) {
        namespace asio = boost::asio;
        asio::io_context io;
        asio::ip::tcp::socket socket(io);
        boost::system::error_code ec;
        asio::connect(socket, asio::ip::tcp::resolver(io).resolve(where.host, std::to_string(where.port), ec),
                      ec);
        asio::streambuf in;
        auto const one = [&](std::vector<std::string> const& words) -> std::string {
            std::string out = '*' + std::to_string(words.size()) + "\r\n";
            for (auto const& w : words)
                out += '$' + std::to_string(w.size()) + "\r\n" + w + "\r\n";
            if (!ec)
                asio::write(socket, asio::buffer(out), ec);
            if (!ec)
                asio::read_until(socket, in, "\r\n", ec);
            if (ec) {
                ADD_FAILURE() << "Redis at " << where.host << ':' << where.port << " did not answer "
                              << words.front() << ": " << ec.message();
                return {};
            }
            std::istream lines(&in);
            std::string line;
            std::getline(lines, line); // up to '\n', the '\r' kept
            line.pop_back();
            if (line.empty()) {
                ADD_FAILURE() << "Redis answered " << words.front() << " with an empty line";
                return {};
            }
            auto const rest = line.substr(1);
            switch (line.front()) {
            case '+':
            case ':':
                return rest;
            case '$': {
                auto const size = std::stol(rest);
                if (size < 0)
                    return {};
                auto const wanted = static_cast<std::size_t>(size) + 2;
                if (in.size() < wanted)
                    asio::read(socket, in, asio::transfer_exactly(wanted - in.size()), ec);
                if (ec) {
                    ADD_FAILURE() << "Redis's answer to " << words.front() << " broke off: " << ec.message();
                    return {};
                }
                std::string text(wanted, '\0');
                lines.read(text.data(), static_cast<std::streamsize>(wanted));
                text.resize(wanted - 2);
                return text;
            }
            default:
                ADD_FAILURE() << "Redis answered " << words.front() << " with " << line;
                return {};
            }
        };
        if (where.database != 0)
            one({"SELECT", std::to_string(where.database)});
        return one(args);
    }
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
