#include "peer_budget.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace duet::transport::http {

namespace {
// Past this many addresses the buckets that refilled to the burst (no different from a new one) are dropped.
constexpr std::size_t max_tracked_peers = 16 * 1024;
} // namespace

bool peer_budget::take(boost::asio::ip::address const& peer, clock::time_point now) {
    if (rate_ <= 0)
        return true;
    std::lock_guard lock(mutex_);
    if (buckets_.size() >= max_tracked_peers)
        forget_full(now);
    auto [it, fresh] = buckets_.try_emplace(peer.to_string(), bucket{burst_, now});
    auto& b = it->second;
    if (!fresh) {
        auto const elapsed = std::chrono::duration<double>(now - b.at).count();
        b.tokens = std::min(burst_, b.tokens + elapsed * rate_);
        b.at = now;
    }
    if (b.tokens < 1)
        return false;
    b.tokens -= 1;
    return true;
}

unsigned peer_budget::retry_after_seconds() const noexcept {
    return rate_ > 0 ? static_cast<unsigned>(std::max(1.0, std::ceil(1 / rate_))) : 1;
}

void peer_budget::forget_full(clock::time_point now) {
    std::erase_if(buckets_, [&](auto const& kv) {
        auto const elapsed = std::chrono::duration<double>(now - kv.second.at).count();
        return kv.second.tokens + elapsed * rate_ >= burst_;
    });
    // Every address still owes tokens (a flood from many): the oldest half goes rather than the table
    // growing.
    if (buckets_.size() >= max_tracked_peers) {
        std::vector<std::pair<clock::time_point, std::string>> by_age;
        by_age.reserve(buckets_.size());
        for (auto const& kv : buckets_)
            by_age.emplace_back(kv.second.at, kv.first);
        std::nth_element(by_age.begin(), by_age.begin() + by_age.size() / 2, by_age.end());
        for (std::size_t i = 0; i < by_age.size() / 2; ++i)
            buckets_.erase(by_age[i].second);
    }
}

} // namespace duet::transport::http
