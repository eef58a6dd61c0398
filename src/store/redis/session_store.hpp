// File: src/store/redis/session_store.hpp (private)
//
// Legacy sessions shared through Redis (duet/store/redis.hpp). Per session, under the key prefix P:
//
//   P s:ID            hash: state (the transport's record), home (the process delivering server events)
//   P s:ID:streams    set: the numbers of its POST streams
//   P s:ID:e:N        stream N's entries (a Redis Stream, ids 0-SEQ, bounded by the replay window)
//   channel P s:ID    notes to every process holding the session: entries appended, broadcasts, state
//                     saved, events claimed, readers attached and detached, close requests, streams
//                     forgotten, the session ended
//
// Every key lives as long as the session's idle expiry, renewed by its traffic. A process keeps the sessions
// it served (their mirrors: mirror_log.hpp) until they end or go idle here; a session it does not hold is
// loaded on its first request. See bench/findings.md ("Scale-out") for the operations per request.
//
// The two classes the parts share: redis_session (one shared session as this process holds it) and
// redis_store (the session_store over one command connection and the event bus). Their members live by
// concern: session_store.cpp the store's session_store side and its removals, session_commands.cpp its
// commands to Redis and the heartbeat, session_loading.cpp a session another process opened, session.cpp a
// session's own operations, session_notes.cpp the notes it hears on its channel.
#pragma once

#include <duet/store/redis.hpp>

#include "connection.hpp"
#include "mirror_log.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace duet::store::redis {

/// The number in a decimal string, or 0 when it is not one.
std::uint64_t parse_u64(std::string_view s);
// The sequence number of a Redis Stream id "0-SEQ".
std::uint64_t seq_of(std::string_view id);
// A stream number no other process picks: random, below 2^53 (exact in every JSON number).
std::uint64_t random_stream_number();
// A session's channel on the bus, and (under the key prefix) the key of its record.
std::string session_topic(std::string_view id);

class redis_store;

class redis_session final : public session,
                            public redis::mirror_outbox,
                            public std::enable_shared_from_this<redis_session> {
public:
    redis_session(std::weak_ptr<redis_store> store, std::string id, std::shared_ptr<session_local> local,
                  std::string prefix, memory_limits const& limits, std::string tag)
        : session(std::move(local)), store_(std::move(store)), id_(std::move(id)), topic_(session_topic(id_)),
          key_(prefix + topic_), limits_(limits), tag_(std::move(tag)) {}

    // Made once shared: the standalone stream's mirror reaches back to the session.
    void init() {
        standalone_ = std::make_shared<redis::mirror_log>(0, limits_.replay_events, weak_from_this());
    }

    [[nodiscard]] std::string const& id() const noexcept override { return id_; }
    void touch() override;
    void end() override {
        ended_ = true;
        standalone_->wake();
    }
    [[nodiscard]] bool ended() const override { return ended_; }
    [[nodiscard]] std::shared_ptr<event_log> const& standalone() const noexcept override {
        return standalone_;
    }
    [[nodiscard]] std::shared_ptr<event_log> open_stream(std::string on_loss) override;
    [[nodiscard]] std::shared_ptr<event_log> find_stream(std::uint64_t number) const override {
        if (number == 0)
            return standalone_;
        std::lock_guard lock(mutex_);
        auto it = streams_.find(number);
        return it == streams_.end() ? nullptr : it->second;
    }
    void forget_stream(std::uint64_t number) override;
    [[nodiscard]] std::string state() const override {
        std::lock_guard lock(mutex_);
        return state_;
    }
    void save_state(std::string state) override;
    void broadcast(std::string payload) override { note("B" + payload); }
    void claim_events() override;
    [[nodiscard]] bool events_here() const override { return events_here_; }

    // ---- mirror_outbox ------------------------------------------------------------------------------------
    void append(std::uint64_t number, char kind, std::string data) override;
    void note(std::string text) override;
    void refill(std::uint64_t number, std::uint64_t after) override;
    [[nodiscard]] std::string const& tag() const override { return tag_; }

    // ---- the store's side
    // ----------------------------------------------------------------------------------
    /// Its channel on the store's bus (the bus puts the key prefix before it, as key() has it).
    [[nodiscard]] std::string const& topic() const noexcept { return topic_; }
    [[nodiscard]] std::string const& key() const noexcept { return key_; }
    [[nodiscard]] std::string stream_key(std::uint64_t n) const { return key_ + ":e:" + std::to_string(n); }
    [[nodiscard]] std::string streams_key() const { return key_ + ":streams"; }
    /// A note on the session's channel (on the bus's strand).
    void heard(std::string_view note);
    /// Ends, with their loss answers, the streams this process reads for a client whose serving process is
    /// gone (its liveness key expired) before completing them.
    void check_losses(redis_store& store);
    /// Entries read from Redis (XRANGE's reply).
    void fill(std::uint64_t number, reply const& entries);
    /// What a read of the record found, unless a note since the subscription told newer.
    void set_loaded_state(std::string state, bool here) {
        std::lock_guard lock(mutex_);
        if (!state_noted_)
            state_ = std::move(state);
        if (!home_noted_)
            events_here_ = here;
    }
    /// The stream's mirror, made when a note names a stream opened elsewhere.
    std::shared_ptr<redis::mirror_log> mirror(std::uint64_t number, bool make);
    [[nodiscard]] std::vector<std::uint64_t> stream_numbers() const {
        std::lock_guard lock(mutex_);
        std::vector<std::uint64_t> out;
        for (auto const& [n, s] : streams_)
            out.push_back(n);
        return out;
    }
    [[nodiscard]] std::chrono::steady_clock::time_point last_seen() const { return last_seen_; }
    [[nodiscard]] bool gone() const { return gone_; }
    void mark_gone() { gone_ = true; }
    std::uint64_t bus_token = 0;
    /// Runs `then` once the note `marker` comes back (the subscription is live).
    void on_marker(std::string marker, std::function<void()> then) {
        std::lock_guard lock(mutex_);
        marker_ = std::move(marker);
        marker_then_ = std::move(then);
    }

private:
    std::weak_ptr<redis_store> const store_;
    std::string const id_;
    std::string const topic_;
    std::string const key_;
    memory_limits const limits_;
    std::string const tag_;
    std::shared_ptr<event_log> standalone_;
    mutable std::mutex mutex_;
    std::map<std::uint64_t, std::shared_ptr<redis::mirror_log>> streams_;
    std::deque<std::uint64_t> opened_; ///< POST streams in the order they became known here
    std::string state_;
    bool state_noted_ = false;
    bool home_noted_ = false;
    std::string marker_;
    std::function<void()> marker_then_;
    std::atomic<bool> events_here_{false};
    std::atomic<bool> ended_{false};
    std::atomic<bool> gone_{false}; ///< its record is no longer in Redis
    std::atomic<std::chrono::steady_clock::time_point> last_seen_{std::chrono::steady_clock::now()};
    std::atomic<std::chrono::steady_clock::time_point> last_renewed_{};
};

class redis_store final : public session_store, public std::enable_shared_from_this<redis_store> {
public:
    redis_store(boost::asio::any_io_executor executor, redis_options where, memory_limits limits,
                std::chrono::milliseconds expiry);
    ~redis_store() override;

    void start();

    // ---- session_store (session_store.cpp) ----------------------------------------------------------------

    std::shared_ptr<session> create(std::shared_ptr<session_local> local) override;
    std::shared_ptr<session> find(std::string_view id) override;
    std::shared_ptr<session> remove(std::string_view id) override;
    std::vector<std::shared_ptr<session>> expire(std::chrono::milliseconds idle) override;
    std::vector<std::shared_ptr<session>> all() override;
    std::size_t size() const override;
    bool shared() const noexcept override { return true; }
    bool available() const noexcept override { return up_ || !ever_up_; }
    std::string process_tag() const override { return tag_; }
    void find_async(std::string id, std::function<void(std::shared_ptr<session>)> done) override;
    void flush(std::function<void()> done) override;

    // ---- removals (session_store.cpp): a session ended here, until every process holding it let go --------

    void removal_expected(std::string const& id, long long holders);
    void removal_acknowledged(std::string const& id);

    // ---- for the sessions (session_commands.cpp) ---------------------------------------------------------

    /// Sends a command (from any thread). Until the connection first comes up, commands wait for it (a
    /// process serves as soon as it starts); after, one sent while Redis is away fails at once.
    void command(std::vector<std::string> args, redis::connection::done d = nullptr);
    void append(redis_session& s, std::uint64_t number, char kind, std::string data);
    void read_stream(std::shared_ptr<redis_session> const& s, std::uint64_t number, std::uint64_t after,
                     std::function<void()> then = nullptr);
    void heartbeat();
    // On the strand.
    void send_or_hold(std::vector<std::string> args, redis::connection::done d);
    [[nodiscard]] std::string process_key(std::string const& tag) const {
        return where_.key_prefix + "proc:" + tag;
    }
    void came_up();
    [[nodiscard]] std::chrono::milliseconds expiry() const noexcept { return expiry_; }

private:
    struct removal {
        std::shared_ptr<redis_session> session; ///< still listening for the holders' answers
        long long expected = -1;                ///< holders PUBLISH reached; -1 until its reply
        long long acknowledged = 0;
    };

    // The store's own (session_store.cpp).
    void settle_removal(std::map<std::string, removal, std::less<>>::iterator it);
    void after_removals(std::function<void()> done);
    std::shared_ptr<redis_session> make_session(std::string id, std::shared_ptr<session_local> local);
    void listen(std::shared_ptr<redis_session> const& s);
    void hold(std::shared_ptr<redis_session> const& s);

    // A session another process opened (session_loading.cpp).
    void load(std::string const& id);
    void subscribe_then_read(std::shared_ptr<redis_session> s);
    void read_streams(std::shared_ptr<redis_session> const& s, std::shared_ptr<std::atomic<bool>> settled,
                      std::shared_ptr<boost::asio::steady_timer> timer);
    void loaded(std::string const& id, std::shared_ptr<redis_session> s);

    redis::strand strand_;
    redis_options const where_;
    memory_limits const limits_;
    std::chrono::milliseconds const expiry_;
    std::string const tag_;
    std::shared_ptr<event_bus> const bus_;
    std::shared_ptr<redis::connection> commands_;
    std::atomic<bool> up_{false};
    std::atomic<bool> ever_up_{false};
    boost::asio::steady_timer beat_{strand_};
    std::deque<std::pair<std::vector<std::string>, redis::connection::done>> held_; ///< strand only
    mutable std::mutex mutex_;
    std::map<std::string, std::shared_ptr<redis_session>, std::less<>> sessions_;
    std::map<std::string, std::vector<std::function<void(std::shared_ptr<session>)>>, std::less<>> loading_;
    std::map<std::string, removal, std::less<>> removals_;
    std::vector<std::function<void()>> after_removals_;
};

} // namespace duet::store::redis
