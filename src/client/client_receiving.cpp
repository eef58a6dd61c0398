// The client's receiving side: everything the server sends, routed (answers by id, progress by token, log
// lines to their request, listen notifications by subscription id, legacy server-to-client requests to the
// input handlers, change notifications to the cache and watchers), and what the transport reports of failed
// requests and a closed connection. Apart from sending (client_sending.cpp): this is the transport_sink.
#include <duet/protocol/errors.hpp>
#include <duet/protocol/input_key.hpp>
#include <duet/protocol/meta_keys.hpp>
#include <duet/protocol/tasks.hpp>

#include "client_impl.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <algorithm>

namespace duet::client {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using detail::object_at;
using detail::token_key;
using protocol::method_id;

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
} // namespace duet::client
