// The gateway's own connection to the upstream: discovery, announcements, watches, restarts
// (control_connection.hpp).
#include "control_connection.hpp"

#include <duet/gateway/translate.hpp>
#include <duet/protocol/method_table.hpp>
#include <duet/protocol/param_headers.hpp>
#include <duet/protocol/server_changes.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>

namespace duet::gateway::detail {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using protocol::method_id;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

} // namespace

control_connection::control_connection(asio::any_io_executor ex, std::shared_ptr<upstream_profile> profile,
                                       std::shared_ptr<gateway_log> log)
    : ex_(std::move(ex)), profile_(std::move(profile)), log_(std::move(log)) {}

client::client_options control_connection::options(client::connect_mode mode, bool known) {
    auto o = profile_->client_options();
    o.mode = mode;
    if (known)
        o.version = profile_->version;
    o.capabilities = json::object{};
    std::weak_ptr<control_connection> weak = weak_from_this();
    o.on_notification = [weak](std::string const& method, json::object const& params) {
        if (auto s = weak.lock())
            s->on_upstream_notification(method, params);
    };
    return o;
}

awaitable<client::result<void>> control_connection::async_meet(std::shared_ptr<control_connection> self) {
    auto o = self->options(self->profile_->options.mode, false);
    auto target = self->profile_->options.upstream;
    auto c = co_await client::client::async_connect(std::move(target), std::move(o));
    if (!c)
        co_return c.error();
    self->client_ = *c;
    auto& profile = *self->profile_;
    profile.era = (*c)->era();
    profile.version = (*c)->version();
    profile.caps = protocol::server_capabilities::from_json((*c)->server_capabilities());
    // Downstream clients get tasks where the upstream makes them, or where the gateway holds long calls.
    profile.upstream_tasks = profile.caps.tasks;
    profile.caps.tasks = profile.caps.tasks || profile.options.task_after.has_value();
    profile.server_info = (*c)->server_info();
    profile.instructions = (*c)->instructions();
    // Which 2025-11-25 tools run as tasks is known before the first call is served: a call of one that
    // requires a task is asked as one (or refused, for a client that cannot follow it), not sent plain.
    if (profile.upstream_tasks && profile.era == protocol::era::legacy && profile.caps.tools) {
        auto tools = co_await (*c)->async_list_tools();
        if (tools)
            profile.learn_task_support(*tools);
    }
    co_return client::result<void>{};
}

void control_connection::attach(std::shared_ptr<announcement_sink> sink) {
    std::lock_guard lock(sink_mutex_);
    sink_ = std::move(sink);
}

void control_connection::detach() {
    std::lock_guard lock(sink_mutex_);
    sink_.reset();
}

void control_connection::on_upstream_notification(std::string const& method, json::object const& params) {
    auto const* change = protocol::change_of(method);
    if (!change)
        return;
    {
        std::lock_guard lock(sink_mutex_);
        if (!sink_)
            return;
        if (change->is_list_change()) {
            sink_->list_changed(change->what);
        } else if (auto const* uri = params.if_contains("uri"); uri && uri->is_string()) {
            sink_->resource_updated(std::string(uri->get_string()));
        }
    }
    if (change->what == protocol::server_change::tools_changed) { // the new tools' x-mcp-header bindings
        auto self = shared_from_this();
        asio::co_spawn(ex_, async_learn_tools(std::move(self)), asio::detached);
    }
}

awaitable<void> control_connection::async_learn_tools(std::shared_ptr<control_connection> self) {
    if (!self->profile_->caps.tools || !self->client_)
        co_return;
    auto tools = co_await self->client_->async_list_tools();
    if (!tools)
        co_return;
    self->profile_->learn_task_support(*tools);
    std::lock_guard lock(self->sink_mutex_);
    if (!self->sink_)
        co_return;
    for (auto const& t : *tools) {
        auto const* o = t.if_object();
        auto const* name = o ? o->if_contains("name") : nullptr;
        auto const* schema = o ? o->if_contains("inputSchema") : nullptr;
        if (!name || !name->is_string() || !schema || !schema->is_object())
            continue;
        auto headers = protocol::collect_param_headers(schema->get_object());
        if (headers)
            self->sink_->tool_headers(std::string(name->get_string()), std::move(*headers));
    }
}

awaitable<void> control_connection::async_watch(std::shared_ptr<control_connection> self, std::string uri,
                                                bool watched) {
    if (watched)
        self->watched_.insert(uri);
    else
        self->watched_.erase(uri);
    co_await async_apply_watch(self, uri, watched);
}

// Legacy upstream: resources/subscribe or resources/unsubscribe. Modern upstream: a listen of its own for the
// resource, or its end.
awaitable<void> control_connection::async_apply_watch(std::shared_ptr<control_connection> self,
                                                      std::string uri, bool watched) {
    if (!self->client_)
        co_return;
    if (self->profile_->era == protocol::era::legacy) {
        json::object params{{"uri", uri}};
        std::string method(
            protocol::info(watched ? method_id::resources_subscribe : method_id::resources_unsubscribe).name);
        auto control = self->client_;
        auto r = co_await control->async_request(std::move(method), std::move(params));
        if (!r)
            self->log_->line(std::string(watched ? "subscribing to " : "unsubscribing from ") + uri +
                             " upstream failed: " + r.error().to_string());
        co_return;
    }
    if (auto it = self->listens_.find(uri); it != self->listens_.end()) {
        it->second->cancel();
        self->listens_.erase(it);
    }
    if (!watched)
        co_return;
    auto cancel = std::make_shared<client::cancellation>();
    self->listens_[uri] = cancel;
    client::listen_filter f;
    f.resource_subscriptions.push_back(uri);
    self->start_listen(std::move(f), std::move(cancel));
}

// Modern upstream: the listen that brings the list changes it advertises.
void control_connection::start_announcements() {
    if (profile_->era != protocol::era::modern)
        return;
    client::listen_filter f;
    bool any = false;
    for (auto const& change : protocol::change_table())
        if (change.is_list_change() && profile_->caps.*change.advertised) {
            f.*client::list_change_flag(change.what) = true;
            any = true;
        }
    if (any)
        start_listen(std::move(f), announcements_);
}

void control_connection::start_listen(client::listen_filter filter,
                                      std::shared_ptr<client::cancellation> cancel) {
    client::request_options o;
    o.cancel = std::move(cancel);
    auto self = shared_from_this();
    asio::co_spawn(ex_, async_listen(std::move(self), std::move(filter), std::move(o)), asio::detached);
}

awaitable<void> control_connection::async_listen(std::shared_ptr<control_connection> self,
                                                 client::listen_filter filter,
                                                 client::request_options options) {
    std::weak_ptr<control_connection> weak = self;
    auto on_event = [weak](client::listen_event const& e) {
        if (e.what != client::listen_event::kind::notification)
            return;
        if (auto s = weak.lock())
            s->on_upstream_notification(e.method, e.params);
    };
    auto control = self->client_;
    self.reset(); // a listen must not keep the backend alive
    auto r = co_await control->async_listen(std::move(filter), std::move(on_event), std::move(options));
    (void)r;
}

awaitable<void> control_connection::async_start(std::shared_ptr<control_connection> self) {
    asio::co_spawn(self->ex_, async_learn_tools(self), asio::detached);
    self->start_announcements();
    std::weak_ptr<control_connection> weak = self;
    asio::co_spawn(self->ex_, async_supervise(std::move(weak)), asio::detached);
    co_return;
}

// Watches the connection for as long as the backend serves: when it ends (a stdio child that died), it is
// started again and what it carried is re-established.
awaitable<void> control_connection::async_supervise(std::weak_ptr<control_connection> weak) {
    for (;;) {
        std::shared_ptr<client::client> control;
        std::shared_ptr<client::cancellation> stop;
        {
            auto self = weak.lock();
            if (!self || self->closing_ || !self->client_)
                co_return;
            control = self->client_;
            stop = self->stopping_;
        }
        bool const ended = co_await control->async_wait_closed(stop);
        auto self = weak.lock();
        if (!ended || !self || self->closing_)
            co_return;
        self->log_->line("the control connection to " + self->profile_->name + " ended; connecting again");
        co_await async_reconnect(self);
    }
}

awaitable<void> control_connection::async_reconnect(std::shared_ptr<control_connection> self) {
    asio::steady_timer backoff(self->ex_);
    auto delay = std::chrono::milliseconds(100);
    for (;;) {
        if (self->closing_)
            co_return;
        auto target = self->profile_->options.upstream;
        auto options = self->options(self->profile_->known_mode(), true);
        auto c = co_await client::client::async_connect(std::move(target), std::move(options));
        if (self->closing_) {
            if (c)
                co_await (*c)->async_close();
            co_return;
        }
        if (c) {
            self->client_ = *c;
            self->profile_->counted.reconnects.fetch_add(1, std::memory_order_relaxed);
            break;
        }
        self->log_->line("connecting again to " + self->profile_->name + " failed: " + c.error().to_string());
        backoff.expires_after(delay);
        co_await backoff.async_wait(tuple_awaitable);
        delay = std::min(delay * 2, std::chrono::milliseconds(5000));
    }
    // The old connection's listens ended with it.
    for (auto& kv : self->listens_)
        kv.second->cancel();
    self->listens_.clear();
    self->announcements_ = std::make_shared<client::cancellation>();
    self->start_announcements();
    auto const uris = self->watched_;
    for (auto const& uri : uris) {
        std::string u = uri;
        co_await async_apply_watch(self, std::move(u), true);
    }
    asio::co_spawn(self->ex_, async_learn_tools(self), asio::detached);
    // What a server started again offers may differ from before: clients that listen re-read it.
    auto const& caps = self->profile_->caps;
    std::lock_guard lock(self->sink_mutex_);
    if (self->sink_)
        for (auto const& change : protocol::change_table())
            if (change.is_list_change() && caps.*change.advertised)
                self->sink_->list_changed(change.what);
}

void control_connection::stop() {
    closing_ = true;
    stopping_->cancel();
    announcements_->cancel();
    for (auto& kv : listens_)
        kv.second->cancel();
    listens_.clear();
}

awaitable<void> control_connection::async_close() {
    if (client_)
        co_await client_->async_close();
}

} // namespace duet::gateway::detail
