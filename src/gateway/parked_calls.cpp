// The calls parked between an input_required round and its retry (parked_calls.hpp).
#include "parked_calls.hpp"

#include <algorithm>

namespace duet::gateway::detail {

std::string const& parked_calls::park(std::shared_ptr<forwarded_call> const& call) {
    auto const& handle = call->handle();
    if (calls_.contains(handle))
        return handle;
    sweep();
    if (calls_.size() >= max_) {
        auto const oldest = std::min_element(calls_.begin(), calls_.end(), [](auto const& a, auto const& b) {
            return a.second->parked_since() < b.second->parked_since();
        });
        oldest->second->abandon();
        calls_.erase(oldest);
        if (on_drop_)
            on_drop_(max_);
    }
    calls_.emplace(handle, call);
    if (parked_total_)
        parked_total_->fetch_add(1, std::memory_order_relaxed);
    return handle;
}

std::shared_ptr<forwarded_call> parked_calls::find(std::string const& handle) const {
    if (auto it = calls_.find(handle); it != calls_.end() && !it->second->over())
        return it->second;
    return nullptr;
}

void parked_calls::unpark(forwarded_call& call) {
    if (call.has_handle())
        calls_.erase(call.handle());
}

void parked_calls::sweep_now() {
    auto const now = std::chrono::steady_clock::now();
    std::erase_if(calls_, [&](auto& kv) {
        auto& c = kv.second;
        if (c->over())
            return true;
        if (now - c->parked_since() > ttl_) {
            c->abandon();
            return true;
        }
        return false;
    });
}

void parked_calls::abandon_all() {
    for (auto& kv : calls_)
        kv.second->abandon();
    calls_.clear();
}

} // namespace duet::gateway::detail
