#include <duet/jsonrpc/json_text.hpp>
#include <duet/server/session_state.hpp>

#include <boost/json/parse.hpp>

namespace duet::server {

namespace json = boost::json;

namespace {

using state_result = boost::system::result<session_state, std::string>;

state_result refused(std::string why) {
    return state_result(boost::system::in_place_error,
                        "a stored session that cannot be read: " + std::move(why));
}

} // namespace

std::string to_json_text(session_state const& s) {
    json::array subscriptions;
    for (auto const& uri : s.subscriptions)
        subscriptions.emplace_back(uri);
    return jsonrpc::to_json_text(json::object{{"version", protocol::to_string(s.version)},
                                              {"capabilities", s.client_capabilities},
                                              {"clientInfo", s.client_info},
                                              {"initialized", s.initialized},
                                              {"logLevel", protocol::to_string(s.log_level)},
                                              {"subscriptions", std::move(subscriptions)}});
}

boost::system::result<session_state, std::string> session_state_from_json(std::string_view text) {
    boost::system::error_code ec;
    auto const v = json::parse(text, ec);
    if (ec || !v.is_object())
        return refused("not a JSON object");
    auto const& o = v.get_object();
    auto string_of = [&](std::string_view key) -> std::string_view {
        auto const* f = o.if_contains(key);
        return f && f->is_string() ? std::string_view(f->get_string()) : std::string_view();
    };
    auto object_of = [&](std::string_view key) -> json::object const* {
        auto const* f = o.if_contains(key);
        return f && f->is_object() ? &f->get_object() : nullptr;
    };
    session_state s;
    auto const version = protocol::parse_version(string_of("version"));
    if (!version)
        return refused("no protocol version");
    s.version = *version;
    auto const* capabilities = object_of("capabilities");
    auto const* info = object_of("clientInfo");
    if (!capabilities || !info)
        return refused("no client capabilities or info");
    s.client_capabilities = *capabilities;
    s.client_info = *info;
    auto const* initialized = o.if_contains("initialized");
    if (!initialized || !initialized->is_bool())
        return refused("no initialized flag");
    s.initialized = initialized->get_bool();
    auto const level = protocol::parse_log_level(string_of("logLevel"));
    if (!level)
        return refused("no log level");
    s.log_level = *level;
    auto const* subscriptions = o.if_contains("subscriptions");
    if (!subscriptions || !subscriptions->is_array())
        return refused("no subscriptions");
    for (auto const& uri : subscriptions->get_array()) {
        if (!uri.is_string())
            return refused("a subscription that is not a URI string");
        s.subscriptions.emplace(uri.get_string());
    }
    return s;
}

} // namespace duet::server
