#include "listen_registry.hpp"

#include <duet/protocol/errors.hpp>
#include <duet/protocol/meta_keys.hpp>
#include <duet/protocol/shaping.hpp>

#include "task_registry.hpp"

#include <algorithm>

namespace duet::server::detail {

namespace {

boost::json::object subscription_meta(jsonrpc::request_id const& id) {
    return boost::json::object{{protocol::meta_key::subscription_id, id.to_json()}};
}

jsonrpc::message refusal(jsonrpc::request_id const& id, protocol::error_object e) {
    return jsonrpc::error_response{id, std::move(e)};
}

} // namespace

std::optional<jsonrpc::message> listen_registry::open(jsonrpc::request const& r,
                                                      protocol::server_capabilities const& caps,
                                                      connection::writer out, bool end_at_once,
                                                      task_watch const& tasks) {
    auto const* p = r.params.if_object();
    auto const* n = p ? p->if_contains("notifications") : nullptr;
    if (!n || !n->is_object())
        return refusal(r.id, protocol::invalid_params("Invalid params: subscriptions/listen needs a "
                                                      "notifications object"));
    auto const& requested = n->get_object();
    auto flag = [&](std::string_view key) {
        auto const* v = requested.if_contains(key);
        return v && v->is_bool() && v->get_bool();
    };
    listen l;
    l.out = out;
    boost::json::object honoured;
    for (auto const& change : protocol::change_table()) {
        if (change.is_list_change() && flag(change.listen_flag) && caps.*change.advertised) {
            honoured[change.listen_flag] = true;
            l.lists.set(static_cast<std::size_t>(change.what));
        }
    }
    if (auto const* subs = requested.if_contains("resourceSubscriptions")) {
        if (!subs->is_array())
            return refusal(r.id, protocol::invalid_params("Invalid params: resourceSubscriptions must be "
                                                          "an array of URIs"));
        boost::json::array uris;
        for (auto const& u : subs->get_array()) {
            if (!u.is_string())
                return refusal(r.id, protocol::invalid_params("Invalid params: resourceSubscriptions must "
                                                              "be an array of URIs"));
            l.uris.emplace_back(u.get_string());
            uris.push_back(u);
        }
        if (caps.resources_subscribe) {
            honoured["resourceSubscriptions"] = std::move(uris);
            l.watches = resource_watches(server_);
            for (auto const& u : l.uris)
                l.watches.add(u);
        } else {
            l.uris.clear();
        }
    }
    if (auto const* ids = requested.if_contains("taskIds")) {
        if (!ids->is_array() || std::any_of(ids->get_array().begin(), ids->get_array().end(),
                                            [](auto const& v) { return !v.is_string(); }))
            return refusal(r.id,
                           protocol::invalid_params("Invalid params: taskIds must be an array of task ids"));
        if (!tasks.declares_extension)
            return refusal(r.id, protocol::missing_required_client_capability(
                                     protocol::requirement(protocol::client_capability::tasks)));
        // Only the caller's own, live tasks are watched (with a shared store, also ids not heard of yet,
        // whose changes come only if they are the caller's); others are left out of the acknowledgement, as
        // if they did not exist (a task id never reveals another caller's task).
        boost::json::array watched;
        auto& registry = server_.tasks();
        for (auto const& v : ids->get_array()) {
            std::string id(v.get_string());
            if (!caps.tasks || !registry.may_watch(id, tasks.owner))
                continue;
            l.task_watches.push_back(
                registry.watch(id, tasks.owner,
                               [changed = tasks.changed, listen = r.id](boost::json::object const& detailed) {
                                   changed(listen, detailed);
                               }));
            watched.emplace_back(id);
        }
        honoured["taskIds"] = std::move(watched);
    }
    // The acknowledgement is the first message for this subscription id; events are delivered on this
    // strand after it, so none can overtake it.
    boost::json::object ack{{"_meta", subscription_meta(r.id)}, {"notifications", std::move(honoured)}};
    send(jsonrpc::notification{"notifications/subscriptions/acknowledged", std::move(ack)}, out);
    if (end_at_once) {
        end(r.id, out);
        return std::nullopt;
    }
    listens_[r.id] = std::move(l);
    return std::nullopt;
}

void listen_registry::deliver_task(jsonrpc::request_id const& id, boost::json::object detailed) {
    auto it = listens_.find(id);
    if (it == listens_.end())
        return;
    detailed["_meta"] = subscription_meta(id);
    send(jsonrpc::notification{"notifications/tasks", std::move(detailed)}, it->second.out);
}

void listen_registry::end_all() {
    for (auto const& [id, l] : listens_)
        end(id, l.out);
    listens_.clear();
}

void listen_registry::deliver(server_event const& e) {
    bool const list_change = protocol::info(e.what).is_list_change();
    for (auto const& [id, l] : listens_) {
        bool wanted = list_change && l.lists.test(static_cast<std::size_t>(e.what));
        if (!list_change)
            for (auto const& u : l.uris)
                wanted = wanted || covers(u, e.uri);
        if (!wanted)
            continue;
        boost::json::object params{{"_meta", subscription_meta(id)}};
        if (!list_change)
            params["uri"] = e.uri;
        send(jsonrpc::notification{std::string(notification_method(e.what)), std::move(params)}, l.out);
    }
}

void listen_registry::end(jsonrpc::request_id const& id, connection::writer const& out) {
    boost::json::object result{{"_meta", subscription_meta(id)}};
    // A modern result like any other: resultType and serverInfo (ERA-POLICY "Consequences").
    protocol::shape_result(result, {.era = protocol::era::modern,
                                    .version = protocol::latest_modern_version,
                                    .method = protocol::method_id::subscriptions_listen,
                                    .server_info = &server_.server_info()});
    send(jsonrpc::response{id, std::move(result)}, out);
}

} // namespace duet::server::detail
