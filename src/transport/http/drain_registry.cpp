#include "drain_registry.hpp"

#include <algorithm>

namespace duet::transport::http {

drain_registry::socket_handle drain_registry::enter(std::shared_ptr<socket_entry> entry) {
    std::lock_guard lock(sockets_mutex_);
    return sockets_.insert(sockets_.end(), std::move(entry));
}

void drain_registry::leave(socket_handle it) {
    std::lock_guard lock(sockets_mutex_);
    sockets_.erase(it);
}

std::vector<std::shared_ptr<drain_registry::socket_entry>> drain_registry::open_sockets() {
    std::lock_guard lock(sockets_mutex_);
    return {sockets_.begin(), sockets_.end()};
}

void drain_registry::track(std::shared_ptr<server::connection> const& c,
                           std::shared_ptr<stream_queue> const& listen) {
    std::lock_guard lock(live_mutex_);
    std::erase_if(live_, [](auto const& w) { return w.first.expired(); });
    if (std::ranges::any_of(
            live_, [&](auto const& w) { return !w.first.owner_before(c) && !c.owner_before(w.first); }))
        return;
    live_.emplace_back(c, listen);
}

std::vector<drain_registry::live_connection> drain_registry::live_connections() {
    std::lock_guard lock(live_mutex_);
    std::vector<live_connection> out;
    for (auto const& [w, listen] : live_)
        if (auto c = w.lock())
            out.emplace_back(std::move(c), listen.lock());
    return out;
}

} // namespace duet::transport::http
