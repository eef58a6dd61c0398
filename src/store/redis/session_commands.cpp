// The Redis session store's commands: its one connection to Redis, the commands held until Redis first
// answers, the appends and reads the sessions' streams ask for, and the heartbeat that says this process is
// alive. Apart from the session_store side (session_store.cpp) so that the path every request's commands take
// reads in one place.
#include "session_store.hpp"

#include <boost/asio/post.hpp>

#include <openssl/rand.h>

#include <cstdio>
#include <random>

namespace duet::store::redis {

namespace asio = boost::asio;

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

redis_store::redis_store(asio::any_io_executor executor, redis_options where, memory_limits limits,
                         std::chrono::milliseconds expiry)
    : strand_(asio::make_strand(executor)), where_(std::move(where)), limits_(limits), expiry_(expiry),
      tag_(random_tag()), bus_(make_redis_event_bus(executor, where_)) {}

redis_store::~redis_store() {
    beat_.cancel();
    if (commands_)
        commands_->stop();
}

void redis_store::start() {
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
                     log_line("lost Redis at " + self->where_.host + ':' + std::to_string(self->where_.port) +
                              " (" + std::string(why) + "): legacy sessions get 503 until it is back");
             },
         .message = nullptr,
         .subscribed = nullptr});
    commands_->start();
}

// ---- for the sessions -------------------------------------------------------------------------------------

void redis_store::command(std::vector<std::string> args, redis::connection::done d) {
    if (!d)
        d = [](std::optional<reply>) {
        };
    asio::post(strand_, [self = shared_from_this(), args = std::move(args), d = std::move(d)]() mutable {
        self->send_or_hold(std::move(args), std::move(d));
    });
}

void redis_store::append(redis_session& s, std::uint64_t number, char kind, std::string data) {
    command({"EVAL", append_script, "2", s.stream_key(number), s.key(), std::to_string(limits_.replay_events),
             std::string(1, kind), std::move(data), std::to_string(expiry_.count()), std::to_string(number)});
}

void redis_store::read_stream(std::shared_ptr<redis_session> const& s, std::uint64_t number,
                              std::uint64_t after, std::function<void()> then) {
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
void redis_store::heartbeat() {
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

void redis_store::send_or_hold(std::vector<std::string> args, redis::connection::done d) {
    if (ever_up_ || held_.size() >= max_held_commands)
        return commands_->command(args, std::move(d));
    held_.emplace_back(std::move(args), std::move(d));
}

void redis_store::came_up() {
    if (!ever_up_)
        heartbeat();
    up_ = true;
    ever_up_ = true;
    auto held = std::exchange(held_, {});
    for (auto& [args, d] : held)
        commands_->command(args, std::move(d));
}

} // namespace duet::store::redis
