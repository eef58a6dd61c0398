#include "verified_cache.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <memory>

namespace duet::auth::detail {

namespace {

struct md_ctx_deleter {
    void operator()(EVP_MD_CTX* c) const noexcept { EVP_MD_CTX_free(c); }
};

} // namespace

// Every request on a protected server hashes its token: the algorithm is fetched once and each thread keeps
// its context, since OpenSSL 3's implicit fetch and a context per call cost more than the hash itself
// (bench/findings.md, "Protected server").
std::string token_digest(std::string_view token) {
    static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    thread_local std::unique_ptr<EVP_MD_CTX, md_ctx_deleter> const ctx(EVP_MD_CTX_new());
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (!sha256 || !ctx || EVP_DigestInit_ex2(ctx.get(), sha256, nullptr) != 1 ||
        EVP_DigestUpdate(ctx.get(), token.data(), token.size()) != 1 ||
        EVP_DigestFinal_ex(ctx.get(), digest, &size) != 1)
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
