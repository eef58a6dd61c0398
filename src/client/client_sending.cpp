// The client's sending side: one request and its answer per era (envelope, headers, progress, cancellation,
// timeout), the modern -32022 retry, the cache, multi round-trip input rounds, and legacy server-to-client
// requests answered through a request's own handler. Apart from receiving (client_receiving.cpp), which
// hands each answer to the request waiting here.
#include <duet/client/negotiation.hpp>
#include <duet/jsonrpc/json_text.hpp>
#include <duet/protocol/envelope.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/protocol/meta_keys.hpp>
#include <duet/protocol/request_headers.hpp>

#include "client_impl.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace duet::client {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using detail::object_at;
using detail::token_key;
using protocol::method_id;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

void cancellation::cancel() {
    if (cancelled_)
        return;
    cancelled_ = true;
    auto callbacks = std::move(callbacks_);
    for (auto& w : callbacks)
        if (auto f = w.lock())
            (*f)();
}

std::shared_ptr<void> cancellation::on_cancel(std::function<void()> f) {
    auto holder = std::make_shared<std::function<void()>>(std::move(f));
    if (cancelled_) {
        (*holder)();
        return holder;
    }
    std::erase_if(callbacks_, [](auto const& w) { return w.expired(); });
    callbacks_.push_back(holder);
    return holder;
}

void client::impl::notify(method_id method, json::object params) {
    if (!transport_ || closed_)
        return;
    detail::send_facts facts;
    facts.legacy_session = era_ == protocol::era::legacy;
    transport_->send(jsonrpc::notification{std::string(protocol::info(method).name), std::move(params)},
                     std::move(facts));
}

awaitable<client::impl::answer> client::impl::async_round(method_ref method, json::object const& original,
                                                          request_options const& options) {
    if (closed_ || !transport_)
        co_return answer{closed_error_.value_or(make_error(errc::closed, "the connection is closed"))};
    if (options.cancel && options.cancel->cancelled())
        co_return answer{make_error(errc::cancelled, "cancelled before it was sent")};
    // With room for the _meta member a modern envelope or a progress token adds: a plain copy is exact, and
    // that one member reallocates it.
    json::object params(original.size() + 1);
    params.insert(original.begin(), original.end());
    jsonrpc::request_id const id{next_id_++};
    std::string token;
    json::value progress_token = nullptr;
    if (options.on_progress) {
        progress_token = "duet-" + std::to_string(id.as_integer());
        token = token_key(progress_token);
        progress_.push_back(progress_route{token, &options.on_progress, id});
    }
    bool const modern = era_ == protocol::era::modern && !method.is(method_id::initialize);
    if (modern) {
        protocol::request_envelope env;
        env.version = version_;
        env.client_capabilities = options.client_capabilities.value_or(modern_caps_);
        env.client_info = options_.client_info;
        if (auto const& level = options.log_level ? options.log_level : options_.log_level)
            env.log_level = protocol::parse_log_level(*level);
        env.progress_token = progress_token;
        protocol::write_envelope(params, env);
    } else if (!progress_token.is_null()) {
        auto& meta = params["_meta"];
        if (!meta.is_object())
            meta = json::object{};
        meta.get_object()[protocol::meta_key::progress_token] = progress_token;
    }
    if (options.trace) {
        auto& meta = params["_meta"];
        if (!meta.is_object())
            meta = json::object{};
        auto& m = meta.get_object();
        m[protocol::meta_key::traceparent] = options.trace->traceparent;
        if (options.trace->tracestate.empty())
            m.erase(protocol::meta_key::tracestate);
        else
            m[protocol::meta_key::tracestate] = options.trace->tracestate;
    }
    jsonrpc::request req{id, std::string(method.name), std::move(params)};
    detail::send_facts facts;
    if (modern && transport_->is_http()) {
        std::span<protocol::param_header const> bindings;
        if (method.is(method_id::tools_call)) {
            auto const* name = req.params.as_object().if_contains("name");
            if (name && name->is_string())
                if (auto const it = tool_headers_.find(std::string(name->get_string()));
                    it != tool_headers_.end())
                    bindings = it->second;
        }
        facts.headers = protocol::modern_request_headers(req, bindings);
    }
    facts.legacy_session = !modern;
    if (options.trace && transport_->is_http()) {
        facts.headers.push_back({"traceparent", options.trace->traceparent});
        if (!options.trace->tracestate.empty())
            facts.headers.push_back({"tracestate", options.trace->tracestate});
    }

    auto p = std::make_shared<pending>(ex_);
    pending_[id] = p;
    if (options.on_input)
        input_routes_.emplace_back(id, &options.on_input);
    if (options.on_log)
        log_routes_.emplace_back(id, &options.on_log);
    auto const timeout = options.timeout.value_or(options_.request_timeout);
    p->timeout = timeout;
    if (options_.request_time_limit.count() > 0)
        p->limit_at = pending::clock::now() + options_.request_time_limit;
    p->restart_wait();
    std::shared_ptr<void> on_cancel;
    if (options.cancel) {
        std::weak_ptr<pending> weak = p;
        on_cancel = options.cancel->on_cancel([weak] {
            if (auto q = weak.lock()) {
                q->cancelled = true;
                q->timer.cancel();
            }
        });
    }
    auto const transport = transport_;
    transport->send(std::move(req), std::move(facts));

    for (;;) {
        co_await p->timer.async_wait(tuple_awaitable);
        if (p->outcome || p->cancelled)
            break;
        if (p->timer.expiry() <= pending::clock::now())
            break; // timed out (progress and questions move the expiry, cancelling this wait)
    }
    pending_.erase(id);
    std::erase_if(input_routes_, [&](auto const& route) { return route.first == id; });
    if (options.on_log)
        std::erase_if(log_routes_, [&](auto const& route) { return route.first == id; });
    if (!token.empty())
        std::erase_if(progress_, [&](auto const& route) { return route.token == token; });
    if (p->outcome)
        co_return std::move(*p->outcome);

    // Cancelled or timed out: tell the server (stdio, legacy HTTP) or close the stream (modern HTTP).
    transport->abandon(id);
    bool const say_cancelled = !transport->is_http() || !modern;
    if (say_cancelled && !method.is(method_id::initialize) && !closed_) {
        json::object cancel_params{{"requestId", id.to_json()},
                                   {"reason", p->cancelled ? "cancelled by the client" : "timed out"}};
        notify(method_id::notification_cancelled, std::move(cancel_params));
    }
    if (p->cancelled)
        co_return answer{make_error(errc::cancelled, std::string(method.name) + " was cancelled")};
    if (p->limit_at <= pending::clock::now())
        co_return answer{make_error(errc::timeout, std::string(method.name) + " ran past its limit of " +
                                                       std::to_string(options_.request_time_limit.count()) +
                                                       " ms")};
    co_return answer{make_error(errc::timeout, std::string(method.name) + " got no answer within " +
                                                   std::to_string(timeout.count()) + " ms")};
}

awaitable<result<json::object>> client::impl::async_plain(method_ref method, json::object const& params,
                                                          request_options const& options) {
    auto first = co_await async_round(method, params, options);
    if (first.value || era_ != protocol::era::modern)
        co_return std::move(first.value);
    auto const& e = first.value.error();
    if (e.code != errc::rpc_error || !e.rpc ||
        e.rpc->code != static_cast<std::int32_t>(protocol::errc::unsupported_protocol_version))
        co_return std::move(first.value);
    // -32022: once, with a version from data.supported that this client speaks.
    auto const v = retry_version(e.rpc->data);
    if (!v)
        co_return std::move(first.value);
    version_ = *v;
    auto second = co_await async_round(method, params, options);
    co_return std::move(second.value);
}

awaitable<result<json::object>> client::impl::async_cached(method_ref method, json::object params,
                                                           request_options const& options) {
    bool const use = options_.use_cache && method.row && method.row->cacheable;
    auto const now = result_cache::clock::now();
    if (use && !options.bypass_cache)
        if (auto hit = cache_.fresh(method.name, params, now))
            co_return std::move(*hit);
    auto r = co_await async_plain(method, params, options);
    if (r) {
        if (use)
            cache_.store(method.name, params, *r, result_cache::clock::now());
        co_return r;
    }
    // A stale copy may be served while a re-fetch is failing for transport reasons.
    if (use && r.error().code != errc::rpc_error && r.error().code != errc::cancelled)
        if (auto stale = cache_.any(method.name, params))
            co_return std::move(*stale);
    co_return r;
}

awaitable<result<json::object>> client::impl::async_with_input(method_ref method, json::object const& params,
                                                               request_options const& options) {
    constexpr int max_rounds = 16;
    json::object round_params; // a retry's: the first round sends `params` as they are
    for (int round = 0;; ++round) {
        auto const& sent = round == 0 ? params : round_params;
        auto r = co_await async_plain(method, sent, options);
        if (!r)
            co_return r;
        switch (kind_of(*r)) {
        case result_kind::complete:
        case result_kind::task: // the caller follows it (async_call_tool)
            co_return r;
        case result_kind::invalid:
            co_return make_error(errc::protocol_violation, std::string(method.name) +
                                                               " returned an unknown resultType: " +
                                                               jsonrpc::to_json_text(r->at("resultType")));
        case result_kind::input_required:
            break;
        }
        if (round + 1 >= max_rounds)
            co_return make_error(errc::protocol_violation, std::string(method.name) +
                                                               " still asked for input after " +
                                                               std::to_string(max_rounds) + " rounds");
        json::object responses;
        if (auto const* requests = object_at(*r, "inputRequests")) {
            auto answered = co_await async_answer_inputs(*requests, options);
            if (!answered)
                co_return answered.error();
            responses = std::move(*answered);
        }
        round_params = retry_params(params, std::move(responses), r->if_contains("requestState"));
    }
}

awaitable<result<json::object>> client::impl::async_answer_inputs(json::object const& requests,
                                                                  request_options const& options) {
    json::object responses;
    for (auto const& kv : requests) {
        auto const* req = kv.value().if_object();
        auto const* m = req ? req->if_contains("method") : nullptr;
        if (!m || !m->is_string())
            co_return make_error(errc::protocol_violation,
                                 "input request \"" + std::string(kv.key()) + "\" names no method");
        std::string_view const what = m->get_string();
        json::object const empty;
        auto const* p = object_at(*req, "params");
        if (options.on_input) {
            input_question q{std::string(what), p ? *p : empty, std::string(kv.key())};
            auto answer = co_await options.on_input(std::move(q));
            if (!answer)
                co_return make_error(errc::cancelled,
                                     std::string(what) + " was refused: " + answer.error().message);
            answer->erase("resultType");
            responses[kv.key()] = std::move(*answer);
            continue;
        }
        auto const* h = input_handler_for(what);
        if (!h || !*h)
            co_return make_error(errc::usage, "the server asked for " + std::string(what) +
                                                  ", which this client has no handler for");
        auto answer = (*h)(p ? *p : empty);
        if (!answer)
            co_return make_error(errc::cancelled,
                                 std::string(what) + " was refused: " + answer.error().message);
        answer->erase("resultType");
        responses[kv.key()] = std::move(*answer);
    }
    co_return responses;
}

// A legacy server-to-client request answered by a request's async_input_handler.
awaitable<void> client::impl::async_answer(std::shared_ptr<impl> self, async_input_handler handler,
                                           jsonrpc::request_id owner, jsonrpc::request_id id,
                                           input_question q) {
    // A person may take their time to answer: the request's wait for its own answer stops meanwhile.
    auto const waiting = [&]() -> std::shared_ptr<pending> {
        auto const it = self->pending_.find(owner);
        return it == self->pending_.end() ? nullptr : it->second;
    };
    if (auto p = waiting()) {
        ++p->questions_open;
        p->restart_wait();
    }
    auto answer = co_await handler(std::move(q));
    if (auto p = waiting()) {
        --p->questions_open;
        p->restart_wait();
    }
    jsonrpc::message reply = answer ? jsonrpc::message{jsonrpc::response{id, std::move(*answer)}}
                                    : jsonrpc::message{jsonrpc::error_response{id, answer.error()}};
    if (self->transport_ && !self->closed_) {
        detail::send_facts facts;
        facts.legacy_session = true;
        self->transport_->send(std::move(reply), std::move(facts));
    }
}

input_handlers::handler const* client::impl::input_handler_for(std::string_view method) const noexcept {
    method_ref const asked{method};
    if (asked.is(method_id::elicitation_create))
        return &options_.inputs.elicitation;
    if (asked.is(method_id::sampling_create_message))
        return &options_.inputs.sampling;
    if (asked.is(method_id::roots_list))
        return &options_.inputs.roots;
    return nullptr;
}
} // namespace duet::client
