// What a bearer token must hold for a request beyond the server-wide scopes: the required_scopes of the
// tool, prompt, resource or template it names. Read by the HTTP transport before the request is admitted, so
// a call the token may not make is refused with 403 and a challenge, not with an error result.
#include <duet/server/server.hpp>
#include <duet/server/uri_template.hpp>

#include <algorithm>

namespace duet::server {

namespace {

std::optional<std::string_view> string_param(boost::json::value const& params, std::string_view key) {
    auto const* p = params.if_object();
    auto const* v = p ? p->if_contains(key) : nullptr;
    if (!v || !v->is_string())
        return std::nullopt;
    return std::string_view(v->get_string());
}

void add_unique(std::vector<std::string>& into, std::vector<std::string> const& from) {
    for (auto const& s : from)
        if (std::find(into.begin(), into.end(), s) == into.end())
            into.push_back(s);
}

} // namespace

std::vector<std::string> const* server::resource_scopes(std::string_view uri) const {
    if (auto it = resources_.find(std::string(uri)); it != resources_.end())
        return &it->second->required_scopes;
    for (auto const& entry : templates_)
        if (match_uri_template(entry.second->uri_template, uri))
            return &entry.second->required_scopes;
    return nullptr;
}

std::vector<std::string> server::scopes_needed(std::string_view method,
                                               boost::json::value const& params) const {
    std::vector<std::string> out;
    std::shared_lock lock(mutex_);
    auto add_resource = [&](std::optional<std::string_view> uri) {
        if (auto const* scopes = uri ? resource_scopes(*uri) : nullptr)
            add_unique(out, *scopes);
    };
    if (method == "tools/call") {
        auto const name = string_param(params, "name");
        if (auto it = name ? tools_.find(*name) : tools_.end(); it != tools_.end())
            return it->second->definition.required_scopes;
    } else if (method == "prompts/get") {
        auto const name = string_param(params, "name");
        if (auto it = name ? prompts_.find(std::string(*name)) : prompts_.end(); it != prompts_.end())
            return it->second->required_scopes;
    } else if (method == "resources/read" || method == "resources/subscribe") {
        add_resource(string_param(params, "uri"));
    } else if (method == "completion/complete") {
        // Completing a prompt's arguments or a template's variables tells of what they hold.
        auto const* p = params.if_object();
        auto const* ref = p ? p->if_contains("ref") : nullptr;
        if (ref && ref->is_object()) {
            auto const type = string_param(*ref, "type");
            if (type == "ref/prompt") {
                auto const name = string_param(*ref, "name");
                if (auto it = name ? prompts_.find(std::string(*name)) : prompts_.end(); it != prompts_.end())
                    return it->second->required_scopes;
            } else if (type == "ref/resource") {
                auto const uri = string_param(*ref, "uri");
                if (auto it = uri ? templates_.find(std::string(*uri)) : templates_.end();
                    it != templates_.end())
                    return it->second->required_scopes;
                add_resource(uri);
            }
        }
    } else if (method == "subscriptions/listen") {
        auto const* p = params.if_object();
        auto const* filter = p ? p->if_contains("notifications") : nullptr;
        auto const* uris = filter && filter->is_object()
                               ? filter->get_object().if_contains("resourceSubscriptions")
                               : nullptr;
        if (uris && uris->is_array())
            for (auto const& u : uris->get_array())
                if (u.is_string())
                    add_resource(std::string_view(u.get_string()));
    }
    return out;
}

std::vector<std::string> server::declared_scopes() const {
    std::vector<std::string> out;
    std::shared_lock lock(mutex_);
    for (auto const& t : tools_)
        add_unique(out, t.second->definition.required_scopes);
    for (auto const& p : prompts_)
        add_unique(out, p.second->required_scopes);
    for (auto const& r : resources_)
        add_unique(out, r.second->required_scopes);
    for (auto const& t : templates_)
        add_unique(out, t.second->required_scopes);
    return out;
}

} // namespace duet::server
