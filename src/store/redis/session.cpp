// One legacy session shared through Redis, as this process holds it (redis_session in session_store.hpp):
// its operations, each written to Redis through the store, and its streams' mirrors. The notes it hears from
// other processes are in session_notes.cpp.
#include "session_store.hpp"

#include <openssl/rand.h>

#include <charconv>
#include <random>

namespace duet::store::redis {

// ---- what the parts share (declared in session_store.hpp) -------------------------------------------------

std::uint64_t parse_u64(std::string_view s) {
    std::uint64_t v = 0;
    auto const [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && end == s.data() + s.size() ? v : 0;
}

std::uint64_t seq_of(std::string_view id) {
    return id.starts_with("0-") ? parse_u64(id.substr(2)) : 0;
}

std::uint64_t random_stream_number() {
    std::uint64_t n = 0;
    while (n == 0) {
        if (RAND_bytes(reinterpret_cast<unsigned char*>(&n), sizeof n) != 1)
            n = std::random_device{}();
        n &= (std::uint64_t{1} << 53) - 1;
    }
    return n;
}

std::string session_topic(std::string_view id) {
    return "s:" + std::string(id);
}

// ---- redis_session ----------------------------------------------------------------------------------------

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

} // namespace duet::store::redis
