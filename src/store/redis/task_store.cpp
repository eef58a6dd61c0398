// Tasks shared through Redis (duet/store/task_store.hpp, duet/store/redis.hpp). Under the key prefix P:
//
//   P task:ID            hash: owner, body, terminal ("0"/"1"), expires (ms since the epoch, "0": never),
//                        rev (bumped by every update), runner (the tag of the store that made it). Redis
//                        expires it with the record.
//   P owner-tasks:OWNER  sorted set: the owner's record ids scored by their expiry (+inf: never), pruned of
//                        the expired before it is counted or listed; it expires with its last record.
//   P task-runner:TAG    string "1": the store tagged TAG (one per process: a random tag made with it) is
//                        alive. Set with a 3 s expiry when the store first reaches Redis (and again each
//                        time it reaches it anew), before any record of its is made, and renewed every
//                        second; deleted when the store ends, since a process that ends, however gracefully,
//                        never finishes the tasks it was running either.
//
// The three names never overlap, whatever id a caller looks up. Time is Redis's own throughout: the scripts
// read TIME, and the record's key is set to expire by the same clock, so a record is gone from the
// millisecond `expires` names on, as in memory. A create is one script (count, refuse or keep); an update
// reads the record, asks the caller's change, and writes it with a script that checks the revision it read,
// reading again when another process changed it meanwhile.
//
// A record is read with a script (find, an update's read, each record of a list, pipelined) that answers in
// the same round trip whether it is orphaned: not terminal, and its runner's key gone (the store that made
// it ended, or has not renewed its key for 3 s). A record with no runner (made before runners were kept) is
// never orphaned. The script reaches a key the record names rather than one given in KEYS: fine on one
// Redis (or a replicated one), not on Redis Cluster, which these keys are not laid out for anyway.
#include <duet/store/redis.hpp>

#include "connection.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace duet::store {

namespace asio = boost::asio;

namespace {

using redis::reply;

// What a store holds back before its first attempt to reach Redis has settled (past it, operations fail).
constexpr std::size_t max_held_operations = 10000;

// How often an update reads and tries again when another process keeps changing the record under it.
constexpr int max_update_attempts = 100;

// How long a store's runner key outlives its last renewal; renewed three times as often.
constexpr std::chrono::milliseconds liveness{3000};

// How long an ending store waits for Redis to take its runner key away before it lets go of the connection.
constexpr std::chrono::seconds parting_limit{1};

// Keeps a record unless its owner is full or the id is taken. KEYS: the record, the owner's set. ARGV: id,
// owner, body, terminal, expires (ms, 0: never), the key's expiry (expires - 1 ms, since Redis keeps a key
// through the millisecond it names), the owner's bound, the runner's tag. Returns 0 kept, 1 owner full, 2
// taken. Now is Redis's TIME (Redis 5 and later replicate a script's effects, so a script may read it before
// it writes).
constexpr char const* create_script = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('%d', now))
local max = tonumber(ARGV[7])
if max == 0 or redis.call('ZCARD', KEYS[2]) >= max then return 1 end
if redis.call('EXISTS', KEYS[1]) == 1 then return 2 end
local expires = tonumber(ARGV[5])
if expires ~= 0 and expires <= now then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'body', ARGV[3], 'terminal', ARGV[4], 'expires', ARGV[5],
           'rev', '0', 'runner', ARGV[8])
if expires ~= 0 then redis.call('PEXPIREAT', KEYS[1], ARGV[6]) end
redis.call('ZADD', KEYS[2], expires == 0 and '+inf' or ARGV[5], ARGV[1])
local last = tonumber(redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')[2])
if last == math.huge then
    redis.call('PERSIST', KEYS[2])
else
    redis.call('PEXPIREAT', KEYS[2], string.format('%d', last))
end
return 0
)lua";

// The owner's live ids, pruned of the expired. KEYS: the owner's set.
constexpr char const* list_script = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now))
return redis.call('ZRANGE', KEYS[1], 0, -1)
)lua";

// A record's fields (HGETALL's, empty when there is none) and whether it is orphaned (1) or not (0). KEYS:
// the record. ARGV: what a runner's key is named after its tag (P task-runner:).
constexpr char const* read_script = R"lua(
local fields = redis.call('HGETALL', KEYS[1])
local runner, terminal
for i = 1, #fields, 2 do
    if fields[i] == 'runner' then
        runner = fields[i + 1]
    elseif fields[i] == 'terminal' then
        terminal = fields[i + 1]
    end
end
local orphaned = 0
if runner and terminal ~= '1' and redis.call('EXISTS', ARGV[1] .. runner) == 0 then orphaned = 1 end
return {fields, orphaned}
)lua";

// Writes an update unless the record changed since it was read. KEYS: the record. ARGV: the revision read,
// body, terminal. Returns 1 written, 0 changed (or gone) meanwhile.
constexpr char const* update_script = R"lua(
if redis.call('HGET', KEYS[1], 'rev') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'body', ARGV[2], 'terminal', ARGV[3])
redis.call('HINCRBY', KEYS[1], 'rev', 1)
return 1
)lua";

void log_line(std::string const& s) {
    std::fprintf(stderr, "duet: %s\n", s.c_str());
}

using sys_clock = std::chrono::system_clock;

// ms since the epoch, at least 1 (long past: it is never kept); 0 for never.
std::int64_t expiry_ms(sys_clock::time_point expires) {
    if (expires == sys_clock::time_point::max())
        return 0;
    auto const ms = std::chrono::duration_cast<std::chrono::milliseconds>(expires.time_since_epoch()).count();
    return std::max<std::int64_t>(ms, 1);
}

sys_clock::time_point expiry_from_ms(std::int64_t ms) {
    if (ms == 0)
        return sys_clock::time_point::max();
    return sys_clock::time_point(
        std::chrono::duration_cast<sys_clock::duration>(std::chrono::milliseconds(ms)));
}

std::optional<std::int64_t> parse_i64(std::string_view s) {
    std::int64_t v = 0;
    auto const [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size())
        return std::nullopt;
    return v;
}

// A record read with HGETALL, and the revision it was read at.
struct stored {
    task_record record;
    std::string rev;
};

// nullopt: no such record (gone, expired, or not a whole record). `answer` is what read_script returns.
std::optional<stored> parse_record(std::string id, reply const& answer) {
    if (answer.type != reply::kind::array || answer.elements.size() != 2)
        return std::nullopt;
    auto const& r = answer.elements[0];
    if (r.type != reply::kind::array || r.elements.empty())
        return std::nullopt;
    std::map<std::string_view, std::string_view> fields;
    for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2)
        fields.emplace(r.elements[i].text, r.elements[i + 1].text);
    auto const owner = fields.find("owner"), body = fields.find("body"), terminal = fields.find("terminal"),
               expires = fields.find("expires"), rev = fields.find("rev");
    if (owner == fields.end() || body == fields.end() || terminal == fields.end() ||
        expires == fields.end() || rev == fields.end())
        return std::nullopt;
    auto const ms = parse_i64(expires->second);
    if (!ms)
        return std::nullopt;
    stored out;
    out.record.id = std::move(id);
    out.record.owner = std::string(owner->second);
    out.record.body = std::string(body->second);
    out.record.terminal = terminal->second == "1";
    out.record.expires = expiry_from_ms(*ms);
    out.record.orphaned = !out.record.terminal && answer.elements[1].type == reply::kind::integer &&
                          answer.elements[1].integer == 1;
    out.rev = std::string(rev->second);
    return out;
}

template<class T>
using answer = std::function<void(boost::system::result<T, task_store::failure>)>;

// Says why, explicitly: a task_record is constructible from a string (C++20 aggregate initialization), so a
// result of one cannot tell a string's meaning by itself.
template<class T>
void fail(answer<T> const& done, task_store::failure why) {
    done(boost::system::result<T, task_store::failure>(boost::system::in_place_error, std::move(why)));
}

class redis_task_store final : public task_store, public std::enable_shared_from_this<redis_task_store> {
public:
    redis_task_store(asio::any_io_executor executor, redis_options where)
        : strand_(asio::make_strand(std::move(executor))), where_(std::move(where)),
          at_(where_.host + ':' + std::to_string(where_.port)), runner_key_(runner_key_prefix() + tag_),
          beat_(strand_) {}

    ~redis_task_store() override {
        if (!commands_)
            return;
        // The runner key goes first, so that other processes learn at once that this one's tasks will never
        // finish; then the connection. Commands still waiting for Redis are answered before the DEL is, and
        // their callers get a failure (see closed()).
        struct parting {
            std::shared_ptr<redis::connection> commands;
            asio::steady_timer limit;
        };
        auto p = std::make_shared<parting>(parting{commands_, asio::steady_timer(strand_)});
        asio::post(strand_, [p, key = runner_key_] {
            if (!p->commands->ready())
                return p->commands->stop();
            // A Redis that never answers is not waited for: the key then lapses by itself.
            p->limit.expires_after(parting_limit);
            p->limit.async_wait([p](boost::system::error_code ec) {
                if (!ec)
                    p->commands->stop();
            });
            p->commands->command({"DEL", key}, [p](std::optional<reply>) {
                p->limit.cancel();
                p->commands->stop();
            });
        });
    }

    void start() {
        std::weak_ptr<redis_task_store> weak = weak_from_this();
        commands_ = redis::connection::create(strand_, where_,
                                              {.ready =
                                                   [weak] {
                                                       if (auto self = weak.lock())
                                                           self->came_up();
                                                   },
                                               .lost =
                                                   [weak](std::string_view why) {
                                                       if (auto self = weak.lock())
                                                           self->went_away(why);
                                                   },
                                               .message = nullptr,
                                               .subscribed = nullptr});
        commands_->start();
    }

    // ---- task_store ---------------------------------------------------------------------------------------

    void create(task_record r, std::size_t max_per_owner, answer<created> done) override {
        when_settled([self = shared_from_this(), r = std::move(r), max_per_owner,
                      done = std::move(done)]() mutable {
            auto const ms = expiry_ms(r.expires);
            auto const key = self->record_key(r.id), owner_key = self->owner_key(r.owner);
            self->send({"EVAL", create_script, "2", key, owner_key, r.id, r.owner, r.body,
                        r.terminal ? "1" : "0", std::to_string(ms), std::to_string(ms - 1),
                        std::to_string(max_per_owner), self->tag_},
                       [done = std::move(done)](boost::system::result<reply, failure> got) {
                           if (!got)
                               return fail(done, std::move(got).error());
                           switch (got->type == reply::kind::integer ? got->integer : -1) {
                           case 0:
                               return done(created::ok);
                           case 1:
                               return done(created::owner_full);
                           case 2:
                               return done(created::taken);
                           default:
                               return fail(done, "Redis answered a task creation with something unexpected");
                           }
                       });
        });
    }

    void find(std::string id, answer<std::optional<task_record>> done) override {
        when_settled([self = shared_from_this(), id = std::move(id), done = std::move(done)]() mutable {
            self->read(std::move(id),
                       [done = std::move(done)](boost::system::result<std::optional<stored>, failure> got) {
                           if (!got)
                               return fail(done, std::move(got).error());
                           if (!*got)
                               return done(std::optional<task_record>());
                           done(std::optional<task_record>(std::move((*got)->record)));
                       });
        });
    }

    void update(std::string id, change c, answer<std::optional<task_record>> done) override {
        auto op = std::make_shared<update_op>(update_op{std::move(id), std::move(c), std::move(done), 0});
        when_settled([self = shared_from_this(), op]() { self->attempt(op); });
    }

    void list(std::string owner, std::string after, std::size_t limit, answer<page> done) override {
        auto op = std::make_shared<list_op>();
        op->owner = std::move(owner);
        op->after = std::move(after);
        op->limit = std::max<std::size_t>(limit, 1); // a page always shows something, so paging ends
        op->done = std::move(done);
        when_settled([self = shared_from_this(), op]() {
            self->send({"EVAL", list_script, "1", self->owner_key(op->owner)},
                       [weak = self->weak_from_this(), op](boost::system::result<reply, failure> got) {
                           auto store = weak.lock();
                           if (!got || !store)
                               return fail(op->done, got ? closed() : std::move(got).error());
                           if (got->type != reply::kind::array)
                               return fail(op->done, "Redis answered a task list with something unexpected");
                           for (auto& e : got->elements)
                               if (op->after.empty() || e.text > op->after)
                                   op->ids.push_back(std::move(e.text));
                           std::sort(op->ids.begin(), op->ids.end());
                           store->load_page(op);
                       });
        });
    }

    [[nodiscard]] bool shared() const noexcept override { return true; }

private:
    struct update_op {
        std::string id;
        change c;
        answer<std::optional<task_record>> done;
        int attempts;
    };

    struct list_op {
        std::string owner;
        std::string after;
        std::size_t limit = 1;
        answer<page> done;
        std::vector<std::string> ids; ///< the owner's live ids after `after`, in order
        std::size_t next = 0;         ///< the first of `ids` not loaded yet
        std::vector<task_record> found;
    };

    [[nodiscard]] std::string record_key(std::string_view id) const {
        return where_.key_prefix + "task:" + std::string(id);
    }
    [[nodiscard]] std::string owner_key(std::string_view owner) const {
        return where_.key_prefix + "owner-tasks:" + std::string(owner);
    }

    [[nodiscard]] std::string runner_key_prefix() const { return where_.key_prefix + "task-runner:"; }

    static failure closed() { return "the task store was closed before Redis answered"; }

    [[nodiscard]] failure unreachable() const {
        return "the task store cannot reach Redis at " + at_ + (why_.empty() ? "" : " (" + why_ + ")");
    }

    // ---- on the strand ------------------------------------------------------------------------------------

    /// Runs `then` on the strand once the first attempt to reach Redis has settled (at once after that), so a
    /// store used right after it is made waits for Redis rather than failing, and never longer than the
    /// connect timeout.
    void when_settled(std::function<void()> then) {
        asio::post(strand_, [self = shared_from_this(), then = std::move(then)]() mutable {
            if (self->settled_ || self->held_.size() >= max_held_operations)
                return then();
            self->held_.push_back(std::move(then));
        });
    }

    void release_held() {
        settled_ = true;
        auto held = std::exchange(held_, {});
        for (auto& then : held)
            then();
    }

    void came_up() {
        if (outage_reported_)
            log_line("Redis at " + at_ + " is back: task operations work again");
        outage_reported_ = false;
        why_.clear();
        // First on the connection: no record this store makes is ever seen without its runner key, even on
        // a Redis that lost everything while it was away.
        beat();
        release_held();
    }

    /// Renews the runner key (when Redis is there), and again in a second. Setting the timer cancels a wait
    /// still pending, so one chain of renewals runs at most, however often Redis comes back.
    void beat() {
        if (commands_->ready())
            commands_->command({"SET", runner_key_, "1", "PX", std::to_string(liveness.count())},
                               [](std::optional<reply>) {});
        beat_.expires_after(liveness / 3);
        beat_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
            if (auto self = weak.lock(); self && !ec)
                self->beat();
        });
    }

    void went_away(std::string_view why) {
        why_ = std::string(why);
        if (!outage_reported_) {
            outage_reported_ = true;
            log_line((settled_ ? "lost Redis at " : "cannot reach Redis at ") + at_ + " (" + why_ +
                     "): task operations fail until it is back");
        }
        release_held();
    }

    /// One command; `done` gets its reply, or a failure in words: Redis not ready or gone before answering,
    /// an error reply, or the store closed meanwhile. Runs on the strand, and so does `done`.
    void send(std::vector<std::string> const& args, answer<reply> done) {
        if (!commands_->ready())
            return fail(done, unreachable());
        commands_->command(args, [weak = weak_from_this(), done = std::move(done)](std::optional<reply> r) {
            auto self = weak.lock();
            if (!self)
                return fail(done, closed());
            if (!r)
                return fail(done, self->unreachable());
            if (r->is_error())
                return fail(done, "Redis at " + self->at_ + " refused a task store command: " + r->text);
            done(std::move(*r));
        });
    }

    void read(std::string id, answer<std::optional<stored>> done) {
        auto key = record_key(id);
        send({"EVAL", read_script, "1", std::move(key), runner_key_prefix()},
             [id = std::move(id), done = std::move(done)](boost::system::result<reply, failure> got) mutable {
                 if (!got)
                     return fail(done, std::move(got).error());
                 done(parse_record(std::move(id), *got));
             });
    }

    void attempt(std::shared_ptr<update_op> const& op) {
        read(op->id,
             [weak = weak_from_this(), op](boost::system::result<std::optional<stored>, failure> got) {
                 auto self = weak.lock();
                 if (!got || !self)
                     return fail(op->done, got ? closed() : std::move(got).error());
                 if (!*got || (*got)->record.terminal)
                     return op->done(std::optional<task_record>());
                 auto next = op->c((*got)->record);
                 if (!next)
                     return op->done(std::optional<task_record>());
                 auto changed = std::move((*got)->record);
                 changed.body = std::move(next->body);
                 changed.terminal = next->terminal;
                 changed.orphaned = changed.orphaned && !changed.terminal;
                 // Named first: the callback below takes `changed` over.
                 std::vector<std::string> const write{"EVAL",
                                                      update_script,
                                                      "1",
                                                      self->record_key(op->id),
                                                      (*got)->rev,
                                                      changed.body,
                                                      changed.terminal ? "1" : "0"};
                 self->send(write, [weak, op, changed = std::move(changed)](
                                       boost::system::result<reply, failure> written) mutable {
                     auto store = weak.lock();
                     if (!written || !store)
                         return fail(op->done, written ? closed() : std::move(written).error());
                     if (written->type == reply::kind::integer && written->integer == 1)
                         return op->done(std::optional<task_record>(std::move(changed)));
                     if (++op->attempts < max_update_attempts)
                         return store->attempt(op);
                     fail(op->done, "task " + op->id + " changed under each of " +
                                        std::to_string(max_update_attempts) + " attempts to update it");
                 });
             });
    }

    /// Loads the next of the candidates (pipelined): enough to fill the page and show whether one more
    /// follows, again when some were gone meanwhile.
    void load_page(std::shared_ptr<list_op> const& op) {
        auto const batch = op->found.size() > op->limit
                               ? 0
                               : std::min(op->limit + 1 - op->found.size(), op->ids.size() - op->next);
        if (batch == 0) {
            page out;
            out.more = op->found.size() > op->limit;
            if (out.more)
                op->found.resize(op->limit);
            out.records = std::move(op->found);
            return op->done(std::move(out));
        }
        struct loading {
            std::vector<std::optional<stored>> records;
            std::size_t answered = 0;
            std::optional<failure> failed;
        };
        auto state = std::make_shared<loading>();
        state->records.resize(batch);
        auto const first = op->next;
        op->next += batch;
        for (std::size_t i = 0; i < batch; ++i) {
            read(op->ids[first + i], [weak = weak_from_this(), op, state, i,
                                      batch](boost::system::result<std::optional<stored>, failure> got) {
                if (!got && !state->failed)
                    state->failed = std::move(got).error();
                else if (got)
                    state->records[i] = std::move(*got);
                if (++state->answered < batch)
                    return;
                auto self = weak.lock();
                if (state->failed || !self)
                    return fail(op->done, state->failed ? std::move(*state->failed) : closed());
                for (auto& s : state->records)
                    if (s && s->record.owner == op->owner)
                        op->found.push_back(std::move(s->record));
                self->load_page(op);
            });
        }
    }

    redis::strand strand_;
    redis_options const where_;
    std::string const at_; ///< host:port, for messages
    /// This store's runner tag (one process's), in every record it makes.
    std::string const tag_ = new_task_id();
    std::string const runner_key_; ///< P task-runner:TAG
    std::shared_ptr<redis::connection> commands_;
    asio::steady_timer beat_; ///< the next renewal of the runner key

    // strand only
    std::deque<std::function<void()>> held_;
    bool settled_ = false;         ///< the first attempt to reach Redis ended, one way or the other
    bool outage_reported_ = false; ///< said on stderr, once per outage
    std::string why_;              ///< why Redis is away, while it is
};

} // namespace

std::shared_ptr<task_store> make_redis_task_store(asio::any_io_executor executor, redis_options where) {
    // hiredis writes with write(2): a Redis gone away must not kill the process.
    std::signal(SIGPIPE, SIG_IGN);
    auto store = std::make_shared<redis_task_store>(std::move(executor), std::move(where));
    store->start();
    return store;
}

} // namespace duet::store
