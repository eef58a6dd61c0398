// File: src/gateway/parked_calls.hpp (private)
//
// The calls of modern downstream requests that asked a question, parked under their handles between the
// request that ended its round with input_required and the client's retry that brings the answers (the
// handle travels in requestState). A parked call leaves when its outcome is taken or it is abandoned, and is
// abandoned when no retry comes within gateway_options::parked_ttl.
//
// Used on the upstream executor only.
#pragma once

#include "forwarded_call.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <string>

namespace duet::gateway::detail {

class parked_calls {
public:
    explicit parked_calls(std::chrono::seconds ttl) : ttl_(ttl) {}

    /// Parks `call` under its handle (once; parking it again changes nothing) and returns the handle.
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

private:
    void sweep_now();

    std::chrono::seconds ttl_;
    std::map<std::string, std::shared_ptr<forwarded_call>, std::less<>> calls_;
};

} // namespace duet::gateway::detail
