#include "dispatch.hpp"

#include <duet/log/log.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/protocol/meta_keys.hpp>
#include <duet/protocol/shaping.hpp>
#include <duet/server/protocol_error.hpp>

#include "request_metrics.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <utility>

namespace duet::server::detail {

namespace {

void log_failure(jsonrpc::request const& r, request_state const& state, std::string const& s) {
    log::event const e{.severity = log::level::error,
                       .name = "handler_failed",
                       .message = s,
                       .method = r.method,
                       .era = protocol::to_string(state.era),
                       .trace_id = state.trace ? state.trace->trace_id() : std::string_view()};
    log::write(e);
}

// A handler that cannot go on without a capability fails as admission would have: -32021 is HTTP 400
// wherever it arises (DIGEST §9). Other handler errors travel on a 200.
unsigned error_status(std::optional<jsonrpc::message> const& message) {
    auto const* e = message ? std::get_if<jsonrpc::error_response>(&*message) : nullptr;
    auto const required = static_cast<std::int32_t>(protocol::errc::missing_required_client_capability);
    return e && e->error.code == required ? 400u : 200u;
}

} // namespace

std::variant<std::shared_ptr<request_state>, jsonrpc::message>
dispatch::prepare(jsonrpc::request const& r, protocol::admission& a, legacy_session const* session,
                  connection::writer out, std::function<void()> end_stream,
                  std::weak_ptr<request_host> host) {
    auto state = std::make_shared<request_state>();
    state->era = a.era;
    state->version = a.version;
    state->id = r.id;
    if (a.era == protocol::era::modern) {
        // Moved: the admission's envelope is not read again. Declaring none (`{}`) shares the empty object.
        if (!a.envelope->client_capabilities.empty())
            state->client_capabilities =
                std::make_shared<boost::json::object const>(std::move(a.envelope->client_capabilities));
        if (a.envelope->client_info)
            state->client_info =
                std::make_shared<boost::json::object const>(std::move(*a.envelope->client_info));
        state->progress_token = a.envelope->progress_token;
        state->log_level = a.envelope->log_level;
        if (a.method->may_require_input) {
            state->input_rounds = true;
            if (auto e = restore_input(r, *state))
                return jsonrpc::message{jsonrpc::error_response{r.id, std::move(*e)}};
        }
    } else {
        state->client_capabilities = session->client_capabilities();
        state->client_info = session->client_info();
        state->session_data = session->backend_data();
        state->end_stream = std::move(end_stream);
        if (auto const* p = r.params.if_object())
            if (auto const* meta = p->if_contains("_meta"); meta && meta->is_object())
                if (auto const* t = meta->get_object().if_contains(protocol::meta_key::progress_token))
                    if (t->is_string() || t->is_int64() || t->is_uint64())
                        state->progress_token = *t;
        state->session_log_threshold = session->log_threshold();
        state->may_request_client = true;
    }
    state->host = std::move(host);
    state->out = std::move(out);
    if (in_flight_.contains(r.id))
        return jsonrpc::message{jsonrpc::error_response{
            r.id, protocol::invalid_request("Invalid Request: a request with this id is already in flight")}};
    return state;
}

dispatch::dispatch(server& srv, std::string_view session) : server_(srv), session_(session) {}

std::variant<connection::answer, deferred_request>
dispatch::answer_or_defer(jsonrpc::request& r, protocol::admission& a, std::shared_ptr<request_state> state) {
    if (a.method->gate == protocol::capability::tasks || a.method->id == protocol::method_id::tools_call) {
        std::optional<deferred_request> later;
        if (auto settled = answer_tasks(r, a, state, later))
            return std::move(*settled);
        if (later) {
            in_flight_[later->r.id] = later->state;
            return std::move(*later);
        }
    }
    std::optional<answer_result> outcome;
    {
        request_context ctx(state);
        try {
            outcome = server_.answer_now(a.method->id, r.params, ctx);
        } catch (...) {
            outcome = failed(server_, r, *state);
        }
    }
    if (!outcome) {
        // The handler may suspend: it runs in async_answer(), cancellable by id meanwhile.
        in_flight_[r.id] = state;
        return deferred_request{std::move(r), std::move(a), std::move(state)};
    }
    return answer_with(a, shape(r, a, *state, std::move(*outcome)));
}

boost::asio::awaitable<connection::answer> dispatch::async_answer(deferred_request d) {
    answer_result outcome = protocol::internal_error();
    if (d.tasks_method) {
        auto owner = task_owner(*d.state);
        outcome =
            co_await server_.tasks().async_answer(d.a.method->id, d.r.params, std::move(owner), d.a.era);
    } else if (d.task) {
        outcome = co_await async_run_as_task(d);
    } else {
        request_context ctx(d.state);
        try {
            outcome = co_await server_.async_answer(d.a.method->id, d.r.params, ctx);
        } catch (...) {
            outcome = failed(server_, d.r, *d.state);
        }
    }
    // Every connection coroutine is spawned on the connection's strand, so even after a plain handler ran
    // on the blocking pool this continues there.
    in_flight_.erase(d.r.id);
    auto message = shape(d.r, d.a, *d.state, std::move(outcome));
    auto answer = answer_with(d.a, std::move(message));
    if (auto* metrics = server_.options().metrics.get(); answers_recorded(metrics))
        record_answer(metrics, {d.a.method, metrics::label_of(d.a.era), d.state->started, session_},
                      d.r.params, d.state->trace ? &*d.state->trace : nullptr, answer);
    co_return answer;
}

std::string dispatch::task_owner(request_state const& state) {
    // A caller with an identity owns its tasks in either era, so it can come back for them from another
    // session; without one, a legacy session owns its own.
    auto owner = modern_task_owner(state.caller.get());
    if (state.era == protocol::era::legacy && owner.empty()) {
        // The session's id, which every process serving it knows; a session without one (stdio) is this
        // connection.
        if (task_scope_.empty())
            task_scope_ = "session:" + (session_.empty() ? store::new_task_id() : std::string(session_));
        return task_scope_;
    }
    return owner;
}

std::optional<connection::answer> dispatch::answer_tasks(jsonrpc::request& r, protocol::admission& a,
                                                         std::shared_ptr<request_state>& state,
                                                         std::optional<deferred_request>& later) {
    using protocol::method_id;
    auto const refuse = [&](protocol::error_object e) {
        return answer_with(a, jsonrpc::message{jsonrpc::error_response{r.id, std::move(e)}});
    };
    if (a.method->id != method_id::tools_call) {
        if (!r.params.is_null() && !r.params.is_object())
            return refuse(protocol::invalid_params("Invalid params: params must be an object"));
        if (r.params.is_null())
            r.params = boost::json::object{};
        later = deferred_request{std::move(r), std::move(a), std::move(state), std::nullopt, true};
        return std::nullopt;
    }
    auto const policy = server_.task_policy(r.params);
    if (!policy)
        return std::nullopt;
    bool const declares = a.era == protocol::era::modern &&
                          protocol::declares(*state->client_capabilities, protocol::client_capability::tasks);
    std::optional<protocol::task_request> asked;
    if (a.era == protocol::era::legacy && a.version == protocol::version::v2025_11_25) {
        auto read = protocol::legacy_task_request(r.params);
        if (!read)
            return refuse(std::move(read.error()));
        asked = *read;
    }
    auto decision =
        protocol::decide_task(policy->name, policy->support, a.era, a.version, declares, asked.has_value());
    switch (decision.what) {
    case protocol::task_decision::kind::plain:
        return std::nullopt;
    case protocol::task_decision::kind::refuse:
        return refuse(std::move(*decision.refusal));
    case protocol::task_decision::kind::task:
        break;
    }
    task_plan plan{.owner = task_owner(*state),
                   .after = a.era == protocol::era::modern ? policy->after : std::chrono::milliseconds(0)};
    if (asked && asked->ttl_ms)
        plan.ttl = std::chrono::milliseconds(*asked->ttl_ms);
    later = deferred_request{std::move(r), std::move(a), std::move(state), std::move(plan), false};
    return std::nullopt;
}

boost::asio::awaitable<answer_result> dispatch::async_run_as_task(deferred_request& d) {
    auto const ex = co_await boost::asio::this_coro::executor;
    auto link =
        std::make_shared<task_link>(server_.tasks_shared(), *d.task, d.a.era, d.a.version, d.state, ex);
    d.state->task = link;
    if (d.task->after <= std::chrono::milliseconds::zero())
        if (auto made = co_await link->async_promote(); !made)
            co_return made.error(); // a full task store refuses before the handler runs
    // The handler's own copy of the request: as a task it may outlive this connection and its dispatch.
    auto request = std::make_shared<jsonrpc::request const>(d.r);
    boost::asio::co_spawn(ex, async_run_linked(server_, std::move(request), d.state, link),
                          boost::asio::detached);
    auto const deadline = std::chrono::steady_clock::now() + d.task->after;
    bool promotion_tried = false;
    for (;;) {
        if (auto created = link->created())
            co_return method_answer{protocol::create_task_result(*created, d.a.era), {}};
        if (auto done = link->take_outcome())
            co_return std::move(*done);
        auto const now = std::chrono::steady_clock::now();
        if (!promotion_tried && now >= deadline) {
            // Still running: a task from now on, unless its handler committed to answering the request or
            // the caller holds its most tasks (the call then goes on as a plain request).
            promotion_tried = true;
            (void)co_await link->async_promote();
            continue;
        }
        auto const wait =
            promotion_tried ? std::chrono::steady_clock::duration(std::chrono::seconds(1)) : deadline - now;
        (void)co_await link->dispatcher_wake().async_wait_for(wait);
    }
}

boost::asio::awaitable<void> dispatch::async_run_linked(server& srv,
                                                        std::shared_ptr<jsonrpc::request const> r,
                                                        std::shared_ptr<request_state> state,
                                                        std::shared_ptr<task_link> link) {
    link->start(co_await boost::asio::this_coro::executor);
    answer_result outcome = protocol::internal_error();
    {
        request_context ctx(state);
        try {
            outcome = co_await srv.async_answer(protocol::method_id::tools_call, r->params, ctx);
        } catch (...) {
            outcome = failed(srv, *r, *state);
        }
    }
    link->finish(std::move(outcome));
}

connection::answer dispatch::answer_with(protocol::admission const& a,
                                         std::optional<jsonrpc::message> message) {
    auto const status = a.era == protocol::era::modern ? error_status(message) : 200u;
    return connection::answer{std::move(message), status};
}

// What a handler's exception becomes; called from the handler's catch block.
answer_result dispatch::failed(server& srv, jsonrpc::request const& r, request_state& state) {
    try {
        throw;
    } catch (input_required_signal const&) {
        return input_required(srv, r, state);
    } catch (protocol_error const& e) {
        return e.error();
    } catch (std::exception const& e) {
        log_failure(r, state, "handler for " + r.method + " failed: " + e.what());
        return protocol::internal_error();
    } catch (...) {
        log_failure(r, state, "handler for " + r.method + " failed with a non-standard exception");
        return protocol::internal_error();
    }
}

// The answer to a request whose handler ran: none when it was cancelled, else its error or its shaped result.
std::optional<jsonrpc::message> dispatch::shape(jsonrpc::request const& r, protocol::admission const& a,
                                                request_state const& state, answer_result outcome) {
    if (state.cancelled.load())
        return std::nullopt; // a cancelled request gets no answer
    if (!outcome)
        return jsonrpc::message{jsonrpc::error_response{r.id, std::move(outcome.error())}};
    auto& s = *outcome;
    // DIGEST §5: the result of an MRTR retry must not be cached, whatever the configured hints (it may rest
    // on what the user answered). A retry is what carries a requestState (checked by restore_input).
    if (state.input_rounds && r.params.get_object().contains("requestState"))
        s.hints = protocol::cache_hints{};
    bool info_left_out = false;
    protocol::shape_result(s.result, {.era = a.era,
                                      .version = a.version,
                                      .method = a.method->id,
                                      .hints = s.hints,
                                      .server_info = &server_.server_info(),
                                      .server_info_left_out = &info_left_out});
    jsonrpc::response response{r.id, std::move(s.result)};
    if (info_left_out)
        response.result_tail = server_.server_info_tail(); // shared, not copied into every result
    return jsonrpc::message{std::move(response)};
}

// A modern retry: the sealed state of earlier rounds, plus the answers to what the last round asked.
std::optional<protocol::error_object> dispatch::restore_input(jsonrpc::request const& r,
                                                              request_state& state) {
    // Both members in one walk over params (its keys are unique): most requests carry neither, and an absent
    // member cost a full lookup each.
    boost::json::value const* token = nullptr;
    boost::json::value const* responses = nullptr;
    for (auto const& kv : r.params.get_object()) {
        if (kv.key() == "requestState")
            token = &kv.value();
        else if (kv.key() == "inputResponses")
            responses = &kv.value();
    }
    if (token) {
        if (!token->is_string())
            return protocol::invalid_params("Invalid params: requestState must be a string");
        auto opened =
            server_.sealer().open(token->get_string(), r.method, r.params, std::chrono::system_clock::now());
        if (!opened)
            return protocol::invalid_params("Invalid params: " + opened.error().message);
        state.input = std::move(*opened);
    }
    if (responses) {
        if (!responses->is_object())
            return protocol::invalid_params("Invalid params: inputResponses must be an object");
        // Answers to what the last round asked replace nothing sealed before them; any other key is only
        // offered: the handler may ask it in this run, and what it never asks is ignored (DIGEST §4).
        for (auto const& kv : responses->get_object()) {
            bool const asked = std::any_of(
                state.input.pending.begin(), state.input.pending.end(),
                [&](boost::json::value const& k) { return k.is_string() && k.get_string() == kv.key(); });
            if (asked)
                state.input.answers[kv.key()] = kv.value();
            else if (!state.input.answers.contains(kv.key()))
                state.offered[kv.key()] = kv.value();
        }
    }
    state.input.pending.clear();
    return std::nullopt;
}

// The InputRequiredResult of a round that asked for input: its questions, and everything the next retry
// needs, sealed.
method_answer dispatch::input_required(server& srv, jsonrpc::request const& r, request_state& state) {
    input_state next = state.input;
    next.pending.clear();
    for (auto const& kv : state.asked)
        next.pending.emplace_back(kv.key());
    auto const expiry = std::chrono::system_clock::now() + srv.options().request_state_ttl;
    method_answer s;
    s.result["resultType"] = "input_required";
    s.result["inputRequests"] = state.asked;
    s.result["requestState"] = srv.sealer().seal(r.method, r.params, next, expiry);
    return s;
}

} // namespace duet::server::detail
