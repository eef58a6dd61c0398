// The session core of the client: one request and its answer, per era; routing of everything the server
// sends; legacy server-to-client requests answered through the input handlers.
#include "client_impl.hpp"

#include <duet/client/negotiation.hpp>
#include <duet/jsonrpc/json_text.hpp>
#include <duet/protocol/envelope.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/protocol/input_key.hpp>
#include <duet/protocol/meta_keys.hpp>
#include <duet/protocol/request_headers.hpp>
#include <duet/protocol/tasks.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cstdio>

namespace duet::client {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using protocol::method_id;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

namespace {

std::string token_key(json::value const& token) {
    if (token.is_string())
        return "s:" + std::string(token.get_string());
    if (token.is_int64())
        return "i:" + std::to_string(token.get_int64());
    if (token.is_uint64())
        return "i:" + std::to_string(token.get_uint64());
    return {};
}

json::object const* object_at(json::object const& o, std::string_view key) {
    auto const* v = o.if_contains(key);
    return v ? v->if_object() : nullptr;
}

} // namespace

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

client::impl::impl(asio::any_io_executor ex, server_target target, client_options options)
    : ex_(std::move(ex)), target_(std::move(target)), options_(std::move(options)) {
    if (options_.inputs.elicitation)
        client_caps_["elicitation"] = json::object{};
    if (options_.inputs.sampling)
        client_caps_["sampling"] = json::object{};
    if (options_.inputs.roots)
        client_caps_["roots"] = json::object{};
    if (options_.capabilities)
        client_caps_ = *options_.capabilities;
    // The tasks extension exists only in modern envelopes; a legacy handshake declares the rest.
    modern_caps_ = client_caps_;
    if (options_.tasks && !options_.capabilities) {
        auto& ext = modern_caps_["extensions"];
        if (!ext.is_object())
            ext = json::object{};
        ext.get_object()[protocol::tasks_extension] = json::object{};
    }
}

void client::impl::warn(std::string const& text) const {
    if (options_.on_warning)
        options_.on_warning(text);
    else
        std::fprintf(stderr, "duet client: warning: %s\n", text.c_str());
}

awaitable<result<void>> client::impl::async_start_transport() {
    if (transport_) {
        auto old = std::move(transport_);
        co_await old->async_close();
    }
    closed_ = false;
    closed_error_.reset();
    if (auto const* h = std::get_if<http_target>(&target_)) {
        auto url = parse_http_url(h->url);
        if (!url)
            co_return url.error();
        transport_ = detail::make_http_transport(ex_, *h, options_.max_message_bytes);
    } else {
        transport_ = detail::make_stdio_transport(
            ex_, std::get<stdio_target>(target_),
            detail::stdio_settings{options_.max_message_bytes, options_.on_server_stderr});
    }
    std::weak_ptr<detail::transport_sink> sink = shared_from_this();
    auto started = co_await transport_->async_start(std::move(sink));
    if (!started)
        closed_ = true;
    co_return started;
}

// ---- sending
// -------------------------------------------------------------------------------------------------

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

// ---- receiving
// -----------------------------------------------------------------------------------------------

void client::impl::on_message(jsonrpc::message m, unsigned http_status, jsonrpc::request_id const* related) {
    auto self = shared_from_this();
    std::visit(
        jsonrpc::overloaded{
            [&](jsonrpc::response& r) {
                auto const it = pending_.find(r.id);
                if (it == pending_.end() || it->second->outcome)
                    return;
                answer a;
                if (r.result.is_object())
                    a.value = std::move(r.result.get_object());
                else
                    a.value = make_error(errc::protocol_violation, "the result is not an object");
                a.http_status = http_status;
                it->second->outcome = std::move(a);
                it->second->timer.cancel();
            },
            [&](jsonrpc::error_response& e) {
                if (!e.id)
                    return;
                auto const it = pending_.find(*e.id);
                if (it == pending_.end() || it->second->outcome)
                    return;
                it->second->outcome = answer{rpc_failure(std::move(e.error), http_status), http_status};
                it->second->timer.cancel();
            },
            [&](jsonrpc::request& r) {
                // Legacy server-to-client requests; a modern server never sends any.
                jsonrpc::message reply = jsonrpc::response{r.id, json::object{}};
                auto const params = r.params.is_object() ? r.params.get_object() : json::object{};
                auto const* h = input_handler_for(r.method);
                // The in-flight request that answers for itself and owns the question: the one whose stream
                // carried it, else the only one there is.
                // A 2025-11-25 task's question names its task: the follower of that task answers it.
                if (auto const* meta = object_at(params, "_meta"); meta && !task_inputs_.empty())
                    if (auto const* rel = object_at(*meta, protocol::related_task_key))
                        if (auto const* id = rel->if_contains("taskId"); id && id->is_string())
                            if (auto t = task_inputs_.find(std::string_view(id->get_string()));
                                t != task_inputs_.end()) {
                                input_question q{r.method, params, {}};
                                if (auto const* k = meta->if_contains(protocol::meta_key::input_key);
                                    k && k->is_string())
                                    q.key = std::string(k->get_string());
                                jsonrpc::request_id const no_owner{std::int64_t{-1}};
                                asio::co_spawn(ex_,
                                               async_answer(self, t->second, no_owner, r.id, std::move(q)),
                                               asio::detached);
                                return;
                            }
                auto route = input_routes_.end();
                if (related)
                    route = std::find_if(input_routes_.begin(), input_routes_.end(),
                                         [&](auto const& rt) { return rt.first == *related; });
                if (route == input_routes_.end() && input_routes_.size() == 1)
                    route = input_routes_.begin();
                if (method_ref{r.method}.is(method_id::ping)) {
                    // {} as built above
                } else if (era_ == protocol::era::modern) {
                    // A modern server asks inside its results (input_required), never with a request.
                    reply = jsonrpc::error_response{
                        r.id, protocol::method_not_found(r.method, "a modern server asks in input_required")};
                } else if (route != input_routes_.end()) {
                    input_question q{r.method, params, {}};
                    if (auto const* meta = object_at(params, "_meta"))
                        if (auto const* k = meta->if_contains(protocol::meta_key::input_key);
                            k && k->is_string())
                            q.key = std::string(k->get_string());
                    asio::co_spawn(ex_, async_answer(self, *route->second, route->first, r.id, std::move(q)),
                                   asio::detached);
                    return;
                } else if (!input_routes_.empty()) {
                    // Several requests could own it and nothing says which: answering for the wrong one would
                    // hand one caller's question to another.
                    reply = jsonrpc::error_response{
                        r.id, protocol::make_error(protocol::errc::internal_error,
                                                   r.method + " cannot be tied to one of the requests in "
                                                              "flight; send it on the request's own stream")};
                } else if (h && *h) {
                    auto answer = (*h)(params);
                    if (answer)
                        reply = jsonrpc::response{r.id, std::move(*answer)};
                    else
                        reply = jsonrpc::error_response{r.id, answer.error()};
                } else {
                    reply = jsonrpc::error_response{
                        r.id, protocol::method_not_found(r.method, "not offered by this client")};
                }
                if (transport_ && !closed_) {
                    detail::send_facts facts;
                    facts.legacy_session = true;
                    transport_->send(std::move(reply), std::move(facts));
                }
            },
            [&](jsonrpc::notification& n) {
                auto const params = n.params.is_object() ? n.params.get_object() : json::object{};
                method_ref const said{n.method};
                if (said.is(method_id::notification_progress)) {
                    auto const* t = params.if_contains("progressToken");
                    if (!t)
                        return;
                    auto const key = token_key(*t);
                    auto const it = std::find_if(progress_.begin(), progress_.end(),
                                                 [&](auto const& route) { return route.token == key; });
                    if (it == progress_.end())
                        return;
                    // The server is working on it: the wait for its answer starts again (up to the limit).
                    if (auto const p = pending_.find(it->id); p != pending_.end() && !p->second->outcome)
                        p->second->restart_wait();
                    progress_event ev;
                    if (auto const* p = params.if_contains("progress"); p && p->is_number())
                        ev.progress = p->to_number<double>();
                    if (auto const* p = params.if_contains("total"); p && p->is_number())
                        ev.total = p->to_number<double>();
                    if (auto const* p = params.if_contains("message"); p && p->is_string())
                        ev.message = std::string(p->get_string());
                    (*it->on_progress)(ev);
                    return;
                }
                if (said.is(method_id::notification_message)) {
                    auto const own =
                        related ? std::find_if(log_routes_.begin(), log_routes_.end(),
                                               [&](auto const& route) { return route.first == *related; })
                                : log_routes_.end();
                    if (own == log_routes_.end() && !options_.on_log)
                        return;
                    log_event ev;
                    if (auto const* p = params.if_contains("level"); p && p->is_string())
                        ev.level = std::string(p->get_string());
                    if (auto const* p = params.if_contains("logger"); p && p->is_string())
                        ev.logger = std::string(p->get_string());
                    if (auto const* p = params.if_contains("data"))
                        ev.data = *p;
                    if (own != log_routes_.end()) {
                        (*own->second)(ev);
                    } else {
                        options_.on_log(ev);
                    }
                    return;
                }
                cache_.on_notification(n.method, params);
                if (said.is(method_id::notification_tools_list_changed))
                    tools_known_ = false;
                // Modern listen notifications carry their subscription id.
                if (auto const* meta = object_at(params, "_meta")) {
                    if (auto const* sid = meta->if_contains(protocol::meta_key::subscription_id)) {
                        auto const id = jsonrpc::request_id::from_json(*sid);
                        if (id) {
                            auto const it = listens_.find(*id);
                            if (it != listens_.end()) {
                                listen_event ev;
                                ev.what = said.is(method_id::notification_subscriptions_acknowledged)
                                              ? listen_event::kind::acknowledged
                                              : listen_event::kind::notification;
                                ev.method = n.method;
                                ev.params = params;
                                auto cb = it->second;
                                cb(ev);
                            }
                        }
                        return;
                    }
                }
                if (said.is(method_id::notification_cancelled)) {
                    // The server ends a request: on stdio this is one way a listen ends (DIGEST §15.1), which
                    // counts as a graceful end; any other request gets no answer any more.
                    auto const* rid = params.if_contains("requestId");
                    auto const id = rid ? jsonrpc::request_id::from_json(*rid) : std::nullopt;
                    auto const it = id ? pending_.find(*id) : pending_.end();
                    if (it == pending_.end() || it->second->outcome)
                        return;
                    if (listens_.contains(*id))
                        it->second->outcome = answer{json::object{}, 0};
                    else
                        it->second->outcome =
                            answer{make_error(errc::cancelled, "the server cancelled the request")};
                    it->second->timer.cancel();
                    return;
                }
                auto watchers = watchers_;
                for (auto& kv : watchers)
                    kv.second(n.method, params);
                if (options_.on_notification)
                    options_.on_notification(n.method, params);
            },
        },
        m);
}

void client::impl::on_authorizing(jsonrpc::request_id const& id, bool underway) {
    if (auto const it = pending_.find(id); it != pending_.end()) {
        it->second->authorizing = underway;
        it->second->restart_wait();
    }
}

void client::impl::on_request_failed(jsonrpc::request_id const& id, error e) {
    // A legacy session the server forgot (HTTP 404) refuses every request alike: the connection is over, and
    // its owner begins a new session (MCP's rule for a 404 on a session).
    std::optional<error> session_gone;
    if (e.code == errc::session_expired)
        session_gone = e;
    auto const it = pending_.find(id);
    if (it != pending_.end() && !it->second->outcome) {
        auto const status = e.http_status;
        it->second->outcome = answer{std::move(e), status};
        it->second->timer.cancel();
    }
    if (session_gone && !closed_)
        on_closed(std::move(*session_gone));
}

void client::impl::on_closed(error e) {
    closed_ = true;
    closed_error_ = e;
    for (auto& kv : pending_) {
        if (kv.second->outcome)
            continue;
        kv.second->outcome = answer{e, 0};
        kv.second->timer.cancel();
    }
    for (auto& w : wakeups_)
        if (auto t = w.lock())
            t->cancel();
}

// ---- connecting
// ----------------------------------------------------------------------------------------------

bool client::impl::learn_tool(json::object const& tool) {
    auto const* name = tool.if_contains("name");
    auto const* schema = object_at(tool, "inputSchema");
    if (!name || !name->is_string())
        return false;
    std::vector<protocol::param_header> bindings;
    if (schema) {
        auto collected = protocol::collect_param_headers(*schema);
        if (!collected)
            return false;
        bindings = std::move(*collected);
    }
    tool_headers_[std::string(name->get_string())] = std::move(bindings);
    auto const* execution = object_at(tool, "execution");
    auto const* support = execution ? execution->if_contains("taskSupport") : nullptr;
    if (support && support->is_string() && support->get_string() == "required")
        tasks_required_.insert(std::string(name->get_string()));
    else
        tasks_required_.erase(std::string(name->get_string()));
    return true;
}

bool client::impl::offers_legacy_tasks() const {
    auto const* tasks = object_at(server_caps_, "tasks");
    auto const* requests = tasks ? object_at(*tasks, "requests") : nullptr;
    auto const* tools = requests ? object_at(*requests, "tools") : nullptr;
    return tools && object_at(*tools, "call");
}

bool client::impl::tool_requires_task(std::string_view name) const {
    return tasks_required_.contains(std::string(name));
}

void client::impl::become_modern(protocol::version v) {
    era_ = protocol::era::modern;
    version_ = v;
    if (client_caps_.contains("roots") || client_caps_.contains("sampling"))
        warn("roots and sampling are deprecated in " + std::string(protocol::to_string(v)) +
             " (SEP-2577); this client still declares them because handlers for them are set");
}

void client::impl::adopt_discover(json::object const& discover) {
    handshake_ = discover;
    if (auto const* caps = object_at(discover, "capabilities"))
        server_caps_ = *caps;
    if (auto const* meta = object_at(discover, "_meta"))
        if (auto const* info = object_at(*meta, protocol::meta_key::server_info))
            server_info_ = *info;
    if (server_info_.empty())
        if (auto const* info = object_at(discover, "serverInfo"))
            server_info_ = *info; // pre-release servers put it at the top
    if (auto const* i = discover.if_contains("instructions"); i && i->is_string())
        instructions_ = std::string(i->get_string());
}

awaitable<client::impl::answer> client::impl::async_probe(protocol::version v) {
    era_ = protocol::era::modern;
    version_ = v;
    request_options probe;
    probe.timeout = options_.probe_timeout;
    json::object const no_params;
    auto a = co_await async_round(method_id::server_discover, no_params, probe);
    co_return a;
}

awaitable<result<void>> client::impl::async_initialize(protocol::version offer) {
    era_ = protocol::era::legacy;
    version_ = offer;
    json::object caps = client_caps_;
    json::object params{{"protocolVersion", protocol::to_string(offer)},
                        {"capabilities", std::move(caps)},
                        {"clientInfo", options_.client_info}};
    request_options init;
    auto a = co_await async_round(method_id::initialize, params, init);
    if (!a.value)
        co_return a.value.error();
    auto const accepted = accepted_handshake_version(*a.value);
    if (!accepted)
        co_return accepted.error();
    version_ = *accepted; // a counter-offer is adopted
    handshake_ = *a.value;
    if (auto const* caps_in = object_at(handshake_, "capabilities"))
        server_caps_ = *caps_in;
    if (auto const* info = object_at(handshake_, "serverInfo"))
        server_info_ = *info;
    if (auto const* i = handshake_.if_contains("instructions"); i && i->is_string())
        instructions_ = std::string(i->get_string());
    // Queued in this order, the initialized POST goes before the GET stream opens; both carry the version.
    notify(method_id::notification_initialized, json::object{});
    transport_->begin_legacy_session(version_);
    co_return result<void>{};
}

} // namespace duet::client
