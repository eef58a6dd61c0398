#include <duet/protocol/envelope.hpp>
#include <duet/protocol/meta_keys.hpp>

#include <array>

namespace duet::protocol {

namespace {

constexpr std::array<std::string_view, 8> level_names{"debug", "info",     "notice", "warning",
                                                      "error", "critical", "alert",  "emergency"};

boost::json::object const* meta_of(boost::json::value const& params) noexcept {
    auto const* p = params.if_object();
    if (!p)
        return nullptr;
    auto const* m = p->if_contains("_meta");
    return m ? m->if_object() : nullptr;
}

std::string key_message(std::string_view what, std::string_view key) {
    std::string s = "Invalid params: params._meta[\"";
    s += key;
    s += "\"] ";
    s += what;
    return s;
}

} // namespace

std::optional<log_level> parse_log_level(std::string_view s) noexcept {
    for (std::size_t i = 0; i < level_names.size(); ++i)
        if (level_names[i] == s)
            return static_cast<log_level>(i);
    return std::nullopt;
}

std::string_view to_string(log_level l) noexcept {
    return level_names[static_cast<std::size_t>(l)];
}

version_claim read_version_claim(boost::json::value const& params) noexcept {
    auto const* meta = meta_of(params);
    if (!meta)
        return {};
    auto const* v = meta->if_contains(meta_key::protocol_version);
    if (!v)
        return {};
    if (!v->is_string())
        return {version_claim::kind::not_string, {}};
    return {version_claim::kind::text, std::string_view(v->get_string())};
}

boost::system::result<request_envelope, error_object> read_envelope(boost::json::value const& params,
                                                                    version v) {
    auto const* meta = meta_of(params);
    if (!meta)
        return invalid_params(key_message("is required", meta_key::protocol_version),
                              boost::json::object{{"key", meta_key::protocol_version}});
    request_envelope env;
    env.version = v;

    // The envelope's members in one pass over `_meta` rather than one lookup each (keys are unique); they are
    // checked below in the order the lookups were.
    boost::json::value const* caps = nullptr;
    boost::json::value const* info = nullptr;
    boost::json::value const* level = nullptr;
    boost::json::value const* token = nullptr;
    for (auto const& kv : *meta) {
        auto const k = kv.key();
        if (k == meta_key::client_capabilities)
            caps = &kv.value();
        else if (k == meta_key::client_info)
            info = &kv.value();
        else if (k == meta_key::log_level)
            level = &kv.value();
        else if (k == meta_key::progress_token)
            token = &kv.value();
    }

    if (!caps)
        return invalid_params(
            key_message("is required (use {} to declare none)", meta_key::client_capabilities),
            boost::json::object{{"key", meta_key::client_capabilities}});
    if (!caps->is_object())
        return invalid_params(key_message("must be an object", meta_key::client_capabilities),
                              boost::json::object{{"key", meta_key::client_capabilities}});
    env.client_capabilities = caps->get_object();

    if (info) {
        auto const* o = info->if_object();
        bool const well_formed = o && o->contains("name") && o->at("name").is_string() &&
                                 o->contains("version") && o->at("version").is_string();
        if (!well_formed)
            return invalid_params(
                key_message("must be an object with string name and version", meta_key::client_info),
                boost::json::object{{"key", meta_key::client_info}});
        env.client_info = *o;
    }

    if (level) {
        std::optional<log_level> parsed;
        if (level->is_string())
            parsed = parse_log_level(level->get_string());
        if (!parsed)
            return invalid_params(
                key_message("must be one of debug, info, notice, warning, error, critical, alert, "
                            "emergency",
                            meta_key::log_level),
                boost::json::object{{"key", meta_key::log_level}});
        env.log_level = parsed;
    }

    if (token) {
        if (!token->is_string() && !token->is_int64() && !token->is_uint64())
            return invalid_params(key_message("must be a string or an integer", meta_key::progress_token),
                                  boost::json::object{{"key", meta_key::progress_token}});
        env.progress_token = *token;
    }
    return env;
}

void write_envelope(boost::json::object& params, request_envelope const& env) {
    auto& slot = params["_meta"];
    if (!slot.is_object())
        slot = boost::json::object{};
    auto& meta = slot.get_object();
    // Room for every member written below at once: growing one member at a time reallocates four times.
    meta.reserve(meta.size() + 5);
    meta[meta_key::protocol_version] = to_string(env.version);
    meta[meta_key::client_capabilities] = env.client_capabilities;
    if (env.client_info)
        meta[meta_key::client_info] = *env.client_info;
    else
        meta.erase(meta_key::client_info);
    if (env.log_level)
        meta[meta_key::log_level] = to_string(*env.log_level);
    else
        meta.erase(meta_key::log_level);
    if (!env.progress_token.is_null())
        meta[meta_key::progress_token] = env.progress_token;
}

} // namespace duet::protocol
