#include "verified_cache.hpp"

#include <openssl/evp.h>

#include <algorithm>

namespace duet::auth::detail {

std::string token_digest(std::string_view token) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (EVP_Digest(token.data(), token.size(), digest, &size, EVP_sha256(), nullptr) != 1)
        return {};
    return std::string(reinterpret_cast<char const*>(digest), size);
}

std::shared_ptr<verified_token const> verified_cache::find(std::string const& digest,
                                                           std::chrono::system_clock::time_point now) {
    if (digest.empty())
        return nullptr;
    std::lock_guard lock(mutex_);
    auto it = entries_.find(digest);
    if (it == entries_.end())
        return nullptr;
    if (now >= it->second.until) {
        entries_.erase(it);
        return nullptr;
    }
    return it->second.token;
}

void verified_cache::insert(std::string digest, std::shared_ptr<verified_token const> token,
                            std::chrono::system_clock::time_point now) {
    if (options_.cache_entries == 0 || digest.empty() || !token)
        return;
    auto until = now + options_.cache_lifetime;
    if (token->expires_at)
        until = std::min(until, *token->expires_at);
    if (until <= now)
        return;
    std::lock_guard lock(mutex_);
    while (entries_.size() >= options_.cache_entries && !order_.empty())
        drop_oldest();
    // Insertions whose entries expired and left meanwhile: rebuilt before they outgrow the entries twice.
    if (order_.size() >= 2 * options_.cache_entries + 16) {
        std::deque<std::pair<std::string, std::uint64_t>> live;
        for (auto& o : order_)
            if (auto it = entries_.find(o.first); it != entries_.end() && it->second.sequence == o.second)
                live.push_back(std::move(o));
        order_ = std::move(live);
    }
    auto const sequence = next_sequence_++;
    order_.emplace_back(digest, sequence);
    entries_.insert_or_assign(std::move(digest), entry{std::move(token), until, sequence});
}

void verified_cache::drop_oldest() {
    auto const [digest, sequence] = order_.front();
    if (auto it = entries_.find(digest); it != entries_.end() && it->second.sequence == sequence)
        entries_.erase(it);
    order_.pop_front();
}

std::size_t verified_cache::size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

} // namespace duet::auth::detail
