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
#include <duet/store/redis.hpp>

#include "../session_id.hpp"
#include "connection.hpp"
#include "mirror_log.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <openssl/rand.h>

#include <atomic>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <random>

namespace duet::store {

namespace asio = boost::asio;

namespace {

using redis::reply;

// How long a process counts as alive after its last heartbeat.
constexpr std::chrono::milliseconds liveness{3000};

// What a store holds back before Redis first answers (past it, commands fail at once).
constexpr std::size_t max_held_commands = 10000;

// One entry appended and announced at once, so that no process sees the one without the other. KEYS: the
// stream, the session's channel. ARGV: replay bound, kind, data, expiry (ms), stream number.
constexpr char const* append_script = R"lua(
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '0-*', ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PUBLISH', KEYS[2], 'E' .. ARGV[5] .. ' ' .. string.sub(id, 3) .. ' ' .. ARGV[2] .. ' ' .. ARGV[3])
return id
)lua";

std::uint64_t parse_u64(std::string_view s) {
    std::uint64_t v = 0;
    auto const [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && end == s.data() + s.size() ? v : 0;
}

// The sequence number of a Redis Stream id "0-SEQ".
std::uint64_t seq_of(std::string_view id) {
    return id.starts_with("0-") ? parse_u64(id.substr(2)) : 0;
}

// A stream number no other process picks: random, below 2^53 (exact in every JSON number).
std::uint64_t random_stream_number() {
    std::uint64_t n = 0;
    while (n == 0) {
        if (RAND_bytes(reinterpret_cast<unsigned char*>(&n), sizeof n) != 1)
            n = std::random_device{}();
        n &= (std::uint64_t{1} << 53) - 1;
    }
    return n;
}

// A session's channel on the bus, and (under the key prefix) the key of its record.
std::string session_topic(std::string_view id) {
    return "s:" + std::string(id);
}

std::string random_tag() {
    unsigned char bytes[6];
    if (RAND_bytes(bytes, sizeof bytes) != 1)
        for (auto& b : bytes)
            b = static_cast<unsigned char>(std::random_device{}());
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (auto b : bytes) {
        out.push_back(digits[b >> 4]);
        out.push_back(digits[b & 15]);
    }
    return out;
}

void log_line(std::string const& s) {
    std::fprintf(stderr, "duet: %s\n", s.c_str());
}

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
    redis_store(asio::any_io_executor executor, redis_options where, memory_limits limits,
                std::chrono::milliseconds expiry)
        : strand_(asio::make_strand(executor)), where_(std::move(where)), limits_(limits), expiry_(expiry),
          tag_(random_tag()), bus_(make_redis_event_bus(executor, where_)) {}

    ~redis_store() override {
        beat_.cancel();
        if (commands_)
            commands_->stop();
    }

    void start() {
        std::weak_ptr<redis_store> weak = weak_from_this();
        commands_ = redis::connection::create(
            strand_, where_,
            {.ready =
                 [weak] {
                     if (auto self = weak.lock())
                         self->came_up();
                 },
             .lost =
                 [weak](std::string_view why) {
                     if (auto self = weak.lock(); self && self->up_.exchange(false))
                         log_line("lost Redis at " + self->where_.host + ':' +
                                  std::to_string(self->where_.port) + " (" + std::string(why) +
                                  "): legacy sessions get 503 until it is back");
                 },
             .message = nullptr,
             .subscribed = nullptr});
        commands_->start();
    }

    // ---- session_store
    // --------------------------------------------------------------------------------------

    std::shared_ptr<session> create(std::shared_ptr<session_local> local) override {
        {
            std::lock_guard lock(mutex_);
            if (sessions_.size() >= limits_.max_sessions)
                return nullptr;
        }
        auto s = make_session(mint_session_id(), std::move(local));
        s->set_loaded_state({}, true);
        command({"HSET", s->key(), "state", "", "home", tag_});
        command({"PEXPIRE", s->key(), std::to_string(expiry_.count())});
        hold(s);
        return s;
    }

    std::shared_ptr<session> find(std::string_view id) override {
        std::lock_guard lock(mutex_);
        auto it = sessions_.find(id);
        if (it == sessions_.end() || it->second->ended() || it->second->gone())
            return nullptr;
        return it->second;
    }

    std::shared_ptr<session> remove(std::string_view id) override {
        std::shared_ptr<redis_session> s;
        {
            std::lock_guard lock(mutex_);
            auto it = sessions_.find(id);
            if (it == sessions_.end())
                return nullptr;
            s = std::move(it->second);
            sessions_.erase(it);
        }
        // Ended everywhere: its keys go, and every process holding it hears so.
        std::vector<std::string> del{"DEL", s->key(), s->streams_key(), s->stream_key(0)};
        for (auto n : s->stream_numbers())
            del.push_back(s->stream_key(n));
        command(std::move(del));
        // Every process holding it (this one too: it keeps listening until then) says it let go; flush()
        // waits for that, so the client's next request finds the session on none of them.
        s->mark_gone();
        {
            std::lock_guard lock(mutex_);
            removals_[s->id()].session = s;
        }
        command({"PUBLISH", s->key(), "X"},
                [self = shared_from_this(), id = s->id()](std::optional<reply> r) {
                    auto const holders = r && r->type == reply::kind::integer ? r->integer : 0;
                    self->removal_expected(id, holders);
                });
        // A holder that died without answering is not waited for past the connect timeout.
        auto timer = std::make_shared<asio::steady_timer>(strand_, where_.connect_timeout);
        timer->async_wait([weak = weak_from_this(), id = s->id(), timer](boost::system::error_code) {
            if (auto self = weak.lock())
                self->removal_expected(id, 0);
        });
        return s;
    }

    std::vector<std::shared_ptr<session>> expire(std::chrono::milliseconds idle) override {
        auto const cutoff = std::chrono::steady_clock::now() - idle;
        std::vector<std::shared_ptr<session>> out;
        {
            std::lock_guard lock(mutex_);
            for (auto it = sessions_.begin(); it != sessions_.end();) {
                if (it->second->gone() || it->second->ended() || it->second->last_seen() < cutoff) {
                    out.push_back(std::move(it->second));
                    it = sessions_.erase(it);
                } else {
                    ++it;
                }
            }
        }
        for (auto const& s : out)
            bus_->unsubscribe(static_cast<redis_session&>(*s).bus_token);
        return out;
    }

    std::vector<std::shared_ptr<session>> all() override {
        std::lock_guard lock(mutex_);
        std::vector<std::shared_ptr<session>> out;
        for (auto const& [id, s] : sessions_)
            out.push_back(s);
        return out;
    }

    std::size_t size() const override {
        std::lock_guard lock(mutex_);
        return sessions_.size();
    }

    bool shared() const noexcept override { return true; }
    bool available() const noexcept override { return up_ || !ever_up_; }
    std::string process_tag() const override { return tag_; }

    void find_async(std::string id, std::function<void(std::shared_ptr<session>)> done) override {
        if (auto held = find(id))
            return done(std::move(held));
        {
            std::lock_guard lock(mutex_);
            auto& waiting = loading_[id];
            waiting.push_back(std::move(done));
            if (waiting.size() > 1)
                return; // already being loaded
        }
        asio::post(strand_, [self = shared_from_this(), id = std::move(id)] { self->load(id); });
    }

    void flush(std::function<void()> done) override {
        command({"PING"}, [self = shared_from_this(), done = std::move(done)](std::optional<reply>) mutable {
            self->after_removals(std::move(done));
        });
    }

    // ---- removals: a session ended here, until every process holding it let go ----------------------------

    void removal_expected(std::string const& id, long long holders) {
        std::lock_guard lock(mutex_);
        if (auto it = removals_.find(id); it != removals_.end()) {
            // The timeout's 0 settles it; a count after the timeout finds it gone.
            it->second.expected = it->second.expected < 0 ? holders : std::min(it->second.expected, holders);
            settle_removal(it);
        }
    }

    void removal_acknowledged(std::string const& id) {
        std::lock_guard lock(mutex_);
        if (auto it = removals_.find(id); it != removals_.end()) {
            ++it->second.acknowledged;
            settle_removal(it);
        }
    }

    // ---- for the sessions ---------------------------------------------------------------------------------

    /// Sends a command (from any thread). Until the connection first comes up, commands wait for it (a
    /// process serves as soon as it starts); after, one sent while Redis is away fails at once.
    void command(std::vector<std::string> args, redis::connection::done d = nullptr) {
        if (!d)
            d = [](std::optional<reply>) {
            };
        asio::post(strand_, [self = shared_from_this(), args = std::move(args), d = std::move(d)]() mutable {
            self->send_or_hold(std::move(args), std::move(d));
        });
    }

    void append(redis_session& s, std::uint64_t number, char kind, std::string data) {
        command({"EVAL", append_script, "2", s.stream_key(number), s.key(),
                 std::to_string(limits_.replay_events), std::string(1, kind), std::move(data),
                 std::to_string(expiry_.count()), std::to_string(number)});
    }

    void read_stream(std::shared_ptr<redis_session> const& s, std::uint64_t number, std::uint64_t after,
                     std::function<void()> then = nullptr) {
        command({"XRANGE", s->stream_key(number), "0-" + std::to_string(after + 1), "+"},
                [s, number, then = std::move(then)](std::optional<reply> r) {
                    if (r)
                        s->fill(number, *r);
                    if (then)
                        then();
                });
    }

    // This process is alive while its key is: renewed every second, gone three seconds after it stops. Each
    // beat also looks for streams whose serving process is gone (redis_session::check_losses).
    void heartbeat() {
        commands_->command({"SET", process_key(tag_), "1", "PX", std::to_string(liveness.count())},
                           [](std::optional<reply>) {});
        std::vector<std::shared_ptr<redis_session>> held;
        {
            std::lock_guard lock(mutex_);
            for (auto const& [id, s] : sessions_)
                held.push_back(s);
        }
        for (auto const& s : held)
            s->check_losses(*this);
        beat_.expires_after(liveness / 3);
        beat_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
            if (auto self = weak.lock(); self && !ec)
                self->heartbeat();
        });
    }

    // On the strand.
    void send_or_hold(std::vector<std::string> args, redis::connection::done d) {
        if (ever_up_ || held_.size() >= max_held_commands)
            return commands_->command(args, std::move(d));
        held_.emplace_back(std::move(args), std::move(d));
    }

    [[nodiscard]] std::string process_key(std::string const& tag) const {
        return where_.key_prefix + "proc:" + tag;
    }

    void came_up() {
        if (!ever_up_)
            heartbeat();
        up_ = true;
        ever_up_ = true;
        auto held = std::exchange(held_, {});
        for (auto& [args, d] : held)
            commands_->command(args, std::move(d));
    }

    [[nodiscard]] std::chrono::milliseconds expiry() const noexcept { return expiry_; }

private:
    struct removal {
        std::shared_ptr<redis_session> session; ///< still listening for the holders' answers
        long long expected = -1;                ///< holders PUBLISH reached; -1 until its reply
        long long acknowledged = 0;
    };

    // `mutex_` held. A removal every holder acknowledged (or that Redis could not count, or timed out) is
    // over: the session stops listening and whoever waited in flush() goes on.
    void settle_removal(std::map<std::string, removal, std::less<>>::iterator it) {
        if (it->second.expected < 0 || it->second.acknowledged < it->second.expected)
            return;
        bus_->unsubscribe(it->second.session->bus_token);
        removals_.erase(it);
        if (!removals_.empty())
            return;
        for (auto& done : std::exchange(after_removals_, {}))
            asio::post(strand_, std::move(done));
    }

    // Runs `done` once no removal is waiting for its holders.
    void after_removals(std::function<void()> done) {
        {
            std::lock_guard lock(mutex_);
            if (!removals_.empty()) {
                after_removals_.push_back(std::move(done));
                return;
            }
        }
        done();
    }

    std::shared_ptr<redis_session> make_session(std::string id, std::shared_ptr<session_local> local) {
        auto s = std::make_shared<redis_session>(weak_from_this(), std::move(id), std::move(local),
                                                 where_.key_prefix, limits_, tag_);
        s->init();
        return s;
    }

    // The session's notes reach it from now on.
    void listen(std::shared_ptr<redis_session> const& s) {
        s->bus_token =
            bus_->subscribe(s->topic(), [weak = std::weak_ptr<redis_session>(s)](std::string_view note) {
                if (auto live = weak.lock())
                    live->heard(note);
            });
    }

    // Held here, listening.
    void hold(std::shared_ptr<redis_session> const& s) {
        listen(s);
        std::lock_guard lock(mutex_);
        sessions_.emplace(s->id(), s);
    }

    // A session another process opened: whether it exists, then (subscribed, so that every change made
    // from then on is heard) its record and its streams as Redis holds them.
    void load(std::string const& id) {
        command({"EXISTS", where_.key_prefix + session_topic(id)},
                [self = shared_from_this(), id](std::optional<reply> r) {
                    if (!r || r->type != reply::kind::integer || r->integer != 1)
                        return self->loaded(id, nullptr);
                    self->subscribe_then_read(self->make_session(id, nullptr));
                });
    }

    void subscribe_then_read(std::shared_ptr<redis_session> s) {
        listen(s);
        // The subscription is confirmed once a publish made after it comes back (a marker of its own: the
        // bus holds it until then); then the streams as Redis holds them. Given up after the connect
        // timeout: Redis is away.
        auto settled = std::make_shared<std::atomic<bool>>(false);
        auto timer = std::make_shared<asio::steady_timer>(strand_, where_.connect_timeout);
        timer->async_wait([self = shared_from_this(), s, settled, timer](boost::system::error_code) {
            if (settled->exchange(true))
                return;
            self->bus_->unsubscribe(s->bus_token);
            self->loaded(s->id(), nullptr);
        });
        auto const marker = "R" + std::to_string(random_stream_number());
        s->on_marker(marker, [self = shared_from_this(), s, settled, timer] {
            asio::post(self->strand_, [self, s, settled, timer] {
                if (settled->load())
                    return;
                self->read_streams(s, settled, timer);
            });
        });
        bus_->publish(s->topic(), marker);
    }

    void read_streams(std::shared_ptr<redis_session> const& s, std::shared_ptr<std::atomic<bool>> settled,
                      std::shared_ptr<asio::steady_timer> timer) {
        commands_->command(
            {"HMGET", s->key(), "state", "home"}, [self = shared_from_this(), s](std::optional<reply> r) {
                if (r && r->type == reply::kind::array && r->elements.size() == 2 &&
                    r->elements[0].type == reply::kind::string)
                    s->set_loaded_state(r->elements[0].text, r->elements[1].text == self->tag_);
                else
                    s->mark_gone(); // ended meanwhile: loaded(), below, finds it so
            });
        commands_->command({"HGETALL", s->streams_key()}, [self = shared_from_this(), s, settled,
                                                           timer](std::optional<reply> r) {
            std::vector<std::uint64_t> numbers{0};
            // Pairs of a stream's number and its origin ("OWNER ON_LOSS").
            for (std::size_t i = 0; r && i + 1 < r->elements.size(); i += 2) {
                auto const n = parse_u64(r->elements[i].text);
                if (n == 0)
                    continue;
                numbers.push_back(n);
                auto const& origin = r->elements[i + 1].text;
                auto const space = origin.find(' ');
                s->mirror(n, true)->set_origin(origin.substr(0, space), space == std::string::npos
                                                                            ? std::string()
                                                                            : origin.substr(space + 1));
            }
            auto left = std::make_shared<std::size_t>(numbers.size());
            for (auto n : numbers) {
                s->mirror(n, true);
                self->read_stream(s, n, 0, [self, s, left, settled, timer] {
                    if (--*left != 0 || settled->exchange(true))
                        return;
                    timer->cancel();
                    self->loaded(s->id(), s);
                });
            }
        });
    }

    void loaded(std::string const& id, std::shared_ptr<redis_session> s) {
        std::vector<std::function<void(std::shared_ptr<session>)>> waiting;
        {
            std::lock_guard lock(mutex_);
            waiting = std::move(loading_[id]);
            loading_.erase(id);
            if (s)
                sessions_.emplace(id, s);
        }
        for (auto& done : waiting)
            done(s);
    }

    redis::strand strand_;
    redis_options const where_;
    memory_limits const limits_;
    std::chrono::milliseconds const expiry_;
    std::string const tag_;
    std::shared_ptr<event_bus> const bus_;
    std::shared_ptr<redis::connection> commands_;
    std::atomic<bool> up_{false};
    std::atomic<bool> ever_up_{false};
    asio::steady_timer beat_{strand_};
    std::deque<std::pair<std::vector<std::string>, redis::connection::done>> held_; ///< strand only
    mutable std::mutex mutex_;
    std::map<std::string, std::shared_ptr<redis_session>, std::less<>> sessions_;
    std::map<std::string, std::vector<std::function<void(std::shared_ptr<session>)>>, std::less<>> loading_;
    std::map<std::string, removal, std::less<>> removals_;
    std::vector<std::function<void()>> after_removals_;
};

// ---- redis_session
// ------------------------------------------------------------------------------------------

void redis_session::touch() {
    auto const now = std::chrono::steady_clock::now();
    last_seen_ = now;
    auto store = store_.lock();
    if (!store)
        return;
    // Renewed in Redis at most once a second per process (a quarter of the expiry when that is shorter): the
    // expiry is minutes, the traffic may be thousands of requests a second.
    auto const every =
        std::min<std::chrono::steady_clock::duration>(std::chrono::seconds(1), store->expiry() / 4);
    if (now - last_renewed_.load() < every)
        return;
    last_renewed_ = now;
    auto const ms = std::to_string(store->expiry().count());
    store->command({"PEXPIRE", key_, ms}, [weak = weak_from_this()](std::optional<reply> r) {
        if (auto self = weak.lock(); self && r && r->type == reply::kind::integer && r->integer == 0)
            self->mark_gone(); // expired or deleted meanwhile: the sweep ends it here
    });
    store->command({"PEXPIRE", streams_key(), ms});
    store->command({"PEXPIRE", stream_key(0), ms});
}

std::shared_ptr<event_log> redis_session::open_stream(std::string on_loss) {
    auto const n = random_stream_number();
    auto s = mirror(n, true);
    s->set_origin(tag_, on_loss);
    if (auto store = store_.lock()) {
        // Its origin with it: whoever resumes it knows whom it waits for, and what to say should they be
        // gone.
        auto origin = tag_ + ' ' + on_loss;
        store->command({"HSET", streams_key(), std::to_string(n), origin});
        store->command({"PEXPIRE", streams_key(), std::to_string(store->expiry().count())});
        store->command({"PUBLISH", key_, "O" + std::to_string(n) + ' ' + origin}); // resumable from now on
    }
    return s;
}

void redis_session::check_losses(redis_store& store) {
    std::vector<std::shared_ptr<redis::mirror_log>> mirrors;
    {
        std::lock_guard lock(mutex_);
        for (auto const& [n, m] : streams_)
            mirrors.push_back(m);
    }
    for (auto const& m : mirrors) {
        auto due = m->loss_candidate(tag_);
        if (!due)
            continue;
        store.command(
            {"EXISTS", store.process_key(due->first)},
            [self = shared_from_this(), m, answer = std::move(due->second)](std::optional<reply> r) {
                if (!r || r->type != reply::kind::integer || r->integer != 0)
                    return; // alive, or Redis cannot tell now
                m->loss_reported();
                self->append(m->number(), 'f', answer);
            });
    }
}

std::shared_ptr<redis::mirror_log> redis_session::mirror(std::uint64_t number, bool make) {
    if (number == 0)
        return std::static_pointer_cast<redis::mirror_log>(standalone_);
    std::vector<std::uint64_t> dropped;
    std::shared_ptr<redis::mirror_log> out;
    {
        std::lock_guard lock(mutex_);
        if (auto it = streams_.find(number); it != streams_.end())
            return it->second;
        if (!make)
            return nullptr;
        // Beyond the bound, the oldest stream no client reads is forgotten here.
        for (auto it = opened_.begin(); opened_.size() >= limits_.resumable_streams && it != opened_.end();) {
            auto s = streams_.find(*it);
            if (s != streams_.end() && s->second->has_reader()) {
                ++it;
                continue;
            }
            if (s != streams_.end())
                streams_.erase(s);
            dropped.push_back(*it);
            it = opened_.erase(it);
        }
        out = std::make_shared<redis::mirror_log>(number, limits_.replay_events, weak_from_this());
        streams_.emplace(number, out);
        opened_.push_back(number);
    }
    return out;
}

void redis_session::forget_stream(std::uint64_t number) {
    {
        std::lock_guard lock(mutex_);
        streams_.erase(number);
        std::erase(opened_, number);
    }
    if (auto store = store_.lock()) {
        store->command({"HDEL", streams_key(), std::to_string(number)});
        store->command({"DEL", stream_key(number)});
        store->command({"PUBLISH", key_, "F" + std::to_string(number)});
    }
}

void redis_session::save_state(std::string state) {
    {
        std::lock_guard lock(mutex_);
        state_ = state;
    }
    if (auto store = store_.lock()) {
        store->command({"HSET", key_, "state", state});
        store->command({"PUBLISH", key_, "S" + tag_ + ' ' + state});
    }
}

void redis_session::claim_events() {
    if (events_here_.exchange(true))
        return;
    if (auto* l = local())
        l->on_events_here(true);
    if (auto store = store_.lock()) {
        store->command({"HSET", key_, "home", tag_});
        store->command({"PUBLISH", key_, "H" + tag_});
    }
}

void redis_session::append(std::uint64_t number, char kind, std::string data) {
    if (auto store = store_.lock())
        store->append(*this, number, kind, std::move(data));
}

void redis_session::note(std::string text) {
    if (auto store = store_.lock())
        store->command({"PUBLISH", key_, std::move(text)});
}

void redis_session::refill(std::uint64_t number, std::uint64_t after) {
    if (auto store = store_.lock())
        store->read_stream(shared_from_this(), number, after);
}

void redis_session::fill(std::uint64_t number, reply const& entries) {
    auto m = mirror(number, false);
    if (!m)
        return;
    for (auto const& e : entries.elements) {
        if (e.elements.size() != 2 || e.elements[1].elements.size() != 2)
            continue;
        auto const& fields = e.elements[1].elements;
        auto const& kind = fields[0].text;
        if (kind.size() == 1)
            m->take(seq_of(e.elements[0].text), kind[0], fields[1].text, false);
    }
}

// "E<n> <seq> <kind> <data>", "B<payload>", "S<tag> <state>", "H<tag>", "O<n> <owner> <on_loss>" (opened),
// "A<n> <tag> <0|1>", "D<n> <tag>", "C<n>", "F<n>", "X" (ended), "K" (a holder let go of it).
void redis_session::heard(std::string_view text) {
    if (text.empty())
        return;
    auto const what = text.front();
    auto rest = text.substr(1);
    auto word = [&rest]() {
        auto const space = rest.find(' ');
        auto const w = rest.substr(0, space);
        rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
        return w;
    };
    switch (what) {
    case 'E': {
        auto const number = parse_u64(word());
        auto const seq = parse_u64(word());
        auto const kind = word();
        if (auto m = mirror(number, true); m && kind.size() == 1)
            m->take(seq, kind[0], std::string(rest), true);
        break;
    }
    case 'B':
        if (auto* l = local())
            l->on_broadcast(rest);
        break;
    case 'S': {
        auto const from = word();
        if (from == tag_)
            break;
        {
            std::lock_guard lock(mutex_);
            state_ = std::string(rest);
            state_noted_ = true;
        }
        if (auto* l = local())
            l->on_state(rest);
        break;
    }
    case 'H': {
        bool const here = rest == tag_;
        {
            std::lock_guard lock(mutex_);
            home_noted_ = true;
        }
        if (events_here_.exchange(here) != here)
            if (auto* l = local())
                l->on_events_here(here);
        break;
    }
    case 'A': {
        auto const number = parse_u64(word());
        auto const from = std::string(word());
        if (auto m = mirror(number, false))
            m->reader_attached(from, rest == "1");
        break;
    }
    case 'D': {
        auto const number = parse_u64(word());
        if (auto m = mirror(number, false))
            m->reader_detached(std::string(rest));
        break;
    }
    case 'O': {
        auto const number = parse_u64(word());
        auto const owner = std::string(word());
        if (auto m = mirror(number, true); m && number != 0)
            m->set_origin(owner, std::string(rest));
        break;
    }
    case 'C':
        if (auto m = mirror(parse_u64(rest), false))
            m->close_requested();
        break;
    case 'F': {
        std::lock_guard lock(mutex_);
        auto const number = parse_u64(rest);
        streams_.erase(number);
        std::erase(opened_, number);
        break;
    }
    case 'R': {
        std::function<void()> then;
        {
            std::lock_guard lock(mutex_);
            if (text != marker_)
                break;
            then = std::move(marker_then_);
            marker_then_ = nullptr;
        }
        if (then)
            then();
        break;
    }
    case 'X':
        if (!gone_.exchange(true)) { // not already known gone here (ended by this process, or expired)
            end();
            if (auto* l = local())
                l->on_ended();
        }
        note("K"); // let go of: the process ending it answers its client once every holder has
        break;
    case 'K':
        if (auto store = store_.lock())
            store->removal_acknowledged(id_);
        break;
    default:
        break; // a marker of the bus's, or a note of a later build
    }
}

} // namespace

std::shared_ptr<session_store> make_redis_session_store(asio::any_io_executor executor, redis_options where,
                                                        memory_limits limits,
                                                        std::chrono::milliseconds expiry) {
    std::signal(SIGPIPE, SIG_IGN);
    auto store = std::make_shared<redis_store>(std::move(executor), std::move(where), limits, expiry);
    store->start();
    return store;
}

} // namespace duet::store
