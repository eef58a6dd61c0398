// A downstream request's handler (upstream_backend::async_forward): its request turned into a call_spec,
// the call begun on ex_, and each step the call produces acted on (progress, log lines, a task, questions to
// the downstream client) until its outcome; and the handler's side of the crossing to ex_ and back. Apart
// from the call's upstream side (upstream_call.cpp) because the two run on different executors and meet
// only through forwarded_call.
#include <duet/gateway/translate.hpp>
#include <duet/log/log.hpp>
#include <duet/server/request_context.hpp>

#include "support/busy_batching.hpp"
#include "support/span_id.hpp"
#include "upstream_impl.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <charconv>
#include <chrono>
#include <exception>
#include <optional>
#include <tuple>
#include <vector>

namespace duet::gateway {

namespace detail {

/// The handler's state key naming the parked call of a modern request across its input rounds.
constexpr std::string_view parked_key = "duet.gateway/call";
/// How often a waiting handler looks at its request's cancellation.
constexpr auto poll_interval = std::chrono::milliseconds(200);

client::input_answer to_input_answer(server::peer_result const& r) {
    if (r) {
        if (r->is_object())
            return r->get_object();
        return protocol::make_error(protocol::errc::internal_error,
                                    "the downstream client's answer is not an object");
    }
    if (r.error().remote)
        return *r.error().remote;
    return protocol::make_error(protocol::errc::internal_error,
                                "the downstream client did not answer: " + r.error().to_string());
}

std::string status_of(server::answer_result const& r) {
    if (r)
        return "ok";
    return "error " + std::to_string(r.error().code);
}

// Counts a forwarded request for as long as it runs, however it ends.
struct in_flight_count {
    explicit in_flight_count(std::atomic<std::size_t>& n) noexcept : n_(n) {
        n_.fetch_add(1, std::memory_order_relaxed);
    }
    ~in_flight_count() { n_.fetch_sub(1, std::memory_order_relaxed); }
    in_flight_count(in_flight_count const&) = delete;
    in_flight_count& operator=(in_flight_count const&) = delete;

private:
    std::atomic<std::size_t>& n_;
};

} // namespace detail

using detail::in_flight_count;
using detail::parked_key;
using detail::poll_interval;
using detail::status_of;
using detail::to_input_answer;

// ---- the handler's side: what it hands to ex_ and gets back -------------------------------------------

// The call a handler serves: the parked one its retry names, or a new one started now.
std::shared_ptr<forwarded_call> upstream_backend::impl::attach_call(call_spec spec) {
    parked_.sweep();
    if (!spec.handle.empty())
        if (auto parked = parked_.find(spec.handle))
            return parked;
    // Parked once it asks a question (run's on_input), not before: most calls never do.
    auto call = std::make_shared<forwarded_call>(ex_, spec.modern_downstream);
    auto self = shared_from_this();
    asio::co_spawn(ex_, run(std::move(self), call, std::move(spec)), asio::detached);
    return call;
}

// The handler waits for the call's next step; while it waits, the periodic wake-up lets it look at its
// request's cancellation.
void upstream_backend::impl::await_step(std::shared_ptr<forwarded_call> const& call,
                                        forwarded_call::step_handler h, asio::any_io_executor h_ex) {
    call->wait(std::move(h), std::move(h_ex), waiting_);
    if (waiting_.empty() || ticking_)
        return;
    ticking_ = true;
    tick_.expires_after(poll_interval);
    tick_.async_wait([weak = weak_from_this()](boost::system::error_code) {
        auto self = weak.lock();
        if (!self)
            return;
        self->ticking_ = false;
        self->waiting_.poke_all(); // each waits again, and the next tick is armed then
    });
}

// Starts the call a handler serves (or attaches to the parked one its retry names) and completes with its
// first step: one crossing to this executor and one back for a plain call.
template<typename Token>
auto upstream_backend::impl::async_begin(call_spec spec, Token&& token) {
    return asio::async_initiate<Token, step_signature>(
        [self = shared_from_this()](auto handler, call_spec s) mutable {
            auto h_ex = asio::get_associated_executor(handler, self->ex_);
            auto ex = self->ex_;
            asio::post(ex, [self = std::move(self), s = std::move(s), h_ex = asio::any_io_executor(h_ex),
                            h = forwarded_call::step_handler(std::move(handler))]() mutable {
                auto call = self->attach_call(std::move(s));
                self->await_step(call, std::move(h), std::move(h_ex));
            });
        },
        token, std::move(spec));
}

// The call's next step, once there is one.
template<typename Token>
auto upstream_backend::impl::async_step(std::shared_ptr<forwarded_call> call, Token&& token) {
    return asio::async_initiate<Token, step_signature>(
        [self = shared_from_this()](auto handler, std::shared_ptr<forwarded_call> c) mutable {
            auto h_ex = asio::get_associated_executor(handler, self->ex_);
            auto ex = self->ex_;
            asio::post(ex, [self = std::move(self), c = std::move(c), h_ex = asio::any_io_executor(h_ex),
                            h = forwarded_call::step_handler(std::move(handler))]() mutable {
                self->await_step(c, std::move(h), std::move(h_ex));
            });
        },
        token, std::move(call));
}

// Hands the call the downstream client's answers and completes with its next step: one crossing to this
// executor and one back for the whole round, as for any step.
template<typename Token>
auto upstream_backend::impl::async_answer(std::shared_ptr<forwarded_call> call, answers given,
                                          Token&& token) {
    return asio::async_initiate<Token, step_signature>(
        [self = shared_from_this()](auto handler, std::shared_ptr<forwarded_call> c, answers a) mutable {
            auto h_ex = asio::get_associated_executor(handler, self->ex_);
            auto ex = self->ex_;
            asio::post(ex, [self = std::move(self), c = std::move(c), a = std::move(a),
                            h_ex = asio::any_io_executor(h_ex),
                            h = forwarded_call::step_handler(std::move(handler))]() mutable {
                for (auto& answer : a)
                    c->answer(answer.first, std::move(answer.second));
                self->await_step(c, std::move(h), std::move(h_ex));
            });
        },
        token, std::move(call), std::move(given));
}

awaitable<void> upstream_backend::impl::end_call(std::shared_ptr<impl> self,
                                                 std::shared_ptr<forwarded_call> call, bool abandon) {
    if (abandon)
        call->abandon();
    self->parked_.unpark(*call);
    co_return;
}

awaitable<server::answer_result> upstream_backend::async_answer(protocol::method_id method,
                                                                json::object const& params,
                                                                server::request_context& ctx) {
    auto const& session = ctx.session_data();
    return async_forward(method, params, ctx, session); // no frame of its own: the hot path
}

awaitable<server::answer_result> upstream_backend::async_forward(protocol::method_id method,
                                                                 json::object const& params,
                                                                 server::request_context& ctx,
                                                                 std::shared_ptr<void> const& session) {
    auto const started = std::chrono::steady_clock::now();
    auto self = impl_;
    in_flight_count counted(self->in_flight_);
    auto log = [&](std::string const& status) {
        // Counted by its first letter: ok, error or failed, cancelled, input_required.
        auto const kind = status[0] == 'o' ? 0 : status[0] == 'c' ? 2 : status[0] == 'i' ? 3 : 1;
        self->profile_->counted.forwarded[kind].fetch_add(1, std::memory_order_relaxed);
        if (!log::enabled(log::level::info))
            return;
        auto const took = std::chrono::steady_clock::now() - started;
        if (!self->log_->to_sink() && log::current_format() == log::format::json) {
            auto const era = era_text(ctx.era(), ctx.version());
            std::string message =
                std::string(protocol::info(method).name) + " forwarded to " + self->profile_->name;
            self->log_->write_with([&](std::string& line) {
                log::append(line,
                            {.component = "duet gateway",
                             .name = "forwarded",
                             .message = message,
                             .method = protocol::info(method).name,
                             .era = era,
                             .upstream = self->profile_->options.name.empty() ? self->profile_->name
                                                                              : self->profile_->options.name,
                             .outcome = status,
                             .latency_ms = std::chrono::duration<double, std::milli>(took).count(),
                             .trace_id = ctx.trace() ? ctx.trace()->trace_id() : std::string_view()},
                            log::format::json);
            });
            return;
        }
        auto const ms = std::chrono::duration_cast<std::chrono::milliseconds>(took);
        // Written in place (gateway_log::write_with): this runs for every request.
        self->log_->write_with([&](std::string& line) {
            line += "duet gateway: ";
            line += protocol::info(method).name;
            line += ' ';
            append_era(line, ctx.era(), ctx.version());
            line += " -> ";
            append_era(line, self->profile_->era, self->profile_->version);
            line += " upstream=";
            line += self->profile_->name;
            line += " status=";
            line += status;
            line += ' ';
            char digits[24];
            auto const end = std::to_chars(digits, digits + sizeof digits, ms.count()).ptr;
            line.append(digits, end);
            line += "ms";
            if (auto const* trace = ctx.trace()) {
                line += " trace=";
                line += trace->trace_id();
            }
        });
    };

    std::optional<support::busy_batching_hold> busy;
    if (self->profile_->options.batch_when_busy)
        busy.emplace(support::hold_busy_thread());
    auto up = upstream_params(method, params, self->profile_->options.lenient_args);
    if (!up) {
        server::answer_result refused = up.error();
        log(status_of(refused));
        co_return refused;
    }
    if (method == protocol::method_id::tools_call) {
        // The downstream's task is the gateway's; upstream, a 2025-11-25 task is asked for where the tool
        // needs one, or where it offers one and the downstream client can follow a task (the gateway then
        // follows the upstream's, and the downstream request becomes a task of its own).
        bool const downstream_follows = ctx.era() == protocol::era::modern
                                            ? ctx.declares(protocol::client_capability::tasks)
                                            : params.contains("task");
        up->erase("task");
        if (self->upstream_task_wanted(params, downstream_follows))
            (*up)["task"] = json::object{};
    }
    call_spec spec;
    spec.method = method;
    spec.params = std::move(*up);
    spec.capabilities = ctx.client_capabilities();
    spec.log_threshold = ctx.log_threshold();
    spec.wants_progress = ctx.wants_progress();
    if (auto const* trace = ctx.trace())
        spec.trace = protocol::child_of(*trace, support::new_span_id());
    spec.modern_downstream = ctx.era() == protocol::era::modern;
    spec.session = std::static_pointer_cast<session_upstream>(session);
    if (auto const* h = ctx.state().if_contains(parked_key); h && h->is_string())
        spec.handle = std::string(h->get_string());

    // Named, then taken apart by reference: GCC 12 miscompiles a structured binding of a co_await result.
    auto current = co_await self->async_begin(std::move(spec), asio::use_awaitable);
    auto& call = std::get<0>(current);
    auto& step = std::get<1>(current);
    server::answer_result outcome = protocol::internal_error();
    std::exception_ptr failure;
    try {
        for (;;) {
            if (ctx.cancelled()) {
                auto ending = impl::end_call(self, call, true);
                co_await asio::co_spawn(self->ex_, std::move(ending), asio::use_awaitable);
                log("cancelled");
                co_return protocol::internal_error(); // a cancelled request's answer is dropped
            }
            if (step.what == call_step::kind::done) {
                outcome = std::move(*step.outcome);
                break;
            }
            switch (step.what) {
            case call_step::kind::progress:
                ctx.report_progress(step.progress().progress, step.progress().total, step.progress().message);
                break;
            case call_step::kind::log:
                if (auto level = protocol::parse_log_level(step.log().level))
                    ctx.log(*level, std::move(step.log().data), step.log().logger);
                break;
            case call_step::kind::task:
                (void)co_await ctx.async_become_task(); // a client that cannot follow one just waits
                // A status message of the upstream's task: the gateway task's.
                if (auto const& note = step.progress().message; !note.empty())
                    ctx.set_task_status(note);
                break;
            case call_step::kind::questions: {
                // The retry that brings the answers finds the call by its handle (parked as it asked).
                if (call->parks())
                    ctx.state()[parked_key] = call->parked_handle();
                std::vector<std::string> keys;
                for (auto const& q : step.questions())
                    keys.push_back(q.key);
                auto answers = co_await ctx.async_inputs(std::move(step.questions()));
                impl::answers given;
                given.reserve(keys.size());
                for (std::size_t i = 0; i < keys.size() && i < answers.size(); ++i)
                    given.emplace_back(std::move(keys[i]), to_input_answer(answers[i]));
                current = co_await self->async_answer(call, std::move(given), asio::use_awaitable);
                continue;
            }
            default:
                break;
            }
            current = co_await self->async_step(call, asio::use_awaitable);
        }
    } catch (server::detail::input_required_signal const&) {
        log("input_required"); // the call stays parked for the retry
        throw;
    } catch (...) {
        failure = std::current_exception(); // a malformed answer, say: the call is over
    }
    if (failure) {
        auto ending = impl::end_call(self, call, true);
        co_await asio::co_spawn(self->ex_, std::move(ending), asio::use_awaitable);
        log("failed");
        std::rethrow_exception(failure);
    }
    if (outcome && method == protocol::method_id::tools_list)
        self->learn_tools(outcome->result);
    // Done: the sweep unparks it, if it was parked.
    if (!outcome && method == protocol::method_id::resources_read)
        if (auto respelled = respell_not_found(outcome.error(), params, ctx.era()))
            outcome = std::move(*respelled);
    log(status_of(outcome));
    co_return outcome;
}

} // namespace duet::gateway
