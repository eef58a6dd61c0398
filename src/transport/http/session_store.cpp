#include "session_store.hpp"

#include <openssl/rand.h>

#include <array>
#include <stdexcept>

namespace duet::transport::http {

std::string mint_session_id() {
    std::array<unsigned char, 16> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
        throw std::runtime_error("the system random generator failed");
    static constexpr char digits[] = "0123456789abcdef";
    std::string id;
    id.reserve(bytes.size() * 2);
    for (auto b : bytes) {
        id += digits[b >> 4];
        id += digits[b & 15];
    }
    return id;
}

void legacy_session::publish(std::string line) {
    std::function<void()> wake;
    {
        std::lock_guard lock(mutex_);
        if (ended_)
            return;
        log_.push_back({next_event_id_++, std::move(line)});
        while (log_.size() > replay_limit_)
            log_.pop_front();
        wake = wake_;
    }
    if (wake)
        wake();
}

std::vector<legacy_session::event> legacy_session::events_after(std::uint64_t last_seen) const {
    std::lock_guard lock(mutex_);
    std::vector<event> out;
    for (auto const& e : log_)
        if (e.id > last_seen)
            out.push_back(e);
    return out;
}

std::uint64_t legacy_session::attach(std::function<void()> wake, bool take_over) {
    std::function<void()> previous;
    std::uint64_t token = 0;
    {
        std::lock_guard lock(mutex_);
        if (ended_ || (stream_ != 0 && !take_over))
            return 0;
        previous = std::move(wake_);
        token = stream_ = next_stream_++;
        wake_ = std::move(wake);
    }
    if (previous)
        previous(); // the superseded stream wakes, finds itself detached, and ends
    return token;
}

void legacy_session::detach(std::uint64_t token) {
    std::lock_guard lock(mutex_);
    if (stream_ != token)
        return;
    stream_ = 0;
    wake_ = nullptr;
}

bool legacy_session::attached(std::uint64_t token) const {
    std::lock_guard lock(mutex_);
    return token != 0 && stream_ == token;
}

void legacy_session::end() {
    std::function<void()> wake;
    {
        std::lock_guard lock(mutex_);
        ended_ = true;
        wake = wake_;
    }
    if (wake)
        wake();
}

bool legacy_session::ended() const {
    std::lock_guard lock(mutex_);
    return ended_;
}

std::shared_ptr<legacy_session> session_store::create(std::size_t replay_limit) {
    std::lock_guard lock(mutex_);
    if (sessions_.size() >= max_)
        return nullptr;
    auto s = std::make_shared<legacy_session>(mint_session_id(), replay_limit);
    sessions_[s->id()] = s;
    return s;
}

std::shared_ptr<legacy_session> session_store::find(std::string const& id) {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(id);
    return it == sessions_.end() ? nullptr : it->second;
}

std::shared_ptr<legacy_session> session_store::remove(std::string const& id) {
    std::lock_guard lock(mutex_);
    auto node = sessions_.extract(id);
    return node.empty() ? nullptr : std::move(node.mapped());
}

std::vector<std::shared_ptr<legacy_session>> session_store::expire(std::chrono::milliseconds expiry) {
    auto const cutoff = std::chrono::steady_clock::now() - expiry;
    std::vector<std::shared_ptr<legacy_session>> out;
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

std::vector<std::shared_ptr<legacy_session>> session_store::all() {
    std::lock_guard lock(mutex_);
    std::vector<std::shared_ptr<legacy_session>> out;
    for (auto const& [id, s] : sessions_)
        out.push_back(s);
    return out;
}

std::size_t session_store::size() const {
    std::lock_guard lock(mutex_);
    return sessions_.size();
}

} // namespace duet::transport::http
