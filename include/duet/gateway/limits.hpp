/// @file duet/gateway/limits.hpp
///
/// The limits `duet gateway` keeps: token buckets per caller and per tool (over the limit: HTTP 429 with
/// Retry-After), and a circuit breaker per upstream (an upstream failing N times in a row is marked down,
/// tried again after a backoff that doubles up to a bound, and its calls answer a clear error meanwhile).
///
/// Pure state machines: every decision takes the time as an argument, so tests drive the clock. Not
/// thread-safe by themselves: the owner serializes (rate_limiter does, with its own mutex).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace duet::gateway {

using limit_clock = std::chrono::steady_clock;

/// A rate: `per_second` tokens refill each second, at most `burst` held (a new bucket starts full). A burst
/// below 1 acts as 1; a per_second not above 0 never refills.
struct rate {
    double per_second = 0;
    double burst = 0;

    friend bool operator==(rate const&, rate const&) = default;
};

class token_bucket {
public:
    token_bucket(rate r, limit_clock::time_point now) noexcept;
    /// Takes one token when there is one; else the time until one will be there (whole milliseconds rounded
    /// up, at least 1; a year when the bucket never refills).
    [[nodiscard]] std::optional<std::chrono::milliseconds> take(limit_clock::time_point now) noexcept;
    /// Whether the bucket is full again at `now` (an idle key can be forgotten).
    [[nodiscard]] bool full(limit_clock::time_point now) const noexcept;
    /// When the bucket is full again (time_point::max() when it never refills).
    [[nodiscard]] limit_clock::time_point full_at() const noexcept;

private:
    rate rate_;
    double tokens_;
    limit_clock::time_point last_;
};

/// Buckets by key (a caller, a tool), at most `max_keys` remembered (0 acts as 1): a new key past it makes
/// the limiter forget every bucket full again (they carry no state), or when none is, the least recently
/// used (an admission refused uses the key too). Thread-safe.
class rate_limiter {
public:
    explicit rate_limiter(rate r, std::size_t max_keys = 100000);
    /// nullopt: admitted (one token taken); else how long until the key may try again.
    [[nodiscard]] std::optional<std::chrono::milliseconds> admit(std::string_view key,
                                                                 limit_clock::time_point now);
    [[nodiscard]] rate limit() const noexcept { return rate_; }
    [[nodiscard]] std::size_t keys() const;

private:
    struct key_hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view key) const noexcept {
            return std::hash<std::string_view>{}(key);
        }
    };
    // The keys below point at the buckets_ map's own keys (stable while the key is remembered).
    using use_order = std::list<std::string const*>; // most recently used first
    using refill_order = std::multimap<limit_clock::time_point, std::string const*>; // by when full again
    struct entry {
        token_bucket bucket;
        use_order::iterator used;
        refill_order::iterator refilled;
    };

    using bucket_map = std::unordered_map<std::string, entry, key_hash, std::equal_to<>>;

    void make_room(limit_clock::time_point now);
    void forget(bucket_map::iterator it);

    rate rate_;
    std::size_t max_keys_;
    mutable std::mutex mutex_;
    bucket_map buckets_;
    use_order used_;
    refill_order refilled_;
};

struct breaker_options {
    /// Failures in a row that mark the upstream down; 0: never.
    std::size_t failures = 5;
    /// A negative backoff acts as 0; max_backoff bounds every backoff, the first one too.
    std::chrono::milliseconds first_backoff = std::chrono::seconds(1);
    std::chrono::milliseconds max_backoff = std::chrono::seconds(60);

    friend bool operator==(breaker_options const&, breaker_options const&) = default;
};

/// closed: calls go through. open: the upstream is down, calls are refused until the backoff ends.
/// half_open: the backoff ended; one call goes through as a probe (others are refused) and its outcome
/// closes the breaker or opens it again with the backoff doubled (up to max_backoff). Any success closes it
/// and starts the count and the backoff over; a failure while open with no probe out (a call let through
/// before it opened) only counts.
class circuit_breaker {
public:
    enum class state : unsigned char { closed, open, half_open };

    explicit circuit_breaker(breaker_options options = {}) noexcept;
    /// Whether a call may go upstream now (in half_open, true once: that call is the probe).
    [[nodiscard]] bool allow(limit_clock::time_point now) noexcept;
    void succeeded() noexcept;
    void failed(limit_clock::time_point now) noexcept;
    [[nodiscard]] state current(limit_clock::time_point now) const noexcept;
    /// When an open breaker lets the next probe through.
    [[nodiscard]] limit_clock::time_point retry_at() const noexcept { return retry_at_; }
    [[nodiscard]] std::size_t failures_in_a_row() const noexcept { return failures_; }

private:
    breaker_options options_;
    std::size_t failures_ = 0;
    std::chrono::milliseconds backoff_;
    limit_clock::time_point retry_at_{};
    bool open_ = false;
    bool probing_ = false;
};

} // namespace duet::gateway
