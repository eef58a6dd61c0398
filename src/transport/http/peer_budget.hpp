// How many legacy sessions each peer address may open: a token bucket per address (a burst, then a steady
// rate), so that one peer sending 10 000 `initialize` requests cannot fill the session table and lock every
// other client out until the sessions expire. Addresses not seen for a while are forgotten; the table is
// bounded.
//
//     peer_budget budget(options.session_burst_per_peer, options.sessions_per_second_per_peer);
//     if(!budget.take(peer_address)) answer 429;
//
// @par Thread safety
// take() may be called from any thread.
#pragma once

#include <boost/asio/ip/address.hpp>

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace duet::transport::http {

class peer_budget {
public:
    using clock = std::chrono::steady_clock;

    /// `per_second` 0: unbounded.
    peer_budget(std::size_t burst, double per_second) noexcept
        : burst_(static_cast<double>(burst)), rate_(per_second) {}

    /// Whether `peer` may open one more session now (and if so, it is counted).
    [[nodiscard]] bool take(boost::asio::ip::address const& peer, clock::time_point now = clock::now());

    /// Seconds until `peer` may open the next one (for Retry-After), at least 1.
    [[nodiscard]] unsigned retry_after_seconds() const noexcept;

private:
    struct bucket {
        double tokens = 0;
        clock::time_point at;
    };
    void forget_full(clock::time_point now);

    double const burst_;
    double const rate_;
    std::mutex mutex_;
    std::unordered_map<std::string, bucket> buckets_;
};

} // namespace duet::transport::http
