// The verified tokens a token_verifier keeps: by the token's SHA-256 (the token itself is kept nowhere),
// until the token expires or the cache lifetime passes, oldest dropped first beyond the entry bound. Shared
// by every thread serving requests, so one mutex guards it; a hit costs a hash and a lookup.
#pragma once

#include <duet/auth/token_verifier.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace duet::auth::detail {

/// SHA-256 of `token`, as 32 raw bytes (empty only if OpenSSL fails).
[[nodiscard]] std::string token_digest(std::string_view token);

class verified_cache {
public:
    explicit verified_cache(verified_cache_options options) : options_(options) {}

    /// The token verified under `digest`, while it is still good at `now`.
    [[nodiscard]] std::shared_ptr<verified_token const> find(std::string const& digest,
                                                             std::chrono::system_clock::time_point now);
    /// Keeps `token` until its `exp` or the cache lifetime, whichever is first.
    void insert(std::string digest, std::shared_ptr<verified_token const> token,
                std::chrono::system_clock::time_point now);
    [[nodiscard]] std::size_t size() const;

private:
    struct entry {
        std::shared_ptr<verified_token const> token;
        std::chrono::system_clock::time_point until;
        std::uint64_t sequence = 0; ///< which insertion `order` names
    };
    void drop_oldest(); // mutex_ held

    verified_cache_options const options_;
    mutable std::mutex mutex_;
    std::unordered_map<std::string, entry> entries_;
    std::deque<std::pair<std::string, std::uint64_t>> order_; ///< insertions, oldest first
    std::uint64_t next_sequence_ = 0;
};

} // namespace duet::auth::detail
