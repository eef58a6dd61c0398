// File: tests/unit/server/harness.hpp
//
// One in-process connection to a server, driven by the test: frames go in through connection::receive(), what
// the connection writes is captured, and the io_context runs on the test's own thread (one handler at a time,
// with a deadline), so there are no sleeps and no races with the test's assertions. Plain tool handlers still
// run on the server's blocking pool, and resume on the connection's strand through the io_context.
//
//     duet::server::server srv(options);
//     harness h(srv);
//     h.send(modern_request(1, "tools/list"));
//     auto r = h.response(1);                           // runs the io_context until the answer is written
//     h.finish();                                       // end of input; runs until the connection is done
//
// "Nothing was sent" is proven with a barrier: a later request's answer, since a connection handles frames
// and server events in order on its strand.
#pragma once

#include <duet/server/connection.hpp>
#include <duet/server/server.hpp>

#include "stdio/messages.hpp"
#include "support/transcript.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace duet::test {

class harness {
public:
    explicit harness(server::server& srv, server::connection_options options = {})
        : work_(boost::asio::make_work_guard(io_)) {
        conn_ = server::connection::create(
            srv, io_.get_executor(),
            [this](std::string line) {
                std::lock_guard lock(mutex_);
                lines_.push_back(std::move(line));
            },
            options);
    }

    ~harness() {
        // Let whatever still runs (a tool on the blocking pool, a pending listen) end before the io_context
        // goes.
        if (!finished_)
            finish(std::chrono::seconds(10), false);
        conn_.reset();
        work_.reset();
        io_.run_for(std::chrono::seconds(1));
    }

    harness(harness const&) = delete;
    harness& operator=(harness const&) = delete;

    void send(boost::json::value const& message) {
        log_.record_sent(message);
        conn_->receive(boost::json::serialize(message));
    }
    void send_raw(std::string frame) { conn_->receive(std::move(frame)); }

    /// Runs the io_context until a message at index >= `from` satisfies `pred`; its index, or nullopt with a
    /// test failure after `timeout`.
    std::optional<std::size_t> wait_for(std::function<bool(boost::json::value const&)> const& pred,
                                        std::size_t from = 0,
                                        std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
        auto const deadline = std::chrono::steady_clock::now() + timeout;
        std::size_t i = from;
        for (;;) {
            take();
            for (; i < messages_.size(); ++i)
                if (pred(messages_[i]))
                    return i;
            if (std::chrono::steady_clock::now() >= deadline) {
                ADD_FAILURE() << "timed out waiting for a message from the connection";
                return std::nullopt;
            }
            io_.run_one_for(std::chrono::milliseconds(20));
        }
    }

    /// The response to request `id` (same JSON type).
    boost::json::value response(boost::json::value const& id) {
        auto const i = wait_for([&](boost::json::value const& m) { return is_response_to(m, id); });
        return i ? messages_[*i] : boost::json::value{};
    }

    /// End of input; runs until the connection reports done. False (with a test failure when `must`) on
    /// timeout.
    bool finish(std::chrono::milliseconds timeout = std::chrono::seconds(60), bool must = true) {
        finished_ = true;
        bool done = false;
        conn_->finish([&done] { done = true; });
        auto const deadline = std::chrono::steady_clock::now() + timeout;
        while (!done && std::chrono::steady_clock::now() < deadline)
            io_.run_one_for(std::chrono::milliseconds(20));
        take();
        if (!done && must)
            ADD_FAILURE() << "the connection did not finish after end of input";
        return done;
    }

    /// Every message written so far (after running nothing more).
    std::vector<boost::json::value> const& messages() {
        take();
        return messages_;
    }

    transcript const& log() {
        take();
        return log_;
    }

    /// Checks every message the connection wrote against the official schema of its era and version, and
    /// that there was something to check; the test is skipped, with the reason, when the schemas are
    /// unavailable.
    void expect_schema_valid() {
        if (auto* schemas = schemas_or_skip()) {
            EXPECT_GT(log().expect_schema_valid(*schemas), 0u);
        }
    }
    server::connection& connection() { return *conn_; }
    /// Serves a session another process opened (connection::restore_session), the transcript told.
    void restore_session(server::session_state const& s) {
        conn_->restore_session(s);
        log_.record_restored_session(std::string(protocol::to_string(s.version)));
    }
    boost::asio::io_context& io() { return io_; }

private:
    void take() {
        std::vector<std::string> lines;
        {
            std::lock_guard lock(mutex_);
            lines.swap(lines_);
        }
        for (auto& line : lines) {
            EXPECT_EQ(line.find('\n'), std::string::npos) << "a frame with an embedded newline: " << line;
            messages_.push_back(log_.record_received(line));
        }
    }

    boost::asio::io_context io_;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
    std::shared_ptr<server::connection> conn_;
    std::mutex mutex_;
    std::vector<std::string>
        lines_; ///< written by the connection (on this thread, which runs the io_context)
    std::vector<boost::json::value> messages_;
    transcript log_;
    bool finished_ = false;
};

} // namespace duet::test
