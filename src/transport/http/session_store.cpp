#include "session_store.hpp"

#include "support/hex.hpp"

#include <openssl/rand.h>

#include <array>
#include <stdexcept>

namespace duet::transport::http {

std::string mint_session_id() {
    std::array<unsigned char, 16> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
        throw std::runtime_error("the system random generator failed");
    return support::to_hex(std::string_view(reinterpret_cast<char const*>(bytes.data()), bytes.size()));
}

std::shared_ptr<event_stream> legacy_session::open_stream() {
    std::lock_guard lock(mutex_);
    auto s = std::make_shared<event_stream>(next_stream_++, replay_limit_);
    for (auto it = streams_.begin(); streams_.size() >= max_streams_ && it != streams_.end();) {
        if (it->second->has_reader())
            ++it;
        else
            it = streams_.erase(it);
    }
    streams_.emplace(s->number(), s);
    return s;
}

std::shared_ptr<event_stream> legacy_session::find_stream(std::uint64_t number) const {
    if (number == 0)
        return standalone_;
    std::lock_guard lock(mutex_);
    auto it = streams_.find(number);
    return it == streams_.end() ? nullptr : it->second;
}

void legacy_session::forget_stream(std::uint64_t number) {
    std::lock_guard lock(mutex_);
    streams_.erase(number);
}

void legacy_session::end() {
    ended_ = true;
    standalone_->wake();
}

bool legacy_session::ended() const {
    return ended_;
}

std::shared_ptr<legacy_session> session_store::create(std::size_t replay_limit, std::size_t max_streams) {
    std::lock_guard lock(mutex_);
    if (sessions_.size() >= max_)
        return nullptr;
    auto s = std::make_shared<legacy_session>(mint_session_id(), replay_limit, max_streams);
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
