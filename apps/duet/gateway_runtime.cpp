#include "gateway_runtime.hpp"

#include <duet/client/target.hpp>

#include "gateway_config.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <future>
#include <set>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace duet::apps {

namespace asio = boost::asio;
using asio::awaitable;

namespace {

// What the gateway says of itself: how it runs at info, what it refuses and cannot do as an error.
void say(std::string const& line, log::level severity = log::level::info) {
    log::write({.severity = severity, .component = "duet gateway", .name = "gateway", .message = line});
}

void fail(std::string const& line) {
    say(line, log::level::error);
}

// Runs `io` on this thread until `done` is ready: for the work before the HTTP server runs `io` and after it
// stopped it, when nothing else runs `io`.
template<class T>
T run_until(asio::io_context& io, std::future<T> done) {
    io.restart();
    while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
        io.run_one();
    return done.get();
}

std::string era_of(gateway::upstream_backend const& b) {
    return std::string(b.era() == protocol::era::modern ? "modern " : "legacy ") +
           std::string(protocol::to_string(b.version()));
}

// Why the upstream could not be reached, with the hint a person needs when it wants a login.
std::string unreachable(upstream_entry const& u, client::error const& e) {
    auto const* http = std::get_if<client::http_target>(&u.target);
    auto const hint =
        e.code == client::errc::auth_required && http
            ? " (run `duet login " + http->url + "` first, or give --upstream-client-id or --upstream-header)"
            : std::string();
    return "cannot reach the upstream " + (u.name.empty() ? std::string() : u.name + " = ") +
           client::describe(u.target) + ": " + e.to_string() + hint;
}

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

// ---- the plan
// ------------------------------------------------------------------------------------------------

boost::system::result<gateway_plan, std::string> plan_gateway(gateway_cli const& flags,
                                                              asio::io_context& io) {
    using out_t = boost::system::result<gateway_plan, std::string>;
    auto failed = [](std::string why) {
        return out_t(boost::system::in_place_error, std::move(why));
    };
    auto const& file = flags.check_config_file.empty() ? flags.config_file : flags.check_config_file;
    auto config = load_gateway_config(file, flags);
    if (!config)
        return failed(config.error());
    gateway_plan plan;
    plan.cli = config->cli;
    plan.disabled = config->disabled;
    auto const& cli = plan.cli;
    auto mode = client::parse_connect_mode(cli.era);
    if (!mode)
        return failed("--era must be legacy, modern or auto, not \"" + cli.era + "\"");
    plan.mode = *mode;
    plan.http = cli.http;
    if (auto bad = apply_listener_flags(cli.listener, plan.http))
        return failed(*bad);
    // The file's bearerToken: a --bearer-token(-file) flag wins (load_gateway_config left it out), and it
    // wins over DUET_BEARER_TOKEN.
    if (cli.bearer_token)
        plan.http.bearer_token = cli.bearer_token;
    if (auto bad = apply_tls_server_flags(cli.listener_tls, plan.http))
        return failed(*bad);
    // The gateway checks callers' tokens itself and never passes one on: its upstreams see the gateway's
    // own credentials (--upstream-*), or none.
    if (auto bad = apply_auth_flags(cli.front_door, plan.http, io.get_executor()))
        return failed(*bad);

    // The upstream connections run on the HTTP server's io_context (a backend needs an executor that runs one
    // handler at a time: the io_context itself when one thread serves, else a strand), so a forwarded call
    // stays on the thread that read its request. With a thread of their own every call crossed threads twice,
    // a wake-up each way on a core the upstream may share, and what one thread allocated the other freed.
    plan.one_thread = transport::io_threads_for(cli.http) == 1;
    plan.upstream_ex = plan.one_thread ? asio::any_io_executor(io.get_executor())
                                       : asio::any_io_executor(asio::make_strand(io));
    auto upstreams = gateway_upstreams(*config, plan.upstream_ex);
    if (!upstreams)
        return failed(upstreams.error());
    plan.upstreams = std::move(*upstreams);
    if (plan.cli.merge)
        for (auto const& u : plan.upstreams)
            if (u.name.empty())
                return failed("--merge: every upstream needs a name (its tools are shown as NAME" +
                              plan.cli.name_separator + "TOOL): --upstream NAME=SPEC");
    return plan;
}

// ---- the runtime
// ---------------------------------------------------------------------------------------------

gateway_runtime::gateway_runtime(asio::io_context& io, gateway_cli flags, gateway_plan plan,
                                 server::server_options shared)
    : io_(io), flags_(std::move(flags)), plan_(std::move(plan)), shared_(std::move(shared)),
      control_(asio::make_strand(io)), hangup_(io), file_timer_(io) {}

gateway_runtime::~gateway_runtime() = default;

gateway::gateway_options gateway_runtime::backend_options(upstream_entry const& u) const {
    auto const& cli = plan_.cli;
    gateway::gateway_options options;
    options.upstream = u.target;
    options.name = u.name;
    options.mode = u.mode.value_or(plan_.mode);
    options.lenient_args = cli.lenient_args;
    options.pool_size = cli.pool_size;
    options.share_sessions = cli.share_sessions;
    options.batch_when_busy = cli.busy_batching && plan_.one_thread;
    options.request_timeout = std::chrono::milliseconds(
        static_cast<std::chrono::milliseconds::rep>(cli.upstream_timeout_seconds * 1000));
    options.max_message_bytes = cli.max_upstream_message;
    if (cli.task_after_seconds > 0)
        options.task_after = std::chrono::milliseconds(
            static_cast<std::chrono::milliseconds::rep>(cli.task_after_seconds * 1000));
    options.max_parked_calls = cli.max_parked_calls;
    options.max_session_children = cli.max_upstream_children;
    options.when_over_children =
        cli.over_children == "refuse" ? gateway::over_children::refuse : gateway::over_children::share;
    return options;
}

gateway::merged_member gateway_runtime::member_of(live_upstream const& u) const {
    gateway::merged_member m;
    m.name = u.entry.name;
    m.backend = u.backend;
    m.exposure = u.entry.exposure;
    m.max_concurrent_calls = u.entry.max_concurrent_calls;
    m.slot_wait = std::chrono::milliseconds(
        static_cast<std::chrono::milliseconds::rep>(plan_.cli.upstream_timeout_seconds * 1000));
    m.breaker = u.entry.breaker;
    m.required = u.entry.required;
    return m;
}

std::unique_ptr<gateway_runtime::endpoint>
gateway_runtime::make_endpoint(std::string path, std::vector<live_upstream const*> members,
                               std::string upstream) {
    std::vector<gateway::merged_member> list;
    for (auto const* u : members)
        list.push_back(member_of(*u));
    gateway::merged_options options;
    options.prefix_names = plan_.cli.merge;
    options.separator = plan_.cli.name_separator;
    auto e = std::make_unique<endpoint>();
    e->path = std::move(path);
    e->upstream = std::move(upstream);
    e->merged = gateway::merged_backend::create(std::move(list), std::move(options));
    auto described = e->merged->describe();
    described.metrics = shared_.metrics;
    // With --store, the tasks the gateway holds are shared by every gateway process (a client's tasks/get
    // lands anywhere), each endpoint's apart; its announcements are not (start() says why).
    described.task_store = shared_.task_store;
    described.task_bus = shared_.event_bus;
    described.event_topic = "duet/gateway" + e->path;
    e->srv = std::make_unique<server::server>(std::move(described));
    e->merged->attach(*e->srv);
    return e;
}

void gateway_runtime::publish_endpoints() {
    std::vector<std::shared_ptr<gateway::merged_backend>> backends;
    for (auto const& e : endpoints_)
        backends.push_back(e->merged);
    std::vector<metered_upstream> metered;
    for (auto const& name : order_)
        if (auto it = upstreams_.find(name); it != upstreams_.end())
            metered.push_back({name, it->second.backend});
    std::lock_guard lock(ready_mutex_);
    ready_backends_ = std::move(backends);
    metered_ = std::move(metered);
}

// Names no upstream: a probe is answered to anyone who reaches the port.
transport::probe_answer gateway_runtime::readiness() const {
    std::size_t down = 0, required = 0;
    {
        std::lock_guard lock(ready_mutex_);
        for (auto const& b : ready_backends_)
            for (auto const& h : b->health())
                if (h.required) {
                    ++required;
                    down += h.state == gateway::circuit_breaker::state::open;
                }
    }
    if (down == 0)
        return {200, "ready\n"};
    return {503, "not ready: " + std::to_string(down) + " of " + std::to_string(required) +
                     " required upstreams marked down\n"};
}

int gateway_runtime::start() {
    auto const& cli = plan_.cli;
    for (auto& u : plan_.upstreams) {
        auto options = backend_options(u);
        auto created =
            run_until(io_, asio::co_spawn(plan_.upstream_ex,
                                          gateway::upstream_backend::async_create(std::move(options)),
                                          asio::use_future));
        if (!created) {
            fail(unreachable(u, created.error()));
            close_upstreams();
            return 3;
        }
        // With --store the front sessions are shared; announcements are not: every gateway process hears its
        // upstream itself, and a shared bus would deliver each change once per process.
        if (shared_.event_bus && (*created)->era() == protocol::era::legacy)
            say("--store: " + client::describe(u.target) +
                " speaks the legacy era, so what the gateway holds for it per client (a modern client's "
                "input "
                "round in flight, the upstream session behind a legacy client's) lives in one gateway "
                "process: "
                "a round's retry must reach the process that began it (a load balancer sticky on the "
                "client), "
                "else it fails -32602.");
        order_.push_back(u.name);
        upstreams_[u.name] = live_upstream{u, *created};
    }
    if (cli.merge) {
        std::vector<live_upstream const*> all;
        for (auto const& name : order_)
            all.push_back(&upstreams_.at(name));
        endpoints_.push_back(make_endpoint(cli.http.path, std::move(all), {}));
    } else {
        for (auto const& name : order_)
            endpoints_.push_back(
                make_endpoint(upstream_path(cli.http.path, name), {&upstreams_.at(name)}, name));
    }
    for (auto const& e : endpoints_)
        run_until(io_, asio::co_spawn(plan_.upstream_ex, e->merged->async_load(), asio::use_future));
    publish_endpoints();

    if (auto refused = await_store(shared_)) {
        fail(refused->text);
        close_upstreams();
        return refused->exit_code;
    }
    if (shared_.metrics)
        metrics_collector_ = shared_.metrics->add_collector([this] {
            std::lock_guard lock(ready_mutex_);
            return gateway_families(metered_, ready_backends_);
        });
    auto options = plan_.http;
    gate_->set(cli.rate_per_caller, cli.rate_per_tool);
    if (cli.rate_per_caller || !cli.rate_per_tool.empty() || !flags_.config_file.empty())
        options.request_gate = [gate = gate_](transport::gate_facts const& f) {
            return gate->check(f);
        };
    options.probes["/healthz"] = [] {
        return transport::probe_answer{200, "ok\n"};
    };
    options.probes["/readyz"] = [this] {
        return readiness();
    };
    std::vector<transport::http_route> routes;
    for (auto const& e : endpoints_)
        routes.push_back({e->path, e->srv.get()});
    try {
        http_.emplace(std::move(routes), std::move(options), io_);
    } catch (std::invalid_argument const& e) {
        fail(e.what());
        close_upstreams();
        return 2;
    }
    if (auto ec = http_->listen()) {
        fail("cannot listen on " + cli.http.host + ":" + std::to_string(cli.http.port) + ": " + ec.message());
        close_upstreams();
        return 1;
    }
    // One URL per line, in the order the upstreams were given: the first line names the first.
    for (auto const& e : endpoints_)
        std::printf("%s\n", http_->url(e->path).c_str());
    std::fflush(stdout);
    for (auto const& e : endpoints_) {
        if (cli.merge) {
            std::string names;
            for (auto const& name : order_)
                names += (names.empty() ? "" : ", ") + name;
            say("serving " + names + " merged at " + e->path + " to clients of both eras");
            continue;
        }
        auto const& u = upstreams_.at(e->upstream);
        say("serving " + client::describe(u.entry.target) + " (" + era_of(*u.backend) + ") at " + e->path +
            " to clients of both eras");
    }
    if (!flags_.config_file.empty()) {
        hangup_.add(SIGHUP);
        asio::co_spawn(control_, async_watch_signal(this), asio::detached);
        asio::co_spawn(control_, async_watch_file(this), asio::detached);
        say("SIGHUP or a change of " + flags_.config_file + " reloads it");
    }
    say("Ctrl-C drains and stops");
    return 0;
}

void gateway_runtime::run() {
    http_->run();
    close_upstreams();
}

// After the HTTP server stopped running `io_` (or never ran it): every upstream closes, those a reload was
// retiring too.
void gateway_runtime::close_upstreams() {
    stopping_ = true;
    boost::system::error_code ignored;
    hangup_.cancel(ignored);
    file_timer_.cancel();
    for (auto& e : endpoints_)
        e->merged->detach();
    for (auto& e : retired_)
        e->merged->detach();
    auto close = [&](gateway::upstream_backend& b) {
        b.detach();
        run_until(io_, asio::co_spawn(b.executor(), b.async_close(), asio::use_future));
    };
    // Taken out before closing: closing runs `io_`, where a reload or a retirement may still add to them.
    auto running = std::exchange(upstreams_, {});
    for (auto& [name, u] : running)
        close(*u.backend);
    while (!retiring_.empty()) {
        auto b = std::move(retiring_.back());
        retiring_.pop_back();
        close(*b);
    }
}

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
