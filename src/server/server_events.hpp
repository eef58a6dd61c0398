// What a legacy session or a modern listen hears of server changes: the notification each event is, which
// watched URIs an update concerns, and the watches themselves, counted at the server.
#pragma once

#include <duet/protocol/method_table.hpp>
#include <duet/protocol/server_changes.hpp>
#include <duet/server/server.hpp>

#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace duet::server::detail {

/// The notification method that announces `what` (protocol/server_changes.hpp).
[[nodiscard]] inline std::string_view notification_method(server_event::kind what) noexcept {
    return protocol::info(protocol::info(what).notification).name;
}

/// A watched URI covers itself and anything below it ("file:///dir" covers "file:///dir/a.txt").
[[nodiscard]] inline bool covers(std::string const& watched, std::string const& uri) {
    if (uri == watched)
        return true;
    if (!uri.starts_with(watched))
        return false;
    return watched.ends_with("/") || uri[watched.size()] == '/';
}

/// The resources one session or listen watches, counted at the server so that a backend hears of a
/// resource's first watcher and its last. Whatever is still watched is released when the owner ends, however
/// it ends.
class resource_watches {
public:
    resource_watches() = default;
    explicit resource_watches(server& srv) : srv_(&srv) {}
    resource_watches(resource_watches&& o) noexcept : srv_(o.srv_), uris_(std::exchange(o.uris_, {})) {}
    resource_watches& operator=(resource_watches&& o) noexcept {
        if (this != &o) {
            release();
            srv_ = o.srv_;
            uris_ = std::exchange(o.uris_, {});
        }
        return *this;
    }
    ~resource_watches() { release(); }

    void add(std::string const& uri) {
        if (uris_.insert(uri).second && srv_)
            srv_->watch_resource(uri, true);
    }
    void remove(std::string const& uri) {
        if (uris_.erase(uri) && srv_)
            srv_->watch_resource(uri, false);
    }
    [[nodiscard]] std::set<std::string> const& uris() const noexcept { return uris_; }

private:
    void release() noexcept {
        if (srv_)
            for (auto const& u : uris_)
                srv_->watch_resource(u, false);
        uris_.clear();
    }

    server* srv_ = nullptr;
    std::set<std::string> uris_;
};

} // namespace duet::server::detail
