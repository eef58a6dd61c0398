// File: src/gateway/parked_calls.hpp (private)
//
// The calls of modern downstream requests that asked a question, parked under their handles between the
// request that ended its round with input_required and the client's retry that brings the answers (the
// handle travels in requestState). A parked call leaves when its outcome is taken or it is abandoned, and is
// abandoned when no retry comes within gateway_options::parked_ttl. At most gateway_options::max_parked_calls
// wait at once: parking one more abandons the one parked longest (a client's retry that finds its call gone
// replays it, so a live client loses time, not its answer; refusing the newcomer instead would fail a fresh
// request to keep one whose client may never come back).
//
// Used on the upstream executor only.
#pragma once

#include "forwarded_call.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace duet::gateway::detail {

class parked_calls {
public:
    /// `on_drop(max)`: a call was dropped to make room (for the log). `parked_total` (may be null) counts the
    /// calls parked.
    parked_calls(std::chrono::seconds ttl, std::size_t max, std::function<void(std::size_t max)> on_drop = {},
                 std::atomic<std::uint64_t>* parked_total = nullptr)
        : ttl_(ttl), max_(std::max<std::size_t>(1, max)), on_drop_(std::move(on_drop)),
          parked_total_(parked_total) {}

    /// Parks `call` under its handle (once; parking it again changes nothing) and returns the handle. At the
    /// bound, the call parked longest is abandoned first.
    std::string const& park(std::shared_ptr<forwarded_call> const& call);
    /// The call `handle` names while it is parked and not over; else null.
    [[nodiscard]] std::shared_ptr<forwarded_call> find(std::string const& handle) const;
    /// Takes `call` out, if it was parked.
    void unpark(forwarded_call& call);
    /// Takes out the calls that are over and abandons those parked longer than the ttl.
    void sweep() {
        if (!calls_.empty())
            sweep_now();
    }
    /// Abandons every parked call (the gateway is closing).
    void abandon_all();
    [[nodiscard]] std::size_t size() const noexcept { return calls_.size(); }

private:
    void sweep_now();

    std::chrono::seconds ttl_;
    std::size_t max_;
    std::function<void(std::size_t)> on_drop_;
    std::atomic<std::uint64_t>* parked_total_;
    std::map<std::string, std::shared_ptr<forwarded_call>, std::less<>> calls_;
};

} // namespace duet::gateway::detail
