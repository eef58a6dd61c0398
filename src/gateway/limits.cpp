// The gateway's limits: token buckets, a keyed and bounded rate limiter, a circuit breaker (limits.hpp).
#include <duet/gateway/limits.hpp>

#include <algorithm>
#include <cmath>

namespace duet::gateway {

namespace {

using std::chrono::milliseconds;

// Token counts within this of a whole token count as it: the refill's floating point may leave a client
// that comes back exactly when told a hair short.
constexpr double slack = 1e-9;

// What a bucket that never refills (or refills slower than this) says to wait.
constexpr milliseconds never = std::chrono::hours(24 * 365);

double sanitized_burst(double burst) noexcept {
    return burst >= 1 ? burst : 1;
} // NaN too

double sanitized_per_second(double per_second) noexcept {
    return per_second > 0 ? per_second : 0;
}

// now + d, saturating at time_point::max() (an enormous backoff must not wrap around).
limit_clock::time_point later(limit_clock::time_point now, milliseconds d) noexcept {
    constexpr auto max = limit_clock::time_point::max();
    if (d <= milliseconds::zero())
        return now;
    if (d >= std::chrono::duration_cast<milliseconds>(limit_clock::duration::max()))
        return max;
    auto const step = std::chrono::duration_cast<limit_clock::duration>(d);
    return now > max - step ? max : now + step;
}

} // namespace

// token_bucket

token_bucket::token_bucket(rate r, limit_clock::time_point now) noexcept
    : rate_{sanitized_per_second(r.per_second), sanitized_burst(r.burst)}, tokens_(rate_.burst), last_(now) {}

std::optional<milliseconds> token_bucket::take(limit_clock::time_point now) noexcept {
    if (now > last_) { // a clock going backwards refills nothing
        auto const seconds = std::chrono::duration<double>(now - last_).count();
        tokens_ = std::min(rate_.burst, tokens_ + seconds * rate_.per_second);
        last_ = now;
    }
    if (tokens_ >= 1 - slack) {
        tokens_ -= 1;
        return std::nullopt;
    }
    if (rate_.per_second <= 0)
        return never;
    auto const ms = (1 - tokens_ - slack / 2) * 1000 / rate_.per_second;
    if (!(ms < static_cast<double>(never.count())))
        return never;
    return std::max(milliseconds(1), milliseconds(static_cast<milliseconds::rep>(std::ceil(ms))));
}

bool token_bucket::full(limit_clock::time_point now) const noexcept {
    return now >= full_at();
}

limit_clock::time_point token_bucket::full_at() const noexcept {
    if (tokens_ >= rate_.burst)
        return last_;
    constexpr auto max = limit_clock::time_point::max();
    if (rate_.per_second <= 0)
        return max;
    auto const seconds = (rate_.burst - tokens_) / rate_.per_second;
    auto const room = std::chrono::duration<double>(max.time_since_epoch()).count() -
                      std::chrono::duration<double>(last_.time_since_epoch()).count();
    if (!(seconds < room))
        return max;
    return last_ + std::chrono::ceil<limit_clock::duration>(std::chrono::duration<double>(seconds));
}

// rate_limiter

rate_limiter::rate_limiter(rate r, std::size_t max_keys)
    : rate_(r), max_keys_(std::max<std::size_t>(max_keys, 1)) {}

std::optional<milliseconds> rate_limiter::admit(std::string_view key, limit_clock::time_point now) {
    std::lock_guard lock(mutex_);
    if (auto it = buckets_.find(key); it != buckets_.end()) {
        auto& e = it->second;
        used_.splice(used_.begin(), used_, e.used);
        auto const wait = e.bucket.take(now);
        auto node = refilled_.extract(e.refilled);
        node.key() = e.bucket.full_at();
        e.refilled = refilled_.insert(std::move(node));
        return wait;
    }
    if (buckets_.size() >= max_keys_)
        make_room(now);
    token_bucket bucket(rate_, now);
    auto const wait = bucket.take(now); // a new bucket is full: admitted
    // Every allocation before the map holds the key, so that a bad_alloc leaves the three consistent.
    use_order used{nullptr};
    auto refilled = refill_order{{bucket.full_at(), nullptr}}.extract(bucket.full_at());
    auto const it = buckets_.emplace(std::string(key), entry{bucket, {}, {}}).first;
    auto& e = it->second;
    used.front() = refilled.mapped() = &it->first;
    used_.splice(used_.begin(), used);
    e.used = used_.begin();
    e.refilled = refilled_.insert(std::move(refilled));
    return wait;
}

std::size_t rate_limiter::keys() const {
    std::lock_guard lock(mutex_);
    return buckets_.size();
}

void rate_limiter::make_room(limit_clock::time_point now) {
    bool forgot = false;
    while (!refilled_.empty() && refilled_.begin()->first <= now) {
        forget(buckets_.find(*refilled_.begin()->second));
        forgot = true;
    }
    if (!forgot && !used_.empty())
        forget(buckets_.find(*used_.back()));
}

void rate_limiter::forget(bucket_map::iterator it) {
    used_.erase(it->second.used);
    refilled_.erase(it->second.refilled);
    buckets_.erase(it);
}

// circuit_breaker

circuit_breaker::circuit_breaker(breaker_options options) noexcept : options_(options) {
    options_.max_backoff = std::max(options_.max_backoff, milliseconds::zero());
    options_.first_backoff = std::clamp(options_.first_backoff, milliseconds::zero(), options_.max_backoff);
    backoff_ = options_.first_backoff;
}

bool circuit_breaker::allow(limit_clock::time_point now) noexcept {
    if (!open_)
        return true;
    if (now < retry_at_ || probing_)
        return false;
    probing_ = true;
    return true;
}

void circuit_breaker::succeeded() noexcept {
    failures_ = 0;
    backoff_ = options_.first_backoff;
    open_ = false;
    probing_ = false;
}

void circuit_breaker::failed(limit_clock::time_point now) noexcept {
    ++failures_;
    if (open_) {
        if (!probing_)
            return; // a call let through before the breaker opened
        probing_ = false;
        backoff_ = backoff_ > options_.max_backoff / 2 ? options_.max_backoff : backoff_ * 2;
        retry_at_ = later(now, backoff_);
        return;
    }
    if (options_.failures == 0 || failures_ < options_.failures)
        return;
    open_ = true;
    retry_at_ = later(now, backoff_);
}

circuit_breaker::state circuit_breaker::current(limit_clock::time_point now) const noexcept {
    if (!open_)
        return state::closed;
    return now < retry_at_ ? state::open : state::half_open;
}

} // namespace duet::gateway
