// The Redis session store's session_store side (session_store.hpp has the key layout): creating, finding,
// removing and expiring the sessions this process holds, and a removal's wait for every holder to let go.
// Apart from the commands (session_commands.cpp) and the loading of a session opened elsewhere
// (session_loading.cpp), which this side only starts.
#include "session_store.hpp"

#include "../session_id.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <csignal>

namespace duet::store {

namespace asio = boost::asio;

namespace redis {

// ---- session_store ----------------------------------------------------------------------------------------

std::shared_ptr<session> redis_store::create(std::shared_ptr<session_local> local) {
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

std::shared_ptr<session> redis_store::find(std::string_view id) {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second->ended() || it->second->gone())
        return nullptr;
    return it->second;
}

std::shared_ptr<session> redis_store::remove(std::string_view id) {
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
    command({"PUBLISH", s->key(), "X"}, [self = shared_from_this(), id = s->id()](std::optional<reply> r) {
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

std::vector<std::shared_ptr<session>> redis_store::expire(std::chrono::milliseconds idle) {
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

std::vector<std::shared_ptr<session>> redis_store::all() {
    std::lock_guard lock(mutex_);
    std::vector<std::shared_ptr<session>> out;
    for (auto const& [id, s] : sessions_)
        out.push_back(s);
    return out;
}

std::size_t redis_store::size() const {
    std::lock_guard lock(mutex_);
    return sessions_.size();
}

void redis_store::find_async(std::string id, std::function<void(std::shared_ptr<session>)> done) {
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

void redis_store::flush(std::function<void()> done) {
    command({"PING"}, [self = shared_from_this(), done = std::move(done)](std::optional<reply>) mutable {
        self->after_removals(std::move(done));
    });
}

// ---- removals: a session ended here, until every process holding it let go --------------------------------

void redis_store::removal_expected(std::string const& id, long long holders) {
    std::lock_guard lock(mutex_);
    if (auto it = removals_.find(id); it != removals_.end()) {
        // The timeout's 0 settles it; a count after the timeout finds it gone.
        it->second.expected = it->second.expected < 0 ? holders : std::min(it->second.expected, holders);
        settle_removal(it);
    }
}

void redis_store::removal_acknowledged(std::string const& id) {
    std::lock_guard lock(mutex_);
    if (auto it = removals_.find(id); it != removals_.end()) {
        ++it->second.acknowledged;
        settle_removal(it);
    }
}

// `mutex_` held. A removal every holder acknowledged (or that Redis could not count, or timed out) is
// over: the session stops listening and whoever waited in flush() goes on.
void redis_store::settle_removal(std::map<std::string, removal, std::less<>>::iterator it) {
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
void redis_store::after_removals(std::function<void()> done) {
    {
        std::lock_guard lock(mutex_);
        if (!removals_.empty()) {
            after_removals_.push_back(std::move(done));
            return;
        }
    }
    done();
}

// ---- the sessions it holds --------------------------------------------------------------------------------

std::shared_ptr<redis_session> redis_store::make_session(std::string id,
                                                         std::shared_ptr<session_local> local) {
    auto s = std::make_shared<redis_session>(weak_from_this(), std::move(id), std::move(local),
                                             where_.key_prefix, limits_, tag_);
    s->init();
    return s;
}

// The session's notes reach it from now on.
void redis_store::listen(std::shared_ptr<redis_session> const& s) {
    s->bus_token =
        bus_->subscribe(s->topic(), [weak = std::weak_ptr<redis_session>(s)](std::string_view note) {
            if (auto live = weak.lock())
                live->heard(note);
        });
}

// Held here, listening.
void redis_store::hold(std::shared_ptr<redis_session> const& s) {
    listen(s);
    std::lock_guard lock(mutex_);
    sessions_.emplace(s->id(), s);
}

} // namespace redis

std::shared_ptr<session_store> make_redis_session_store(asio::any_io_executor executor, redis_options where,
                                                        memory_limits limits,
                                                        std::chrono::milliseconds expiry) {
    std::signal(SIGPIPE, SIG_IGN);
    auto store = std::make_shared<redis::redis_store>(std::move(executor), std::move(where), limits, expiry);
    store->start();
    return store;
}

} // namespace duet::store
