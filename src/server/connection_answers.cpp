// One admitted request carried out: refused, a handshake, a method the legacy session answers itself, a
// listen opened, or a handler dispatched, at once when it completes without suspending.
#include <duet/log/log.hpp>
#include <duet/protocol/errors.hpp>

#include "connection_impl.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <thread>
#include <utility>
#include <variant>

namespace duet::server {

namespace asio = boost::asio;
using protocol::method_id;

namespace {

jsonrpc::message refusal(jsonrpc::request_id const& id, protocol::error_object e) {
    return jsonrpc::error_response{id, std::move(e)};
}

} // namespace

asio::awaitable<connection::answer> connection::impl::async_answer(std::shared_ptr<impl> self,
                                                                   admitted_request ad,
                                                                   protocol::http_facts const* http,
                                                                   writer out) {
    // Already on the connection's executor (a caller that shares it): answered here, with no hand-off.
    auto const caller = co_await asio::this_coro::executor;
    if (caller == self->strand_)
        co_return co_await self->async_answer_counted(std::move(ad), http, std::move(out));
    // Run on the connection's own strand (a coroutine resumes on the executor it was spawned on, whatever
    // it awaited), and hand the answer back to the caller's executor.
    co_return co_await asio::co_spawn(
        self->strand_, self->async_answer_counted(std::move(ad), http, std::move(out)), asio::use_awaitable);
}

std::optional<connection::answer> connection::impl::answer_now(admitted_request ad,
                                                               protocol::http_facts const* http, writer out,
                                                               std::function<void(answer)> later,
                                                               std::function<void()> end_stream) {
    if (!options_.executor_is_serial)
        return answer_now_on_own_strand(std::move(ad), http, std::move(out), std::move(later),
                                        std::move(end_stream));
    auto attempt = answer_or_defer(ad, http, std::move(out), std::move(end_stream));
    if (auto* a = std::get_if<answer>(&attempt))
        return std::move(*a);
    ++active_;
    auto deferred = std::get<detail::deferred_request>(std::move(attempt));
    asio::co_spawn(strand_, async_answer_to(std::move(deferred), std::move(later)), asio::detached);
    return std::nullopt;
}

std::optional<connection::answer>
connection::impl::answer_now_on_own_strand(admitted_request ad, protocol::http_facts const* http, writer out,
                                           std::function<void(answer)> later,
                                           std::function<void()> end_stream) {
    auto visit = std::make_shared<strand_visit>();
    // Copied for the trip: when the function waits its turn, the caller's facts may be gone.
    std::optional<protocol::http_facts> facts;
    if (http)
        facts = *http;
    asio::dispatch(strand_, [self = shared_from_this(), visit, ad = std::move(ad), facts = std::move(facts),
                             out = std::move(out), later = std::move(later),
                             end_stream = std::move(end_stream)]() mutable {
        bool const inline_visit = visit->caller == std::this_thread::get_id() && visit->dispatching;
        auto attempt =
            self->answer_or_defer(ad, facts ? &*facts : nullptr, std::move(out), std::move(end_stream));
        if (auto* a = std::get_if<answer>(&attempt)) {
            if (inline_visit)
                visit->inline_answer = std::move(*a);
            else
                later(std::move(*a));
            return;
        }
        ++self->active_;
        auto deferred = std::get<detail::deferred_request>(std::move(attempt));
        asio::co_spawn(self->strand_, self->async_answer_to(std::move(deferred), std::move(later)),
                       asio::detached);
    });
    visit->dispatching = false;
    return std::move(visit->inline_answer);
}

asio::awaitable<connection::answer>
connection::impl::async_answer_counted(admitted_request ad, protocol::http_facts const* http, writer out) {
    auto self = shared_from_this();
    ++active_;
    std::function<void()> no_end; // named: GCC 12 destroys a temporary coroutine argument twice
    auto a = co_await async_answer_one(std::move(ad), http, std::move(out), std::move(no_end));
    --active_;
    maybe_done();
    co_return a;
}

asio::awaitable<connection::answer> connection::impl::async_answer_one(admitted_request ad,
                                                                       protocol::http_facts const* http,
                                                                       writer out,
                                                                       std::function<void()> end_stream) {
    auto attempt = answer_or_defer(ad, http, std::move(out), std::move(end_stream));
    if (auto* a = std::get_if<answer>(&attempt))
        co_return std::move(*a);
    auto deferred = std::get<detail::deferred_request>(std::move(attempt));
    co_return co_await dispatch_.async_answer(std::move(deferred));
}

asio::awaitable<void> connection::impl::async_answer_to(detail::deferred_request d,
                                                        std::function<void(answer)> later) {
    auto self = shared_from_this(); // the connection outlives its requests
    auto a = co_await dispatch_.async_answer(std::move(d));
    --active_;
    maybe_done();
    later(std::move(a));
}

std::variant<connection::answer, detail::deferred_request>
connection::impl::answer_or_defer(admitted_request& ad, protocol::http_facts const* http, writer out,
                                  std::function<void()> end_stream) {
    auto* const metrics = server_.options().metrics.get();
    if (!detail::answers_recorded(metrics))
        return carry_out(ad, http, std::move(out), std::move(end_stream), nullptr);
    detail::observed_request seen{.started = std::chrono::steady_clock::now(),
                                  .session = options_.session_id};
    auto attempt = carry_out(ad, http, std::move(out), std::move(end_stream), &seen);
    if (auto* a = std::get_if<answer>(&attempt)) {
        auto const& params = ad.request.params;
        auto const trace = log::enabled(log::level::debug) ? protocol::trace_of(params, http) : std::nullopt;
        detail::record_answer(metrics, seen, params, trace ? &*trace : nullptr, *a);
    } else
        std::get<detail::deferred_request>(attempt).state->started = seen.started; // dispatch records it
    return attempt;
}

std::variant<connection::answer, detail::deferred_request>
connection::impl::carry_out(admitted_request& ad, protocol::http_facts const* http, writer out,
                            std::function<void()> end_stream, detail::observed_request* seen) {
    auto& r = ad.request;
    auto& admitted = ad.verdict;
    if (!admitted) {
        if (seen)
            seen->method = protocol::find_method(r.method);
        return answer{refusal(r.id, std::move(admitted.error().error)), admitted.error().http_status};
    }
    auto& a = *admitted;
    if (seen) {
        seen->method = a.method;
        seen->era = metrics::label_of(a.era);
    }
    switch (a.what) {
    case protocol::admission::action::answer_ping:
        return answer{jsonrpc::response{r.id, boost::json::object{}}};
    case protocol::admission::action::handshake:
        return open_session(r, a.version);
    case protocol::admission::action::serve:
        break;
    }
    if (a.era == protocol::era::legacy) {
        if (!session_) {
            // Admitted by a session this connection does not carry: the transport routed it wrongly.
            log::write({.severity = log::level::error,
                        .name = "misrouted_request",
                        .message = "a request admitted in a legacy session reached a connection without one",
                        .method = r.method});
            return answer{refusal(r.id, protocol::internal_error()), 500};
        }
        bool changed = false;
        if (auto own = session_->answer_own_method(r, a.method->id, changed)) {
            if (changed)
                session_changed();
            return answer{std::move(own)};
        }
    } else if (a.method->id == method_id::subscriptions_listen) {
        bool const declares_tasks =
            protocol::declares(a.envelope->client_capabilities, protocol::client_capability::tasks);
        return answer{open_listen(r, *ad.capabilities, std::move(out), http, declares_tasks)};
    }
    auto prepared = dispatch_.prepare(r, a, session_ ? &*session_ : nullptr, std::move(out),
                                      std::move(end_stream), weak_from_this());
    if (auto* refused = std::get_if<jsonrpc::message>(&prepared))
        return detail::dispatch::answer_with(a, std::move(*refused));
    auto& state = std::get<std::shared_ptr<detail::request_state>>(prepared);
    if (http)
        state->caller = http->caller;
    state->trace = protocol::trace_of(r.params, http);
    return dispatch_.answer_or_defer(r, a, std::move(state));
}

protocol::session_view connection::impl::session_view() const {
    return {.legacy = session_ ? std::optional(session_->version()) : std::nullopt};
}

connection::answer connection::impl::open_session(jsonrpc::request const& r, protocol::version v) {
    auto const& params = r.params.get_object();
    std::shared_ptr<void> kept;
    if (auto b = server_.current_backend()) {
        auto admitted =
            b->on_session(v, params.at("capabilities").get_object(), params.at("clientInfo").get_object());
        if (!admitted) // a limit of the backend's, not the client's fault: it may try again later
            return answer{refusal(r.id, std::move(admitted.error())), 503};
        kept = std::move(*admitted);
    }
    detail::legacy_session s(server_, v, params, std::move(kept));
    // A second initialize renegotiates: the client gets the answer it asks for (ERA-POLICY).
    session_ = std::move(s);
    legacy_version_ = v;
    session_changed();
    return answer{jsonrpc::response{r.id, server_.initialize_result(v)}};
}

std::optional<jsonrpc::message> connection::impl::open_listen(jsonrpc::request const& r,
                                                              protocol::server_capabilities const& caps,
                                                              writer out, protocol::http_facts const* http,
                                                              bool declares_tasks) {
    if (listens_.contains(r.id) || dispatch_.in_flight(r.id))
        return refusal(r.id, protocol::invalid_request("Invalid Request: a request with this id is already "
                                                       "in flight"));
    // A watched task changes on whatever thread changed it; its notification is sent from this strand.
    detail::listen_registry::task_watch tasks{
        .owner = detail::modern_task_owner(http ? http->caller.get() : nullptr),
        .declares_extension = declares_tasks,
        .changed = [weak = weak_from_this(), strand = strand_](jsonrpc::request_id const& listen,
                                                               boost::json::object detailed) {
            asio::dispatch(strand, [weak, listen, detailed = std::move(detailed)]() mutable {
                if (auto self = weak.lock())
                    self->listens_.deliver_task(listen, std::move(detailed));
            });
        }};
    return listens_.open(r, caps, std::move(out), draining_, tasks);
}

} // namespace duet::server
