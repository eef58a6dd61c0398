#include "route_table.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace duet::transport::http {

void check_route(http_route const& route) {
    if (!route.srv)
        throw std::invalid_argument("http_server: the route " + route.path + " has no server");
    if (!route.path.starts_with("/") || route.path.find_first_of("?# ") != std::string::npos)
        throw std::invalid_argument("http_server: a route's path must start with / and hold no query: " +
                                    route.path);
}

std::vector<http_route> checked_routes(std::vector<http_route> routes) {
    if (routes.empty())
        throw std::invalid_argument("http_server: no route");
    for (std::size_t i = 0; i < routes.size(); ++i) {
        check_route(routes[i]);
        for (std::size_t j = 0; j < i; ++j)
            if (routes[j].path == routes[i].path)
                throw std::invalid_argument("http_server: two routes at " + routes[i].path);
    }
    return routes;
}

std::vector<std::string> paths_of(std::vector<http_route> const& routes) {
    std::vector<std::string> out;
    out.reserve(routes.size());
    for (auto const& r : routes)
        out.push_back(r.path);
    return out;
}

route_table::route_table(routes initial) : routes_(std::make_shared<routes const>(std::move(initial))) {}

route_table::snapshot route_table::load() const {
    std::lock_guard lock(mutex_);
    return routes_;
}

route_table::snapshot route_table::with(routes const& routes, http_route route) {
    check_route(route);
    if (std::any_of(routes.begin(), routes.end(), [&](http_route const& r) { return r.path == route.path; }))
        throw std::invalid_argument("http_server: a route is already at " + route.path);
    auto next = routes;
    next.push_back(std::move(route));
    return std::make_shared<route_table::routes const>(std::move(next));
}

route_table::snapshot route_table::without(routes const& routes, std::string_view path) {
    auto const at =
        std::find_if(routes.begin(), routes.end(), [&](http_route const& r) { return r.path == path; });
    if (at == routes.end())
        return nullptr;
    auto next = routes;
    next.erase(next.begin() + (at - routes.begin()));
    return std::make_shared<route_table::routes const>(std::move(next));
}

void route_table::publish(snapshot next) {
    std::unique_lock lock(mutex_);
    std::swap(routes_, next);
    version_.store(version_.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
    lock.unlock();
    // `next` now holds the previous snapshot: freed here, outside the lock, unless a connection still holds
    // it.
}

void route_table::refresh(view& held) const {
    snapshot previous;
    std::lock_guard lock(mutex_);
    previous = std::exchange(held.routes_, routes_);
    held.version_ = version_.load(std::memory_order_relaxed);
}

} // namespace duet::transport::http
