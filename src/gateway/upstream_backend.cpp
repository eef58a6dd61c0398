// The gateway's backend: downstream requests forwarded over upstream connections, and what the upstream
// asks and announces brought back (duet/gateway/upstream_backend.hpp). Here: the public class (making it,
// attaching it, what it tells about the upstream, a legacy session's upstream, closing) and the making of its
// impl (upstream_impl.hpp). The rest has files of its own: a downstream request's handler
// (upstream_handler.cpp), the upstream side of its call (upstream_call.cpp), the upstream tools' task
// support (upstream_tasks.cpp); and the parts it stands on: the upstream pool (upstream_pool.hpp, with the
// rule for which calls share a connection), the control connection (control_connection.hpp), the calls
// parked between input rounds (parked_calls.hpp), one forwarded call between its two sides
// (forwarded_call.hpp), and the log (gateway_log.hpp).
#include <duet/gateway/translate.hpp>

#include "upstream_impl.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <chrono>

namespace duet::gateway {

// ---- upstream_backend::impl -------------------------------------------------------------------------------

upstream_backend::impl::impl(asio::any_io_executor ex,
                             std::shared_ptr<detail::upstream_profile const> profile,
                             std::shared_ptr<detail::gateway_log> log,
                             std::shared_ptr<control_connection> control)
    : ex_(std::move(ex)), profile_(std::move(profile)), log_(std::move(log)), control_(std::move(control)),
      pool_(std::make_shared<upstream_pool>(ex_, profile_, log_, announcer(control_))),
      parked_(profile_->options.parked_ttl, profile_->options.max_parked_calls, parked_drop_logger(log_),
              &profile_->counted.parked_rounds),
      tick_(ex_) {}

// The line a parked call dropped to make room leaves in the log.
std::function<void(std::size_t)>
upstream_backend::impl::parked_drop_logger(std::shared_ptr<detail::gateway_log> const& log) {
    std::weak_ptr<detail::gateway_log> weak = log;
    return [weak](std::size_t cap) {
        if (auto l = weak.lock())
            l->line(std::to_string(cap) +
                    " calls wait parked for their clients' retries (the most allowed): the oldest was "
                    "dropped; its retry, should it come, replays it");
    };
}

upstream_backend::impl::~impl() {
    log_->flush();
}

// What a stdio child of the pool announces goes where the control connection's announcements go.
upstream_pool::announce_fn
upstream_backend::impl::announcer(std::shared_ptr<control_connection> const& control) {
    std::weak_ptr<control_connection> weak = control;
    return [weak](std::string const& method, json::object const& params) {
        if (auto c = weak.lock())
            c->on_upstream_notification(method, params);
    };
}

awaitable<void> upstream_backend::impl::close_all(std::shared_ptr<impl> self) {
    self->control_->stop();
    self->tick_.cancel();
    self->parked_.abandon_all();
    co_await upstream_pool::async_close(self->pool_);
    co_await self->control_->async_close();
    self->log_->flush();
}

namespace detail {

// Announcements for the one server this backend serves.
class server_sink final : public announcement_sink {
public:
    explicit server_sink(server::server& srv) : srv_(srv) {}
    void list_changed(protocol::server_change what) override { srv_.notify_list_changed(what); }
    void resource_updated(std::string const& uri) override { srv_.notify_resource_updated(uri); }
    void tool_headers(std::string const& tool, std::vector<protocol::param_header> headers) override {
        srv_.set_param_headers(tool, std::move(headers));
    }

private:
    server::server& srv_;
};

} // namespace detail

// ---- upstream_backend ------------------------------------------------------------------------------------

awaitable<client::result<std::shared_ptr<upstream_backend>>>
upstream_backend::async_create(gateway_options options) {
    auto ex = co_await asio::this_coro::executor;
    auto profile = std::make_shared<detail::upstream_profile>(std::move(options));
    auto log = std::make_shared<detail::gateway_log>(ex, profile->options.log);
    {
        // Every stdio child's stderr, into the log: named, so that several upstreams' lines can be told
        // apart, and bounded by the client (a long line cut, a flood thinned).
        std::weak_ptr<detail::gateway_log> weak = log;
        profile->on_stderr = [weak,
                              prefix = "upstream=" + profile->name + " stderr: "](std::string_view line) {
            if (auto l = weak.lock())
                l->line(prefix + std::string(line));
        };
    }
    auto control = std::make_shared<control_connection>(ex, profile, log);
    auto met = co_await control_connection::async_meet(control);
    if (!met)
        co_return met.error();
    auto self = std::make_shared<impl>(ex, std::move(profile), std::move(log), std::move(control));
    co_return std::shared_ptr<upstream_backend>(new upstream_backend(std::move(self)));
}

upstream_backend::~upstream_backend() {
    detach();
}

server::server_options upstream_backend::describe() const {
    server::server_options o;
    o.info = implementation_from_json(impl_->profile_->server_info);
    o.instructions = impl_->profile_->instructions;
    return o;
}

void upstream_backend::attach(server::server& srv) {
    srv.set_backend(shared_from_this());
    attach(std::make_shared<detail::server_sink>(srv));
}

void upstream_backend::attach(std::shared_ptr<announcement_sink> sink) {
    impl_->control_->attach(std::move(sink));
    asio::co_spawn(impl_->ex_, control_connection::async_start(impl_->control_), asio::detached);
}

void upstream_backend::detach() {
    impl_->control_->detach();
}

awaitable<void> upstream_backend::async_close() {
    detach();
    auto closing = impl::close_all(impl_);
    co_await asio::co_spawn(impl_->ex_, std::move(closing), asio::use_awaitable);
}

std::size_t upstream_backend::calls_in_flight() const noexcept {
    return impl_->in_flight_.load(std::memory_order_relaxed);
}

upstream_backend::stats upstream_backend::counts() const noexcept {
    auto const& c = impl_->profile_->counted;
    return {.calls_in_flight = calls_in_flight(),
            .reconnects = c.reconnects.load(std::memory_order_relaxed),
            .pool_waits = c.pool_waits.load(std::memory_order_relaxed),
            .pool_timeouts = c.pool_timeouts.load(std::memory_order_relaxed),
            .parked_rounds = c.parked_rounds.load(std::memory_order_relaxed),
            .forwarded_ok = c.forwarded[0].load(std::memory_order_relaxed),
            .forwarded_error = c.forwarded[1].load(std::memory_order_relaxed),
            .forwarded_cancelled = c.forwarded[2].load(std::memory_order_relaxed),
            .forwarded_input_required = c.forwarded[3].load(std::memory_order_relaxed)};
}

asio::any_io_executor upstream_backend::executor() const noexcept {
    return impl_->ex_;
}

protocol::era upstream_backend::era() const noexcept {
    return impl_->profile_->era;
}

protocol::version upstream_backend::version() const noexcept {
    return impl_->profile_->version;
}

protocol::server_capabilities upstream_backend::capabilities() const {
    return impl_->profile_->caps;
}

void upstream_backend::on_watch(std::string const& uri, bool watched) {
    asio::co_spawn(impl_->ex_, control_connection::async_watch(impl_->control_, uri, watched),
                   asio::detached);
}

server::session_admission upstream_backend::on_session(protocol::version version,
                                                       json::object const& client_capabilities,
                                                       json::object const&) {
    auto const& profile = *impl_->profile_;
    auto s = std::make_shared<session_upstream>();
    s->ex = impl_->ex_;
    s->capabilities = client_capabilities;
    // A modern upstream keeps no sessions: the pool serves, with per-request capabilities.
    s->own_connection = profile.era == protocol::era::legacy && !profile.options.share_sessions;
    if (s->own_connection && profile.stdio()) {
        // Each such session is a process: counted, and past the bound shared or refused. Sessions begin on
        // their own strands, hence the atomic count; the session's end gives its place back.
        auto& children = *impl_->session_children_;
        if (children.fetch_add(1) >= profile.options.max_session_children) {
            children.fetch_sub(1);
            if (profile.options.when_over_children == over_children::refuse)
                return protocol::make_error(protocol::errc::internal_error,
                                            "The gateway runs " +
                                                std::to_string(profile.options.max_session_children) +
                                                " upstream processes for legacy sessions of " + profile.name +
                                                " already (the most allowed); retry later");
            s->own_connection = false;
        } else {
            s->children_counted = impl_->session_children_;
        }
    }
    s->log_prefix = era_text(protocol::era::legacy, version) + " -> " +
                    era_text(profile.era, profile.version) + " upstream=" + profile.name;
    std::weak_ptr<detail::gateway_log> weak = impl_->log_;
    s->log = [weak](std::string const& line) {
        if (auto l = weak.lock())
            l->line(line);
    };
    if (s->own_connection) // the session's child starts now; its first request finds it ready
        asio::co_spawn(impl_->ex_, upstream_pool::async_open_session(impl_->pool_, s), asio::detached);
    else
        impl_->log_->line("initialize " + s->log_prefix + " status=ok 0ms");
    return std::shared_ptr<void>(std::move(s));
}

} // namespace duet::gateway
