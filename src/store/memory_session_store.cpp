#include "memory_session_store.hpp"

#include "memory_event_log.hpp"
#include "session_id.hpp"

namespace duet::store {

memory_session::memory_session(std::string id, std::shared_ptr<session_local> local,
                               memory_limits const& limits)
    : session(std::move(local)), id_(std::move(id)), replay_limit_(limits.replay_events),
      max_streams_(limits.resumable_streams),
      standalone_(std::make_shared<memory_event_log>(0, limits.replay_events)) {}

std::shared_ptr<event_log> memory_session::open_stream(std::string) {
    std::lock_guard lock(mutex_);
    auto s = std::make_shared<memory_event_log>(next_stream_++, replay_limit_);
    for (auto it = streams_.begin(); streams_.size() >= max_streams_ && it != streams_.end();) {
        if (it->second->has_reader())
            ++it;
        else
            it = streams_.erase(it);
    }
    streams_.emplace(s->number(), s);
    return s;
}

std::shared_ptr<event_log> memory_session::find_stream(std::uint64_t number) const {
    if (number == 0)
        return standalone_;
    std::lock_guard lock(mutex_);
    auto it = streams_.find(number);
    return it == streams_.end() ? nullptr : it->second;
}

void memory_session::forget_stream(std::uint64_t number) {
    std::lock_guard lock(mutex_);
    streams_.erase(number);
}

std::string memory_session::state() const {
    std::lock_guard lock(mutex_);
    return state_;
}

void memory_session::save_state(std::string state) {
    std::lock_guard lock(mutex_);
    state_ = std::move(state);
}

void memory_session::broadcast(std::string payload) {
    if (auto* l = local())
        l->on_broadcast(payload);
}

void memory_session::end() {
    ended_ = true;
    standalone_->wake();
}

std::shared_ptr<session> memory_session_store::create(std::shared_ptr<session_local> local) {
    std::lock_guard lock(mutex_);
    if (sessions_.size() >= limits_.max_sessions)
        return nullptr;
    auto s = std::make_shared<memory_session>(mint_session_id(), std::move(local), limits_);
    sessions_.emplace(s->id(), s);
    return s;
}

std::shared_ptr<session> memory_session_store::find(std::string_view id) {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second->ended())
        return nullptr;
    return it->second;
}

std::shared_ptr<session> memory_session_store::remove(std::string_view id) {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(id);
    if (it == sessions_.end())
        return nullptr;
    std::shared_ptr<session> s = std::move(it->second);
    sessions_.erase(it);
    return s;
}

std::vector<std::shared_ptr<session>> memory_session_store::expire(std::chrono::milliseconds idle) {
    auto const cutoff = std::chrono::steady_clock::now() - idle;
    std::vector<std::shared_ptr<session>> out;
    std::lock_guard lock(mutex_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
        if (it->second->last_seen() < cutoff) {
            out.push_back(std::move(it->second));
            it = sessions_.erase(it);
        } else {
            ++it;
        }
    }
    return out;
}

std::vector<std::shared_ptr<session>> memory_session_store::all() {
    std::lock_guard lock(mutex_);
    std::vector<std::shared_ptr<session>> out;
    out.reserve(sessions_.size());
    for (auto const& entry : sessions_)
        out.push_back(entry.second);
    return out;
}

std::size_t memory_session_store::size() const {
    std::lock_guard lock(mutex_);
    return sessions_.size();
}

std::shared_ptr<session_store> make_memory_session_store(memory_limits limits) {
    return std::make_shared<memory_session_store>(limits);
}

} // namespace duet::store
