#include "gateway_runtime.hpp"

#include <duet/client/target.hpp>

#include "gateway_config.hpp"
#include "gateway_notes.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <future>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace duet::apps {

namespace asio = boost::asio;
using asio::awaitable;

namespace {

using namespace gateway_notes;

// Runs `io` on this thread until `done` is ready: for the work before the HTTP server runs `io` and after it
// stopped it, when nothing else runs `io`.
template<class T>
T run_until(asio::io_context& io, std::future<T> done) {
    io.restart();
    while (done.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
        io.run_one();
    return done.get();
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

} // namespace duet::apps
