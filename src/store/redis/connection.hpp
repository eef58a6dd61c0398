// One connection to Redis: hiredis' asynchronous context, its socket watched by Asio's reactor on a strand
// the caller gives (so several connections and their users share one serial executor). It connects, and
// reconnects with backoff for as long as it is not stopped; while it is not ready, a command fails at once
// rather than waiting. A connection in subscriber mode renews its subscriptions whenever it comes back.
#pragma once

#include <duet/store/redis.hpp>

#include "reply.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

struct redisAsyncContext;

namespace duet::store::redis {

using strand = boost::asio::strand<boost::asio::any_io_executor>;

class connection : public std::enable_shared_from_this<connection> {
public:
    /// Each called on the strand.
    struct events {
        /// Connected (again): PING answered, the database selected and subscriptions renewed.
        std::function<void()> ready;
        /// The connection broke, or an attempt failed: why, in words. Reconnection follows by itself.
        std::function<void(std::string_view why)> lost;
        /// A message on a subscribed channel (subscriber mode).
        std::function<void(std::string_view channel, std::string_view payload)> message;
        /// Redis confirmed a subscription (subscriber mode).
        std::function<void(std::string_view channel)> subscribed;
    };

    [[nodiscard]] static std::shared_ptr<connection> create(strand s, redis_options where, events e);
    ~connection();
    connection(connection const&) = delete;
    connection& operator=(connection const&) = delete;

    /// Begins connecting (from any thread).
    void start();
    /// Ends the connection for good (from any thread): commands pending get no reply (nullopt).
    void stop();

    // ---- on the strand only -------------------------------------------------------------------------------

    [[nodiscard]] bool ready() const noexcept { return ready_; }
    /// Sends one command; `done` gets its reply, or nullopt when it was not sent or its reply never came
    /// (the connection is not ready or broke). Called on the strand.
    using done = std::function<void(std::optional<reply>)>;
    void command(std::vector<std::string> const& args, done d);
    /// Subscriber mode: kept across reconnections until unsubscribe().
    void subscribe(std::string const& channel);
    void unsubscribe(std::string const& channel);

private:
    struct watch; // the reactor's view of one hiredis context's socket

    connection(strand s, redis_options where, events e);
    void connect();
    /// Every failed attempt and every break, in words: told to events::lost, then retried after the backoff.
    void on_disconnected(std::string why);
    void retry_later();
    void on_connected();
    void send(std::vector<std::string> const& args, void (*fn)(redisAsyncContext*, void*, void*), void* data);

    static void on_reply(redisAsyncContext* ac, void* r, void* data);
    static void on_pubsub(redisAsyncContext* ac, void* r, void* data);
    static void on_connect(redisAsyncContext const* ac, int status);
    static void on_disconnect(redisAsyncContext const* ac, int status);

    strand strand_;
    redis_options const where_;
    events const events_;
    boost::asio::steady_timer timer_; ///< connect timeout, then the backoff wait
    redisAsyncContext* ac_ = nullptr;
    std::shared_ptr<watch> watch_;
    bool ready_ = false;
    bool stopped_ = false;
    std::chrono::milliseconds backoff_;
    std::set<std::string> channels_;
};

} // namespace duet::store::redis
