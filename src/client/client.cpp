// duet::client::client: connect modes (ERA-POLICY "Client side") and the calls built on the session core.
#include <duet/client/negotiation.hpp>
#include <duet/jsonrpc/json_text.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/protocol/server_changes.hpp>

#include "client_impl.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <set>

namespace duet::client {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using protocol::method_id;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

namespace {

// What a failed probe says (ERA-POLICY "Client side").
enum class probe_says : std::uint8_t { modern, legacy, restart_then_legacy, fatal };

probe_says judge(client::impl::answer const& a) {
    if (a.value)
        return probe_says::modern;
    auto const& e = a.value.error();
    switch (e.code) {
    case errc::rpc_error:
        return is_modern_error(*e.rpc, a.http_status) ? probe_says::modern : probe_says::legacy;
    case errc::closed:
        return probe_says::restart_then_legacy;
    case errc::auth_required:
    case errc::connect_failed:
    case errc::tls_failed:
    case errc::spawn_failed:
    case errc::usage:
    case errc::cancelled:
        return probe_says::fatal;
    default:
        return probe_says::legacy; // timeouts, odd HTTP statuses, malformed answers
    }
}

method_id list_method(list_kind k) {
    switch (k) {
    case list_kind::tools:
        return method_id::tools_list;
    case list_kind::prompts:
        return method_id::prompts_list;
    case list_kind::resources:
        return method_id::resources_list;
    case list_kind::resource_templates:
        return method_id::resources_templates_list;
    }
    return method_id::tools_list;
}

// Connects in modern mode once the era is known: discover when the server offers it, -32022 handled.
awaitable<result<void>> async_settle_modern(std::shared_ptr<client::impl> c, protocol::version v,
                                            std::optional<client::impl::answer> probe) {
    c->become_modern(v);
    if (!probe) {
        auto a = co_await c->async_probe(v);
        probe = std::move(a);
        c->era_ = protocol::era::modern; // async_probe already set it; kept explicit
    }
    if (probe->value) {
        c->adopt_discover(*probe->value);
        co_return result<void>{};
    }
    auto const& e = probe->value.error();
    if (e.code == errc::rpc_error &&
        e.rpc->code == static_cast<std::int32_t>(protocol::errc::unsupported_protocol_version)) {
        auto const retry = retry_version(e.rpc->data);
        if (!retry)
            co_return make_error(errc::version_rejected,
                                 "the server supports none of this client's modern versions (-32022)",
                                 probe->http_status);
        c->version_ = *retry;
        request_options none;
        json::object const no_params;
        auto again = co_await c->async_round(method_id::server_discover, no_params, none);
        if (again.value)
            c->adopt_discover(*again.value);
        co_return result<void>{};
    }
    // The server is modern but offers no discover (or refused it for another reason the calls will meet
    // again): proceed statelessly.
    if (e.code == errc::rpc_error || e.code == errc::timeout || e.code == errc::http_status)
        co_return result<void>{};
    co_return e;
}

awaitable<result<void>> async_connect_legacy(std::shared_ptr<client::impl> c, protocol::version offer,
                                             bool restart) {
    if (restart || !c->transport_) {
        auto started = co_await c->async_start_transport();
        if (!started)
            co_return started;
    }
    auto r = co_await c->async_initialize(offer);
    co_return r;
}

awaitable<result<void>> async_connect_auto(std::shared_ptr<client::impl> c) {
    auto const& opts = c->options_;
    auto const server = describe(c->target_);
    // A pinned handshake version says legacy; there is nothing to probe.
    if (opts.version && protocol::is_handshake_version(*opts.version)) {
        auto r = co_await async_connect_legacy(c, *opts.version, true);
        co_return r;
    }
    if (opts.verdicts && !opts.version) {
        if (auto const known = opts.verdicts->find(server)) {
            auto started = co_await c->async_start_transport();
            if (!started)
                co_return started;
            if (known->era == protocol::era::modern) {
                std::optional<client::impl::answer> no_probe;
                auto r = co_await async_settle_modern(c, known->version, std::move(no_probe));
                co_return r;
            }
            auto r = co_await c->async_initialize(known->version);
            co_return r;
        }
    }
    auto started = co_await c->async_start_transport();
    if (!started)
        co_return started;
    auto const modern_version = opts.version.value_or(protocol::latest_modern_version);
    auto probe = co_await c->async_probe(modern_version);
    auto const verdict = judge(probe);
    if (verdict == probe_says::fatal)
        co_return probe.value.error();
    if (verdict == probe_says::modern) {
        // -32022 naming only handshake versions: the server speaks the envelope to nobody we can be.
        if (!probe.value && probe.value.error().rpc &&
            probe.value.error().rpc->code ==
                static_cast<std::int32_t>(protocol::errc::unsupported_protocol_version) &&
            !retry_version(probe.value.error().rpc->data)) {
            auto const fallback = handshake_fallback(probe.value.error().rpc->data);
            if (!fallback || opts.version)
                co_return probe.value.error();
            auto r = co_await async_connect_legacy(c, *fallback, false);
            if (r && opts.verdicts)
                opts.verdicts->remember(server, era_verdict{protocol::era::legacy, c->version_});
            co_return r;
        }
        std::optional<client::impl::answer> probed(std::move(probe));
        auto r = co_await async_settle_modern(c, modern_version, std::move(probed));
        if (r && opts.verdicts)
            opts.verdicts->remember(server, era_verdict{protocol::era::modern, c->version_});
        co_return r;
    }
    // Legacy evidence. A pinned modern version is never downgraded: the probe's failure is the answer.
    if (opts.version)
        co_return probe.value.error();
    auto const offer = protocol::latest_handshake_version;
    auto r = co_await async_connect_legacy(c, offer, verdict == probe_says::restart_then_legacy);
    // A probe that timed out is still read, late: a server that exits on it (a loaded machine, a slow start)
    // closes before its handshake's answer, having never seen the initialize. Started again, it gets only
    // that.
    if (!r && r.error().code == errc::closed && probe.value.error().code == errc::timeout)
        r = co_await async_connect_legacy(c, offer, true);
    if (r && opts.verdicts)
        opts.verdicts->remember(server, era_verdict{protocol::era::legacy, c->version_});
    co_return r;
}

} // namespace

client::~client() {
    // The transport's destructor reaps a stdio child that nobody closed.
    if (impl_)
        impl_->closed_ = true;
}

awaitable<result<std::shared_ptr<client>>> client::async_connect(server_target target,
                                                                 client_options options) {
    // Usage errors come before anything is spawned or sent.
    std::optional<protocol::version> legacy_version;
    std::optional<protocol::version> modern_version;
    if (options.mode == connect_mode::legacy) {
        auto v = legacy_offer(options.version);
        if (!v)
            co_return v.error();
        legacy_version = *v;
    } else if (options.mode == connect_mode::modern) {
        auto v = modern_offer(options.version);
        if (!v)
            co_return v.error();
        modern_version = *v;
    }
    if (auto const* h = std::get_if<http_target>(&target)) {
        auto url = parse_http_url(h->url);
        if (!url)
            co_return url.error();
    } else if (std::get<stdio_target>(target).command.empty()) {
        co_return make_error(errc::usage, "no server command given");
    }
    auto ex = co_await asio::this_coro::executor;
    auto c = std::make_shared<impl>(ex, std::move(target), std::move(options));
    result<void> r;
    if (legacy_version) {
        r = co_await async_connect_legacy(c, *legacy_version, true);
    } else if (modern_version) {
        auto started = co_await c->async_start_transport();
        if (!started)
            r = started;
        else {
            std::optional<impl::answer> no_probe;
            r = co_await async_settle_modern(c, *modern_version, std::move(no_probe));
        }
    } else {
        r = co_await async_connect_auto(c);
    }
    if (!r) {
        if (c->transport_)
            co_await c->transport_->async_close();
        co_return r.error();
    }
    co_return std::shared_ptr<client>(new client(c));
}

protocol::era client::era() const noexcept {
    return impl_->era_;
}
protocol::version client::version() const noexcept {
    return impl_->version_;
}
json::object const& client::server_info() const noexcept {
    return impl_->server_info_;
}
json::object const& client::server_capabilities() const noexcept {
    return impl_->server_caps_;
}
std::string const& client::instructions() const noexcept {
    return impl_->instructions_;
}
json::object const& client::handshake_result() const noexcept {
    return impl_->handshake_;
}
json::object const& client::client_capabilities() const noexcept {
    return impl_->era_ == protocol::era::modern ? impl_->modern_caps_ : impl_->client_caps_;
}

awaitable<result<json::object>> client::async_request(std::string method, json::object params,
                                                      request_options options) {
    // `method` lives in this frame until the answer: the view of it stays valid.
    method_ref const m{method};
    if (m.row && m.row->may_require_input) {
        auto r = co_await impl_->async_with_input(m, params, options);
        co_return r;
    }
    auto r = co_await impl_->async_cached(m, std::move(params), options);
    co_return r;
}

awaitable<result<json::object>> client::async_discover(request_options options) {
    if (impl_->era_ == protocol::era::legacy)
        co_return impl_->handshake_;
    json::object no_params;
    auto r = co_await impl_->async_cached(method_id::server_discover, std::move(no_params), options);
    if (r)
        impl_->adopt_discover(*r);
    co_return r;
}

awaitable<result<json::array>> client::async_list(list_kind kind, request_options options) {
    auto const list_id = list_method(kind);
    auto const method = std::string(protocol::info(list_id).name);
    auto const member = protocol::list_items_key(list_method(kind));
    json::array items;
    std::optional<std::string> cursor;
    std::set<std::string> seen_cursors;
    bool const modern = impl_->era_ == protocol::era::modern;
    for (int page = 0;; ++page) {
        if (page >= 10000)
            co_return make_error(errc::protocol_violation, method + " never ended (10000 pages)");
        json::object params;
        if (cursor)
            params["cursor"] = *cursor;
        auto r = co_await impl_->async_cached(list_id, params, options);
        if (!r) {
            if (cursor && r.error().rpc && r.error().rpc->code == jsonrpc::code::invalid_params)
                impl_->cache_.drop_method(method); // an invalid cursor: every cached page goes
            co_return r.error();
        }
        auto const* list = r->if_contains(member);
        if (!list || !list->is_array())
            co_return make_error(errc::protocol_violation,
                                 method + " result has no \"" + std::string(member) + "\" array");
        for (auto const& item : list->get_array()) {
            if (kind == list_kind::tools && item.is_object()) {
                // Tools with invalid x-mcp-header annotations are dropped (modern; DIGEST §9).
                if (!impl_->learn_tool(item.get_object()) && modern)
                    continue;
            }
            items.push_back(item);
        }
        auto const* next = r->if_contains("nextCursor");
        if (!next || next->is_null())
            break;
        if (!next->is_string())
            co_return make_error(errc::protocol_violation, method + " nextCursor is not a string");
        std::string n(next->get_string());
        if (!seen_cursors.insert(n).second)
            co_return make_error(errc::protocol_violation, method + " repeated the cursor \"" + n + "\"");
        cursor = std::move(n);
    }
    if (kind == list_kind::tools)
        impl_->tools_known_ = true;
    co_return items;
}

awaitable<result<json::array>> client::async_list_tools(request_options options) {
    auto r = co_await async_list(list_kind::tools, std::move(options));
    co_return r;
}

awaitable<result<json::object>> client::async_call_tool(std::string name, json::object arguments,
                                                        request_options options) {
    // Modern HTTP mirrors x-mcp-header arguments into headers: learn the tools first when unknown.
    if (impl_->era_ == protocol::era::modern && impl_->transport_ && impl_->transport_->is_http() &&
        !impl_->tools_known_) {
        request_options list_options;
        list_options.cancel = options.cancel;
        // A failure here is not fatal: the call itself reports what is wrong.
        [[maybe_unused]] auto listed = co_await async_list(list_kind::tools, list_options);
    }
    json::object params{{"name", name}, {"arguments", std::move(arguments)}};
    if (impl_->era_ == protocol::era::legacy && impl_->version_ == protocol::version::v2025_11_25 &&
        impl_->offers_legacy_tasks()) {
        if (!options.ask_for_task && !impl_->tools_known_) {
            request_options list_options;
            list_options.cancel = options.cancel;
            [[maybe_unused]] auto listed = co_await async_list(list_kind::tools, list_options);
        }
        if (options.ask_for_task || impl_->tool_requires_task(name))
            params["task"] = json::object{};
    }
    auto r = co_await impl_->async_with_input(method_id::tools_call, params, options);
    if (!r || options.detach_task)
        co_return r;
    auto task = task_in(*r);
    if (!task)
        co_return r;
    auto followed = co_await impl_->async_follow_task(std::move(*task), options);
    co_return followed;
}

awaitable<result<json::object>> client::async_read_resource(std::string uri, request_options options) {
    json::object params{{"uri", std::move(uri)}};
    method_ref const read(method_id::resources_read);
    bool const use = impl_->options_.use_cache;
    auto const now = result_cache::clock::now();
    if (use && !options.bypass_cache)
        if (auto hit = impl_->cache_.fresh(read.name, params, now))
            co_return std::move(*hit);
    auto r = co_await impl_->async_with_input(read, params, options);
    if (r && use)
        impl_->cache_.store(read.name, params, *r, result_cache::clock::now());
    co_return r;
}

awaitable<result<json::object>> client::async_get_prompt(std::string name, json::object arguments,
                                                         request_options options) {
    json::object params{{"name", std::move(name)}};
    if (!arguments.empty()) {
        // Prompt arguments are strings on the wire.
        json::object args;
        for (auto const& kv : arguments)
            args[kv.key()] =
                kv.value().is_string() ? kv.value() : json::value(jsonrpc::to_json_text(kv.value()));
        params["arguments"] = std::move(args);
    }
    auto r = co_await impl_->async_with_input(method_id::prompts_get, params, options);
    co_return r;
}

awaitable<result<json::object>> client::async_complete(json::object ref, std::string argument,
                                                       std::string value, json::object context_arguments,
                                                       request_options options) {
    json::object params{{"ref", std::move(ref)},
                        {"argument", {{"name", std::move(argument)}, {"value", std::move(value)}}}};
    if (!context_arguments.empty())
        params["context"] = json::object{{"arguments", std::move(context_arguments)}};
    auto r = co_await impl_->async_plain(method_id::completion_complete, params, options);
    co_return r;
}

bool listen_filter::*list_change_flag(protocol::server_change what) noexcept {
    switch (what) {
    case protocol::server_change::tools_changed:
        return &listen_filter::tools_list_changed;
    case protocol::server_change::prompts_changed:
        return &listen_filter::prompts_list_changed;
    case protocol::server_change::resources_changed:
        return &listen_filter::resources_list_changed;
    case protocol::server_change::resource_updated:
        return nullptr;
    }
    return nullptr;
}

namespace {

// Whether a listen with `filter` asks for the change `what`.
bool asks_for(listen_filter const& filter, protocol::server_change what) {
    if (auto const flag = list_change_flag(what))
        return filter.*flag;
    return !filter.resource_subscriptions.empty();
}

// Waits until cancelled or the connection ends (legacy listen).
awaitable<void> async_wait_until_over(std::shared_ptr<client::impl> c, std::shared_ptr<cancellation> cancel) {
    auto timer = std::make_shared<asio::steady_timer>(c->ex_, asio::steady_timer::time_point::max());
    std::erase_if(c->wakeups_, [](auto const& w) { return w.expired(); });
    c->wakeups_.push_back(timer);
    std::shared_ptr<void> hook;
    if (cancel) {
        std::weak_ptr<asio::steady_timer> weak = timer;
        hook = cancel->on_cancel([weak] {
            if (auto t = weak.lock())
                t->cancel();
        });
    }
    while (!c->closed_ && !(cancel && cancel->cancelled()))
        co_await timer->async_wait(tuple_awaitable);
}

} // namespace

awaitable<result<void>> client::async_listen(listen_filter filter,
                                             std::function<void(listen_event const&)> on_event,
                                             request_options options) {
    auto c = impl_;
    if (c->era_ == protocol::era::legacy) {
        for (auto const& uri : filter.resource_subscriptions) {
            json::object params{{"uri", uri}};
            auto r = co_await c->async_plain(method_id::resources_subscribe, params, options);
            if (!r)
                co_return r.error();
        }
        auto const wanted = [filter](std::string const& method, json::object const& params) {
            auto const* change = protocol::change_of(method);
            if (!change)
                return false;
            if (change->is_list_change())
                return asks_for(filter, change->what);
            auto const* u = params.if_contains("uri");
            if (!u || !u->is_string())
                return false;
            for (auto const& w : filter.resource_subscriptions)
                if (std::string_view(u->get_string()).starts_with(w))
                    return true;
            return false;
        };
        int const key = c->next_watcher_++;
        c->watchers_[key] = [wanted, on_event](std::string const& method, json::object const& params) {
            if (!wanted(method, params))
                return;
            listen_event ev;
            ev.method = method;
            ev.params = params;
            on_event(ev);
        };
        co_await async_wait_until_over(c, options.cancel);
        c->watchers_.erase(key);
        for (auto const& uri : filter.resource_subscriptions) {
            if (c->closed_)
                break;
            json::object params{{"uri", uri}};
            request_options quick;
            quick.timeout = std::chrono::seconds(5);
            [[maybe_unused]] auto r =
                co_await c->async_plain(method_id::resources_unsubscribe, params, quick);
        }
        if (c->closed_ && !(options.cancel && options.cancel->cancelled()))
            co_return c->closed_error_.value_or(make_error(errc::closed, "the connection ended"));
        co_return result<void>{};
    }

    // Modern: subscriptions/listen, re-listened after every drop.
    json::object notifications;
    for (auto const& change : protocol::change_table())
        if (change.is_list_change() && asks_for(filter, change.what))
            notifications[change.listen_flag] = true;
    if (!filter.resource_subscriptions.empty()) {
        json::array uris;
        for (auto const& u : filter.resource_subscriptions)
            uris.push_back(json::value(u));
        notifications["resourceSubscriptions"] = std::move(uris);
    }
    asio::steady_timer backoff(c->ex_);
    auto delay = std::chrono::milliseconds(250);
    for (;;) {
        if (options.cancel && options.cancel->cancelled())
            co_return result<void>{};
        jsonrpc::request_id const id{c->next_id_}; // the id async_round will use
        c->listens_[id] = on_event;
        request_options listen_options = options;
        listen_options.timeout = std::chrono::milliseconds(0); // a listen waits as long as it lasts
        listen_options.on_progress = nullptr;
        json::object params{{"notifications", notifications}};
        auto r = co_await c->async_round(method_id::subscriptions_listen, params, listen_options);
        c->listens_.erase(id);
        if (options.cancel && options.cancel->cancelled())
            co_return result<void>{};
        if (r.value) {
            delay = std::chrono::milliseconds(250); // the server ended it gracefully; listen again
        } else {
            auto const& e = r.value.error();
            if (e.code == errc::rpc_error || e.code == errc::auth_required || e.code == errc::usage)
                co_return e;
            if (!c->transport_->is_http() && c->closed_)
                co_return e; // the stdio server is gone
        }
        listen_event dropped;
        dropped.what = listen_event::kind::dropped;
        on_event(dropped);
        backoff.expires_after(delay);
        co_await backoff.async_wait(tuple_awaitable);
        delay = std::min(delay * 2, std::chrono::milliseconds(10000));
    }
}

awaitable<bool> client::async_wait_closed(std::shared_ptr<cancellation> cancel) {
    auto c = impl_;
    co_await async_wait_until_over(c, cancel);
    co_return c->closed_;
}

awaitable<void> client::async_close() {
    auto c = impl_;
    if (!c->transport_)
        co_return;
    auto t = c->transport_;
    c->closed_ = true;
    co_await t->async_close();
    c->on_closed(make_error(errc::closed, "the client closed the connection"));
}

} // namespace duet::client
