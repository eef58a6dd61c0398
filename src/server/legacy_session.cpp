#include "legacy_session.hpp"

#include <duet/protocol/envelope.hpp>
#include <duet/protocol/errors.hpp>

namespace duet::server::detail {

namespace {

jsonrpc::message refusal(jsonrpc::request_id const& id, protocol::error_object e) {
    return jsonrpc::error_response{id, std::move(e)};
}

} // namespace

legacy_session::legacy_session(server& srv, protocol::version v, boost::json::object const& params,
                               std::shared_ptr<void> backend_data)
    : version_(v), client_capabilities_(
                       std::make_shared<boost::json::object const>(params.at("capabilities").get_object())),
      client_info_(std::make_shared<boost::json::object const>(params.at("clientInfo").get_object())),
      subscriptions_(srv), backend_data_(std::move(backend_data)) {}

legacy_session::legacy_session(server& srv, session_state const& s, std::shared_ptr<void> backend_data)
    : version_(s.version),
      client_capabilities_(std::make_shared<boost::json::object const>(s.client_capabilities)),
      client_info_(std::make_shared<boost::json::object const>(s.client_info)), subscriptions_(srv),
      backend_data_(std::move(backend_data)) {
    apply(s);
}

session_state legacy_session::state() const {
    return session_state{.version = version_,
                         .client_capabilities = *client_capabilities_,
                         .client_info = *client_info_,
                         .initialized = initialized_,
                         .log_level = static_cast<protocol::log_level>(threshold_->load()),
                         .subscriptions = subscriptions_.uris()};
}

void legacy_session::apply(session_state const& s) {
    initialized_ = s.initialized;
    threshold_->store(static_cast<int>(s.log_level));
    auto const held = subscriptions_.uris(); // a copy: removing changes it
    for (auto const& uri : held)
        if (!s.subscriptions.contains(uri))
            subscriptions_.remove(uri);
    for (auto const& uri : s.subscriptions)
        subscriptions_.add(uri);
}

std::optional<jsonrpc::message> legacy_session::answer_own_method(jsonrpc::request const& r,
                                                                  protocol::method_id m, bool& changed) {
    using protocol::method_id;
    auto const* p = r.params.if_object();
    switch (m) {
    case method_id::ping:
        return jsonrpc::response{r.id, boost::json::object{}};
    case method_id::logging_set_level: {
        auto const* level = p ? p->if_contains("level") : nullptr;
        auto const parsed =
            level && level->is_string() ? protocol::parse_log_level(level->get_string()) : std::nullopt;
        if (!parsed)
            return refusal(r.id, protocol::invalid_params("Invalid params: level must be one of debug, info, "
                                                          "notice, warning, error, critical, alert, "
                                                          "emergency"));
        threshold_->store(static_cast<int>(*parsed));
        changed = true;
        return jsonrpc::response{r.id, boost::json::object{}};
    }
    case method_id::resources_subscribe:
    case method_id::resources_unsubscribe: {
        auto const* uri = p ? p->if_contains("uri") : nullptr;
        if (!uri || !uri->is_string())
            return refusal(r.id, protocol::invalid_params("Invalid params: \"uri\" must be a string"));
        if (m == method_id::resources_subscribe)
            subscriptions_.add(std::string(uri->get_string()));
        else
            subscriptions_.remove(std::string(uri->get_string()));
        changed = true;
        return jsonrpc::response{r.id, boost::json::object{}};
    }
    default:
        return std::nullopt;
    }
}

std::optional<jsonrpc::notification>
legacy_session::notification_for(server_event const& e, protocol::server_capabilities const& caps) const {
    if (!initialized_)
        return std::nullopt;
    // A list change reaches every session of a server that advertises it; an update, the sessions that
    // subscribed to its URI (or above it).
    auto const& change = protocol::info(e.what);
    bool wanted = change.is_list_change() && caps.*change.advertised;
    if (!change.is_list_change())
        for (auto const& s : subscriptions_.uris())
            wanted = wanted || covers(s, e.uri);
    if (!wanted)
        return std::nullopt;
    boost::json::value params;
    if (!change.is_list_change())
        params = boost::json::object{{"uri", e.uri}};
    return jsonrpc::notification{std::string(notification_method(e.what)), std::move(params)};
}

bool legacy_session::client_can_answer(std::string_view method, boost::json::value const& params) const {
    auto const needed = protocol::capability_needed(method, params);
    return !needed || protocol::declares(*client_capabilities_, *needed);
}

} // namespace duet::server::detail
