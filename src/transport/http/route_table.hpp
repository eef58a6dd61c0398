// The MCP endpoints an http_server serves, which change while it serves (http_server::add_route and
// remove_route: `duet gateway` reloading its upstreams on SIGHUP). Every change publishes a new immutable
// snapshot; a reader never locks on the hot path: a connection keeps the snapshot it last used and, before
// each request, compares one version number (one atomic load) with the table's, taking the new snapshot under
// the lock only after a change. A route found in a snapshot stays valid for as long as its holder keeps it,
// so a request never reads a route a change freed.
//
//     route_table::view held;                                  // one per connection
//     auto const& routes = table.current(held);                // valid until held's next current()
#pragma once

#include <duet/transport/http_server.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace duet::transport::http {

/// Throws std::invalid_argument naming a route an http_server cannot serve: no server, or a path not
/// starting with "/" (or holding a query).
void check_route(http_route const& route);

/// Throws std::invalid_argument for a table the constructor refuses: no route, a route check_route refuses,
/// or two routes at one path. Returns `routes` when they pass.
[[nodiscard]] std::vector<http_route> checked_routes(std::vector<http_route> routes);

/// The paths of `routes`, in their order.
[[nodiscard]] std::vector<std::string> paths_of(std::vector<http_route> const& routes);

class route_table {
public:
    using routes = std::vector<http_route>;
    using snapshot = std::shared_ptr<routes const>;

    /// `initial` as checked_routes passed it.
    explicit route_table(routes initial);

    /// A reader's hold on the snapshot it last used: one per connection, kept across its requests.
    class view {
        friend class route_table;
        snapshot routes_;
        std::uint64_t version_ = 0; ///< never a table's: the first current() takes the snapshot
    };

    /// The routes served now, held by `held` until its next call: one atomic load unless they changed since.
    [[nodiscard]] routes const& current(view& held) const {
        auto const now = version_.load(std::memory_order_acquire);
        if (held.version_ != now) [[unlikely]]
            refresh(held);
        return *held.routes_;
    }
    /// The routes served now, for callers off the request path (url(), route_paths(), changes).
    [[nodiscard]] snapshot load() const;

    /// `routes` plus `route`, without publishing it. Throws std::invalid_argument (naming the path) for a
    /// route check_route refuses or a path already served.
    [[nodiscard]] static snapshot with(routes const& routes, http_route route);
    /// `routes` less the route at `path`; null when none is there.
    [[nodiscard]] static snapshot without(routes const& routes, std::string_view path);

    /// Serves `next` from now on: a request whose head is read after this returns sees it. Changes are the
    /// caller's to serialise (a snapshot built from an older one would drop a change in between).
    void publish(snapshot next);

private:
    void refresh(view& held) const;

    mutable std::mutex mutex_;
    snapshot routes_;                       ///< guarded by mutex_
    std::atomic<std::uint64_t> version_{1}; ///< written under mutex_, with routes_
};

} // namespace duet::transport::http
