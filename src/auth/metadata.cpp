#include <duet/auth/metadata.hpp>

#include <boost/json/value.hpp>

#include <algorithm>

namespace duet::auth {

namespace json = boost::json;

namespace {

client::error bad(std::string_view document, std::string_view field, std::string_view what) {
    // "DOCUMENT: FIELD WHAT", or "DOCUMENT FIELD" for the document itself.
    std::string message(document);
    message.append(what.empty() ? " " : ": ").append(field);
    if (!what.empty())
        message.append(" ").append(what);
    return client::make_error(client::errc::protocol_violation, std::move(message));
}

// A string member: nullopt when absent, an error when present with another type.
client::result<std::optional<std::string>> text(json::object const& o, std::string_view document,
                                                std::string_view field) {
    auto const* v = o.if_contains(field);
    if (!v)
        return std::optional<std::string>{};
    if (!v->is_string())
        return bad(document, field, "is not a string");
    return std::optional<std::string>(std::string(v->get_string()));
}

client::result<std::optional<std::vector<std::string>>>
strings(json::object const& o, std::string_view document, std::string_view field) {
    auto const* v = o.if_contains(field);
    if (!v)
        return std::optional<std::vector<std::string>>{};
    if (!v->is_array())
        return bad(document, field, "is not an array");
    std::vector<std::string> out;
    for (auto const& e : v->get_array()) {
        if (!e.is_string())
            return bad(document, field, "holds something other than strings");
        out.emplace_back(e.get_string());
    }
    return std::optional<std::vector<std::string>>(std::move(out));
}

client::result<bool> flag(json::object const& o, std::string_view document, std::string_view field) {
    auto const* v = o.if_contains(field);
    if (!v)
        return false;
    if (!v->is_bool())
        return bad(document, field, "is not a boolean");
    return v->get_bool();
}

} // namespace

bool server_metadata::lists(std::optional<std::vector<std::string>> const& field,
                            std::string_view value) noexcept {
    return field && std::find(field->begin(), field->end(), value) != field->end();
}

client::result<resource_metadata> read_resource_metadata(json::value const& doc) {
    constexpr std::string_view name = "protected resource metadata";
    auto const* o = doc.if_object();
    if (!o)
        return bad(name, "is not a JSON object", {});
    resource_metadata m;
    auto resource = text(*o, name, "resource");
    if (!resource)
        return resource.error();
    if (!*resource || (*resource)->empty())
        return bad(name, "resource", "is missing");
    m.resource = std::move(**resource);
    auto servers = strings(*o, name, "authorization_servers");
    if (!servers)
        return servers.error();
    if (*servers)
        m.authorization_servers = std::move(**servers);
    auto scopes = strings(*o, name, "scopes_supported");
    if (!scopes)
        return scopes.error();
    m.scopes_supported = std::move(*scopes);
    return m;
}

client::result<server_metadata> read_server_metadata(json::value const& doc) {
    constexpr std::string_view name = "authorization server metadata";
    auto const* o = doc.if_object();
    if (!o)
        return bad(name, "is not a JSON object", {});
    server_metadata m;
    struct text_field {
        std::string_view name;
        std::string* into;
        bool required;
    };
    for (auto const& f : {text_field{"issuer", &m.issuer, true},
                          text_field{"authorization_endpoint", &m.authorization_endpoint, false},
                          text_field{"token_endpoint", &m.token_endpoint, true},
                          text_field{"registration_endpoint", &m.registration_endpoint, false}}) {
        auto value = text(*o, name, f.name);
        if (!value)
            return value.error();
        if (f.required && (!*value || (*value)->empty()))
            return bad(name, f.name, "is missing");
        if (*value)
            *f.into = std::move(**value);
    }
    struct list_field {
        std::string_view name;
        std::optional<std::vector<std::string>>* into;
    };
    for (auto const& f :
         {list_field{"scopes_supported", &m.scopes_supported},
          list_field{"grant_types_supported", &m.grant_types_supported},
          list_field{"token_endpoint_auth_methods_supported", &m.token_endpoint_auth_methods_supported},
          list_field{"code_challenge_methods_supported", &m.code_challenge_methods_supported},
          list_field{"token_endpoint_auth_signing_alg_values_supported",
                     &m.token_endpoint_auth_signing_alg_values_supported}}) {
        auto value = strings(*o, name, f.name);
        if (!value)
            return value.error();
        *f.into = std::move(*value);
    }
    struct flag_field {
        std::string_view name;
        bool* into;
    };
    for (auto const& f :
         {flag_field{"client_id_metadata_document_supported", &m.client_id_metadata_document_supported},
          flag_field{"authorization_response_iss_parameter_supported",
                     &m.authorization_response_iss_parameter_supported}}) {
        auto value = flag(*o, name, f.name);
        if (!value)
            return value.error();
        *f.into = *value;
    }
    return m;
}

} // namespace duet::auth
