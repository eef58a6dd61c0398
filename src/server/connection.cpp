#include <duet/log/log.hpp>
#include <duet/protocol/admission.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/server/connection.hpp>
#include <duet/server/frame_storage.hpp>

#include "client_requests.hpp"
#include "dispatch.hpp"
#include "legacy_session.hpp"
#include "listen_registry.hpp"
#include "request_metrics.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
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

// The stream's order and lifetime (the strand, draining, requests to the client) and the routing of each
// request to what answers it: admission, the legacy session, the listens, or the dispatch of a handler.
class connection::impl : public std::enable_shared_from_this<connection::impl>, public detail::request_host {
public:
    impl(server& srv, asio::any_io_executor ex, writer w, connection_options o)
        : server_(srv), strand_(o.executor_is_serial ? asio::any_io_executor(std::move(ex))
                                                     : asio::any_io_executor(asio::make_strand(ex))),
          write_(std::move(w)), options_(o), dispatch_(srv, options_.session_id), listens_(srv, write_) {}

    // ---- a stream of frames -------------------------------------------------------------------------------

    // A burst of frames in one hand-off to the strand (one post, not one per frame). Answering every frame of
    // the burst before any is written keeps the writes to one per burst; handing them out a few at a time,
    // so the client could send more while the rest are answered, cost more in wake-ups than it gained.
    void receive(std::string frames) {
        asio::post(strand_, [self = shared_from_this(), frames = std::move(frames)] {
            std::string_view rest(frames);
            while (!rest.empty()) {
                auto const nl = rest.find('\n');
                self->on_frame(rest.substr(0, nl));
                if (nl == std::string_view::npos)
                    break;
                rest.remove_prefix(nl + 1);
            }
        });
    }

    void receive(jsonrpc::message message) {
        asio::post(strand_, [self = shared_from_this(), message = std::move(message)]() mutable {
            self->on_element(jsonrpc::parsed(std::move(message)));
        });
    }

    void receive_oversized() {
        asio::post(strand_, [self = shared_from_this()] {
            self->send(jsonrpc::error_response{std::nullopt,
                                               jsonrpc::to_error_object(jsonrpc::parse_errc::too_large)});
        });
    }

    void finish(std::function<void()> done) {
        asio::post(strand_, [self = shared_from_this(), done = std::move(done)]() mutable {
            self->draining_ = true;
            self->done_ = std::move(done);
            self->listens_.end_all();
            self->client_requests_.fail_all();
            self->maybe_done();
        });
    }

    void on_server_event(server_event const& e) {
        asio::post(strand_, [self = shared_from_this(), e] { self->deliver(e); });
    }

    // ---- one request whose answer the caller delivers ----------------------------------------------------

    // A named coroutine, not a capturing lambda (co_spawn may move a lambda's closure after starting it);
    // `self` keeps the connection alive until the answer.
    static asio::awaitable<answer> async_answer(std::shared_ptr<impl> self, admitted_request ad,
                                                protocol::http_facts const* http, writer out) {
        // Already on the connection's executor (a caller that shares it): answered here, with no hand-off.
        auto const caller = co_await asio::this_coro::executor;
        if (caller == self->strand_)
            co_return co_await self->async_answer_counted(std::move(ad), http, std::move(out));
        // Run on the connection's own strand (a coroutine resumes on the executor it was spawned on, whatever
        // it awaited), and hand the answer back to the caller's executor.
        co_return co_await asio::co_spawn(self->strand_,
                                          self->async_answer_counted(std::move(ad), http, std::move(out)),
                                          asio::use_awaitable);
    }

    std::optional<answer> answer_now(admitted_request ad, protocol::http_facts const* http, writer out,
                                     std::function<void(answer)> later, std::function<void()> end_stream) {
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

    void cancel_requests() {
        asio::post(strand_, [self = shared_from_this()] {
            self->dispatch_.cancel_all();
            self->listens_.cancel_all();
        });
    }

    std::optional<protocol::version> legacy_version() const { return legacy_version_.load(); }

    void restore_session(session_state const& st) {
        std::shared_ptr<void> kept;
        if (auto b = server_.current_backend())
            if (auto admitted = b->on_session(st.version, st.client_capabilities, st.client_info))
                kept = std::move(*admitted);
        session_.emplace(server_, st, std::move(kept));
        legacy_version_ = st.version;
    }

    void refresh_session(session_state st) {
        asio::dispatch(strand_, [self = shared_from_this(), st = std::move(st)] {
            if (self->session_)
                self->session_->apply(st);
        });
    }

    void deliver_session_events(bool on) { session_events_ = on; }

private:
    // answer_now() on a connection with a strand of its own (a legacy HTTP session, which requests on many
    // sockets share). asio::dispatch enters the strand right here when nothing runs on it or waits for it and
    // the caller is one of the io_context's threads: the request is answered inline, with no hand-off to the
    // strand and back. Otherwise it waits its turn there, as any other work of the connection, and `later`
    // gets its answer. Which of the two happened: the function ran on the caller's thread before dispatch
    // returned.
    struct strand_visit {
        std::thread::id caller = std::this_thread::get_id();
        bool dispatching = true; ///< read and written on the caller's thread only
        std::optional<answer> inline_answer;
    };

    std::optional<answer> answer_now_on_own_strand(admitted_request ad, protocol::http_facts const* http,
                                                   writer out, std::function<void(answer)> later,
                                                   std::function<void()> end_stream) {
        auto visit = std::make_shared<strand_visit>();
        // Copied for the trip: when the function waits its turn, the caller's facts may be gone.
        std::optional<protocol::http_facts> facts;
        if (http)
            facts = *http;
        asio::dispatch(strand_, [self = shared_from_this(), visit, ad = std::move(ad),
                                 facts = std::move(facts), out = std::move(out), later = std::move(later),
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

    // ---- output -------------------------------------------------------------------------------------------

    void send(jsonrpc::message const& m) { write_(jsonrpc::serialize(m)); }
    // To a request's own stream when it has one (HTTP), else the connection's.
    void send(jsonrpc::message const& m, writer const& out) { (out ? out : write_)(jsonrpc::serialize(m)); }

    void maybe_done() {
        if (draining_ && active_ == 0 && done_) {
            auto done = std::move(done_);
            done_ = nullptr;
            done();
        }
    }

    // ---- input --------------------------------------------------------------------------------------------

    void on_frame(std::string_view frame) {
        auto parsed = jsonrpc::parse_frame(frame, options_.limits, frame_storage());
        if (auto* one = std::get_if<jsonrpc::parsed>(&parsed.content)) {
            on_element(std::move(*one));
            return;
        }
        auto& elements = std::get<jsonrpc::batch>(parsed.content).elements;
        // Batches exist only in 2025-03-26 (removed in 2025-06-18); everywhere else the whole frame is
        // refused.
        if (!session_ || !protocol::batches_allowed(session_->version())) {
            send(jsonrpc::error_response{std::nullopt, protocol::batch_not_allowed()});
            return;
        }
        ++active_;
        asio::co_spawn(strand_, async_answer_batch(std::move(elements)), asio::detached);
    }

    void on_element(jsonrpc::parsed p) {
        if (!p) {
            if (p.error().reply)
                send(*p.error().reply);
            return;
        }
        std::visit(jsonrpc::overloaded{
                       [&](jsonrpc::request& r) { on_request(r); },
                       [&](jsonrpc::notification& n) { on_notification(n); },
                       [&](jsonrpc::response& r) {
                           client_requests_.on_answer(r.id, peer_result(std::move(r.result)));
                       },
                       [&](jsonrpc::error_response& e) {
                           if (e.id)
                               client_requests_.on_answer(*e.id, peer_failure{{}, std::move(e.error)});
                       },
                   },
                   *p);
    }

    // A request answered right away needs no coroutine at all; one whose handler may suspend gets one.
    void on_request(jsonrpc::request& r) {
        auto ad = server_.admit(std::move(r), session_view(), nullptr);
        auto attempt = answer_or_defer(ad, nullptr, nullptr, nullptr);
        if (auto* a = std::get_if<answer>(&attempt)) {
            if (a->message)
                send(*a->message);
            return;
        }
        ++active_;
        auto deferred = std::get<detail::deferred_request>(std::move(attempt));
        asio::co_spawn(strand_, async_answer_and_send(std::move(deferred)), asio::detached);
    }

    void on_notification(jsonrpc::notification const& n) {
        if (n.method == "notifications/initialized") {
            if (session_ && !session_->initialized()) {
                session_->mark_initialized();
                session_changed();
            }
        } else if (n.method == "notifications/cancelled") {
            auto const* p = n.params.if_object();
            auto const* rid = p ? p->if_contains("requestId") : nullptr;
            auto const id = rid ? jsonrpc::request_id::from_json(*rid) : std::nullopt;
            if (!id)
                return;
            dispatch_.cancel(*id);
            listens_.cancel(*id); // a cancelled listen ends silently
        }
        // Other notifications (progress, roots/list_changed, ...) need no answer and change nothing here.
    }

    // ---- answering: the coroutines, each spawned on strand_ ----------------------------------------------

    asio::awaitable<answer> async_answer_counted(admitted_request ad, protocol::http_facts const* http,
                                                 writer out) {
        auto self = shared_from_this();
        ++active_;
        std::function<void()> no_end; // named: GCC 12 destroys a temporary coroutine argument twice
        auto a = co_await async_answer_one(std::move(ad), http, std::move(out), std::move(no_end));
        --active_;
        maybe_done();
        co_return a;
    }

    asio::awaitable<answer> async_answer_one(admitted_request ad, protocol::http_facts const* http,
                                             writer out, std::function<void()> end_stream) {
        auto attempt = answer_or_defer(ad, http, std::move(out), std::move(end_stream));
        if (auto* a = std::get_if<answer>(&attempt))
            co_return std::move(*a);
        auto deferred = std::get<detail::deferred_request>(std::move(attempt));
        co_return co_await dispatch_.async_answer(std::move(deferred));
    }

    asio::awaitable<void> async_answer_batch(std::vector<jsonrpc::parsed> elements) {
        auto self = shared_from_this(); // the connection outlives its requests
        std::vector<jsonrpc::message> answers;
        for (auto& element : elements) {
            if (!element) {
                if (element.error().reply)
                    answers.push_back(*element.error().reply);
                continue;
            }
            if (auto* r = std::get_if<jsonrpc::request>(&*element)) {
                // Admitted in turn: an element answers by the session as the ones before it left it.
                auto ad = server_.admit(std::move(*r), session_view(), nullptr);
                writer none; // named: GCC 12 destroys a temporary coroutine argument twice
                std::function<void()> no_end;
                auto a =
                    co_await async_answer_one(std::move(ad), nullptr, std::move(none), std::move(no_end));
                if (a.message)
                    answers.push_back(std::move(*a.message));
            } else {
                on_element(std::move(element));
            }
        }
        if (!answers.empty())
            write_(jsonrpc::serialize(answers));
        --active_;
        maybe_done();
    }

    asio::awaitable<void> async_answer_to(detail::deferred_request d, std::function<void(answer)> later) {
        auto self = shared_from_this(); // the connection outlives its requests
        auto a = co_await dispatch_.async_answer(std::move(d));
        --active_;
        maybe_done();
        later(std::move(a));
    }

    asio::awaitable<void> async_answer_and_send(detail::deferred_request d) {
        auto self = shared_from_this(); // the connection outlives its requests
        auto a = co_await dispatch_.async_answer(std::move(d));
        if (a.message)
            send(*a.message);
        --active_;
        maybe_done();
    }

    // ---- routing ------------------------------------------------------------------------------------------

    // Carries out one admitted request's verdict, answering it when that needs no coroutine: admission
    // refused it, a handshake, a method the session answers itself, a listen, or a handler that completed
    // right away. Otherwise the request made ready for dispatch::async_answer(), its handler not yet run;
    // `ad` is moved from only then. `http` carries the HTTP facts (null on stdio); `out` is the request's
    // own stream (null: write_).
    std::variant<answer, detail::deferred_request> answer_or_defer(admitted_request& ad,
                                                                   protocol::http_facts const* http,
                                                                   writer out,
                                                                   std::function<void()> end_stream) {
        auto* const metrics = server_.options().metrics.get();
        if (!detail::answers_recorded(metrics))
            return carry_out(ad, http, std::move(out), std::move(end_stream), nullptr);
        detail::observed_request seen{.started = std::chrono::steady_clock::now(),
                                      .session = options_.session_id};
        auto attempt = carry_out(ad, http, std::move(out), std::move(end_stream), &seen);
        if (auto* a = std::get_if<answer>(&attempt)) {
            auto const& params = ad.request.params;
            auto const trace =
                log::enabled(log::level::debug) ? protocol::trace_of(params, http) : std::nullopt;
            detail::record_answer(metrics, seen, params, trace ? &*trace : nullptr, *a);
        } else
            std::get<detail::deferred_request>(attempt).state->started = seen.started; // dispatch records it
        return attempt;
    }

    // answer_or_defer's work; `seen` (null: no metrics) learns the method and era admission named.
    std::variant<answer, detail::deferred_request> carry_out(admitted_request& ad,
                                                             protocol::http_facts const* http, writer out,
                                                             std::function<void()> end_stream,
                                                             detail::observed_request* seen) {
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
        if (a.era == protocol::era::legacy && !session_) {
            // Admitted by a session this connection does not carry: the transport routed it wrongly.
            log::write({.severity = log::level::error,
                        .name = "misrouted_request",
                        .message = "a request admitted in a legacy session reached a connection without one",
                        .method = r.method});
            return answer{refusal(r.id, protocol::internal_error()), 500};
        }
        if (a.era == protocol::era::legacy) {
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

    protocol::session_view session_view() const {
        return {.legacy = session_ ? std::optional(session_->version()) : std::nullopt};
    }

    answer open_session(jsonrpc::request const& r, protocol::version v) {
        auto const& params = r.params.get_object();
        std::shared_ptr<void> kept;
        if (auto b = server_.current_backend()) {
            auto admitted = b->on_session(v, params.at("capabilities").get_object(),
                                          params.at("clientInfo").get_object());
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

    void session_changed() {
        if (options_.on_session_change)
            options_.on_session_change(session_->state());
    }

    // The answer of a listen comes when it ends; an open listen answers nothing now.
    std::optional<jsonrpc::message> open_listen(jsonrpc::request const& r,
                                                protocol::server_capabilities const& caps, writer out,
                                                protocol::http_facts const* http, bool declares_tasks) {
        if (listens_.contains(r.id) || dispatch_.in_flight(r.id))
            return refusal(r.id,
                           protocol::invalid_request("Invalid Request: a request with this id is already "
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

    // ---- detail::request_host: what a request's context reaches back for ---------------------------------

    void notify(detail::request_state const& request, jsonrpc::notification n) override {
        if (request.cancelled.load())
            return;
        auto out = request.detached.load() ? writer() : request.out;
        asio::dispatch(strand_, [self = shared_from_this(), n = std::move(n), out = std::move(out)] {
            self->send(n, out);
        });
    }

    asio::awaitable<peer_result> async_request_client(detail::request_state const& request,
                                                      std::string method, boost::json::value params,
                                                      std::chrono::milliseconds timeout) override {
        auto self = shared_from_this(); // the connection outlives the question
        // Copied before the first suspension, as `request` is only lent; a task's go on the session's stream.
        writer out = request.detached.load() ? writer() : request.out;
        co_await asio::dispatch(strand_, asio::use_awaitable);
        if (draining_ || !session_)
            co_return peer_failure{make_error_code(peer_errc::connection_closed), std::nullopt};
        // Only what the client declared at initialize may be asked of it.
        if (!session_->client_can_answer(method, params))
            co_return peer_failure{make_error_code(peer_errc::capability_missing), std::nullopt};
        if (timeout <= std::chrono::milliseconds::zero())
            timeout = options_.client_request_timeout; // the caller left it to the connection
        auto const sent = client_requests_.open(strand_, timeout, options_.client_request_id_prefix);
        send(jsonrpc::request{sent.id, std::move(method), std::move(params)}, out);
        co_await sent.wake->async_wait(asio::as_tuple(asio::use_awaitable));
        auto outcome = client_requests_.close(sent.id);
        if (!outcome) {
            // Tell the client we gave up, so it can stop asking its user (cancellation goes both ways).
            send(jsonrpc::notification{"notifications/cancelled",
                                       boost::json::object{{"requestId", sent.id.to_json()},
                                                           {"reason", "timed out"}}},
                 out);
            co_return peer_failure{make_error_code(peer_errc::timed_out), std::nullopt};
        }
        co_return std::move(*outcome);
    }

    // ---- events -------------------------------------------------------------------------------------------

    void deliver(server_event const& e) {
        if (session_ && session_events_) {
            auto const caps = server_.capabilities();
            if (auto n = session_->notification_for(e, *caps))
                send(*n);
        }
        listens_.deliver(e);
    }

    server& server_;
    asio::any_io_executor strand_; ///< a strand: the connection's own, or the caller's (executor_is_serial)
    writer write_;
    connection_options options_;
    detail::dispatch dispatch_;
    detail::listen_registry listens_; ///< holds a reference to write_
    std::optional<detail::legacy_session> session_;
    std::atomic<std::optional<protocol::version>> legacy_version_; ///< session_'s version, readable anywhere
    std::atomic<bool> session_events_{true};
    detail::client_requests client_requests_;
    std::size_t active_ = 0;
    bool draining_ = false;
    std::function<void()> done_;
};

std::shared_ptr<connection> connection::create(server& srv, asio::any_io_executor executor, writer write,
                                               connection_options options) {
    auto p = std::make_shared<impl>(srv, std::move(executor), std::move(write), options);
    std::shared_ptr<connection> c(new connection(p));
    if (options.hears_server_events)
        srv.subscribe(c);
    return c;
}

connection::~connection() = default;

void connection::receive(std::string frames) {
    impl_->receive(std::move(frames));
}
void connection::receive(jsonrpc::message message) {
    impl_->receive(std::move(message));
}
void connection::receive_oversized() {
    impl_->receive_oversized();
}
void connection::finish(std::function<void()> done) {
    impl_->finish(std::move(done));
}
asio::awaitable<connection::answer> connection::async_answer(admitted_request ad,
                                                             protocol::http_facts const* http, writer out) {
    return impl::async_answer(impl_, std::move(ad), http, std::move(out));
}
std::optional<connection::answer> connection::answer_now(admitted_request ad,
                                                         protocol::http_facts const* http, writer out,
                                                         std::function<void(answer)> later,
                                                         std::function<void()> end_stream) {
    return impl_->answer_now(std::move(ad), http, std::move(out), std::move(later), std::move(end_stream));
}
void connection::cancel_requests() {
    impl_->cancel_requests();
}
void connection::on_server_event(server_event const& e) {
    impl_->on_server_event(e);
}
std::optional<protocol::version> connection::legacy_version() const {
    return impl_->legacy_version();
}

void connection::restore_session(session_state const& s) {
    impl_->restore_session(s);
}

void connection::refresh_session(session_state s) {
    impl_->refresh_session(std::move(s));
}

void connection::deliver_session_events(bool on) {
    impl_->deliver_session_events(on);
}

} // namespace duet::server
