// duet gateway's hot reload: SIGHUP or a change of the configuration file reads it again; what a reload can
// change (upstreams, their policy, limits and backends, the endpoints) is applied without dropping a call in
// flight, and what it cannot is said and left for the next start.
#include "gateway_config.hpp"
#include "gateway_notes.hpp"
#include "gateway_runtime.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace duet::apps {

namespace asio = boost::asio;
using asio::awaitable;
using namespace gateway_notes;

namespace {

// What of the gateway a reload cannot change: the listener, its checks, the store and the endpoint layout.
std::vector<std::string> fixed_changes(gateway_cli const& was, gateway_cli const& now) {
    std::vector<std::string> out;
    auto check = [&](bool same, char const* key) {
        if (!same)
            out.push_back(key);
    };
    check(was.http.host == now.http.host, "host");
    check(was.http.port == now.http.port, "port");
    check(was.http.path == now.http.path, "path");
    check(was.http.io_threads == now.http.io_threads, "threads");
    check(was.http.allowed_origins == now.http.allowed_origins, "allowOrigins");
    check(was.http.allowed_hosts == now.http.allowed_hosts, "allowHosts");
    check(was.http.max_connections == now.http.max_connections, "maxConnections");
    check(was.http.max_sessions == now.http.max_sessions, "maxSessions");
    check(was.http.sessions_per_second_per_peer == now.http.sessions_per_second_per_peer, "sessionRate");
    check(was.bearer_token == now.bearer_token, "bearerToken");
    check(was.listener_tls.cert == now.listener_tls.cert && was.listener_tls.key == now.listener_tls.key &&
              was.listener_tls.client_ca == now.listener_tls.client_ca,
          "tls");
    check(was.front_door.issuer == now.front_door.issuer &&
              was.front_door.audience == now.front_door.audience &&
              was.front_door.jwks == now.front_door.jwks &&
              was.front_door.introspection == now.front_door.introspection &&
              was.front_door.client_id == now.front_door.client_id &&
              was.front_door.client_secret == now.front_door.client_secret &&
              was.front_door.scopes == now.front_door.scopes,
          "auth");
    check(was.store.url == now.store.url && was.store.prefix == now.store.prefix, "store");
    check(was.merge == now.merge, "merge");
    check(was.name_separator == now.name_separator, "nameSeparator");
    return out;
}

// Whether backends made under `was` and `now` would differ (the knobs every upstream's backend takes).
bool same_backend_knobs(gateway_cli const& was, gateway_cli const& now) {
    return was.era == now.era && was.lenient_args == now.lenient_args && was.pool_size == now.pool_size &&
           was.share_sessions == now.share_sessions && was.busy_batching == now.busy_batching &&
           was.upstream_timeout_seconds == now.upstream_timeout_seconds &&
           was.max_upstream_message == now.max_upstream_message &&
           was.max_parked_calls == now.max_parked_calls &&
           was.max_upstream_children == now.max_upstream_children && was.over_children == now.over_children;
}

} // namespace

// ---- reload
// -----------------------------------------------------------------------------------------------------

awaitable<void> gateway_runtime::async_watch_signal(gateway_runtime* self) {
    for (;;) {
        boost::system::error_code ec;
        co_await self->hangup_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (ec || self->stopping_)
            co_return;
        std::string why = "SIGHUP";
        co_await async_reload(self, std::move(why));
    }
}

// Polled, not inotify: an editor that saves by renaming a new file over the old one, or a ConfigMap's
// symlink swap, changes what the path names without a write to the file watched.
awaitable<void> gateway_runtime::async_watch_file(gateway_runtime* self) {
    auto stamp = [&]() -> std::optional<std::filesystem::file_time_type> {
        std::error_code ec;
        auto t = std::filesystem::last_write_time(self->flags_.config_file, ec);
        if (ec)
            return std::nullopt;
        return t;
    };
    self->file_stamp_ = stamp();
    for (;;) {
        self->file_timer_.expires_after(std::chrono::seconds(1));
        boost::system::error_code ec;
        co_await self->file_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (ec || self->stopping_)
            co_return;
        auto now = stamp();
        if (now && now != self->file_stamp_) {
            self->file_stamp_ = now;
            std::string why = self->flags_.config_file + " changed";
            co_await async_reload(self, std::move(why));
        }
    }
}

awaitable<void> gateway_runtime::async_reload(gateway_runtime* self, std::string why) {
    if (self->reloading_) { // one at a time; a change meanwhile is read once the running one is done
        self->reload_again_ = true;
        co_return;
    }
    self->reloading_ = true;
    do {
        self->reload_again_ = false;
        auto planned = plan_gateway(self->flags_, self->io_);
        if (!planned) {
            fail("reload (" + why + ") refused; the running configuration stays:");
            std::size_t from = 0;
            auto const& text = planned.error();
            while (from < text.size()) {
                auto const to = std::min(text.find('\n', from), text.size());
                fail("  " + text.substr(from, to - from));
                from = to + 1;
            }
            continue;
        }
        co_await async_apply(self, std::move(*planned), why);
    } while (self->reload_again_ && !self->stopping_);
    self->reloading_ = false;
}

awaitable<void> gateway_runtime::async_apply(gateway_runtime* self, gateway_plan next, std::string why) {
    for (auto const& key : fixed_changes(self->plan_.cli, next.cli))
        say("reload: gateway." + key + " changed; it takes effect when the gateway starts again");
    // What a reload cannot change stays as it runs; the rest is the new plan's.
    next.cli.merge = self->plan_.cli.merge;
    next.cli.name_separator = self->plan_.cli.name_separator;
    next.cli.http = self->plan_.cli.http;
    next.one_thread = self->plan_.one_thread;
    if (!next.cli.merge && next.upstreams.size() > 1 &&
        std::any_of(next.upstreams.begin(), next.upstreams.end(),
                    [](auto const& u) { return u.name.empty(); })) {
        fail("reload (" + why + ") refused: several upstreams must each be named");
        co_return;
    }
    bool const same_knobs = same_backend_knobs(self->plan_.cli, next.cli);
    auto before = std::exchange(self->plan_, std::move(next));

    std::vector<std::string> added, removed, restarted;
    std::vector<std::shared_ptr<gateway::upstream_backend>> retire;
    std::map<std::string, live_upstream> now;
    std::vector<std::string> order;
    for (auto const& u : self->plan_.upstreams) {
        auto const was = self->upstreams_.find(u.name);
        bool const existed = was != self->upstreams_.end();
        if (existed && same_knobs && was->second.entry.identity == u.identity) {
            now[u.name] =
                live_upstream{u, was->second.backend}; // untouched: its policy and limits may change
            order.push_back(u.name);
            continue;
        }
        auto options = self->backend_options(u);
        auto created = co_await asio::co_spawn(self->plan_.upstream_ex,
                                               gateway::upstream_backend::async_create(std::move(options)),
                                               asio::use_awaitable);
        if (self->stopping_) { // the gateway stops meanwhile: what this reload made closes with the rest
            if (created)
                self->retiring_.push_back(*created);
            for (auto& [name, made] : now)
                if (!self->upstreams_.contains(name) || self->upstreams_.at(name).backend != made.backend)
                    self->retiring_.push_back(made.backend);
            co_return;
        }
        if (!created) {
            fail("reload: " + unreachable(u, created.error()) +
                 (existed ? "; the running one stays" : "; not added"));
            if (existed) {
                now[u.name] = was->second;
                order.push_back(u.name);
            }
            continue;
        }
        (existed ? restarted : added).push_back(u.name);
        if (existed)
            retire.push_back(was->second.backend);
        now[u.name] = live_upstream{u, *created};
        order.push_back(u.name);
    }
    if (now.empty()) {
        fail("reload (" + why +
             ") refused: no upstream of it could be reached; the running configuration stays");
        self->plan_ = std::move(before);
        co_return;
    }
    for (auto const& [name, u] : self->upstreams_)
        if (!now.contains(name)) {
            removed.push_back(name);
            retire.push_back(u.backend);
        }
    // Theirs to close from now on, whether their drain ends or the gateway stops first.
    self->retiring_.insert(self->retiring_.end(), retire.begin(), retire.end());
    self->upstreams_ = std::move(now);
    self->order_ = std::move(order);

    if (self->plan_.cli.merge) {
        std::vector<gateway::merged_member> members;
        for (auto const& name : self->order_)
            members.push_back(self->member_of(self->upstreams_.at(name)));
        self->endpoints_.front()->merged->set_members(std::move(members));
    } else {
        self->reshape_endpoints();
    }
    for (auto const& e : self->endpoints_)
        co_await asio::co_spawn(self->plan_.upstream_ex, e->merged->async_load(), asio::use_awaitable);
    self->publish_endpoints();
    self->gate_->set(self->plan_.cli.rate_per_caller, self->plan_.cli.rate_per_tool);
    if (self->stopping_)
        co_return;
    for (auto& b : retire)
        asio::co_spawn(self->control_, async_retire(self, std::move(b)), asio::detached);

    auto list = [](std::vector<std::string> const& names) {
        std::string out;
        for (auto const& n : names)
            out += (out.empty() ? "" : ", ") + n;
        return out.empty() ? std::string("none") : out;
    };
    say("reloaded (" + why + "): added " + list(added) + "; removed " + list(removed) + "; restarted " +
        list(restarted));
}

// Unmerged: an endpoint per upstream. An upstream gone loses its path (its server is kept for what was under
// way), a new one gets one, the others take their upstream's new policy, limits or backend.
void gateway_runtime::reshape_endpoints() {
    std::vector<std::unique_ptr<endpoint>> kept;
    for (auto& e : endpoints_) {
        auto const u = upstreams_.find(e->upstream);
        if (u == upstreams_.end()) {
            (void)http_->remove_route(e->path);
            e->merged->detach();
            retired_.push_back(std::move(e));
            continue;
        }
        e->merged->set_members({member_of(u->second)});
        kept.push_back(std::move(e));
    }
    for (auto const& name : order_) {
        if (std::any_of(kept.begin(), kept.end(), [&](auto const& e) { return e->upstream == name; }))
            continue;
        auto const& u = upstreams_.at(name);
        auto e = make_endpoint(upstream_path(plan_.cli.http.path, name), {&u}, name);
        try {
            http_->add_route({e->path, e->srv.get()});
        } catch (std::invalid_argument const& bad) {
            fail("reload: " + name + ": " + bad.what());
            continue;
        }
        say("serving " + client::describe(u.entry.target) + " (" + era_of(*u.backend) + ") at " +
            http_->url(e->path));
        kept.push_back(std::move(e));
    }
    endpoints_ = std::move(kept);
}

// A backend a reload replaced or removed: its calls in flight finish (up to the upstream timeout), then it
// closes.
awaitable<void> gateway_runtime::async_retire(gateway_runtime* self,
                                              std::shared_ptr<gateway::upstream_backend> backend) {
    backend->detach();
    auto const limit = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(
                           self->plan_.cli.upstream_timeout_seconds * 1000));
    asio::steady_timer wait(self->io_);
    while (backend->calls_in_flight() > 0 && std::chrono::steady_clock::now() < limit && !self->stopping_) {
        wait.expires_after(std::chrono::milliseconds(50));
        boost::system::error_code ec;
        co_await wait.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    if (self->stopping_ ||
        std::find(self->retiring_.begin(), self->retiring_.end(), backend) == self->retiring_.end())
        co_return; // close_upstreams() closes it, or did
    std::erase(self->retiring_, backend);
    auto closing = backend->async_close();
    co_await asio::co_spawn(backend->executor(), std::move(closing), asio::use_awaitable);
}

} // namespace duet::apps
