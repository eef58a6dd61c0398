#include "bearer_guard.hpp"

#include <duet/auth/challenge.hpp>
#include <duet/auth/scopes.hpp>
#include <duet/protocol/header_codec.hpp>

#include "head_fields.hpp"

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <chrono>
#include <utility>

namespace duet::transport::http {

namespace bhttp = boost::beast::http;
namespace json = boost::json;

namespace {

constexpr std::string_view well_known = "/.well-known/oauth-protected-resource";

// The origin and the path (without query or fragment; empty for "/") of a URL; an empty origin when it is
// none.
std::pair<std::string_view, std::string_view> origin_and_path(std::string_view url) {
    auto const scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos)
        return {};
    auto const path_start = url.find_first_of("/?#", scheme_end + 3);
    auto const origin = url.substr(0, path_start);
    auto path = path_start == std::string_view::npos ? std::string_view() : url.substr(path_start);
    path = path.substr(0, path.find_first_of("?#"));
    return {origin, path == "/" ? std::string_view() : path};
}

// A challenge parameter's quoted-string (RFC 9110 §5.6.4), holding only what RFC 6750 §3 allows in
// error_description and scope (%x20-21 / %x23-5B / %x5D-7E): other bytes become '?'.
std::string quoted(std::string_view text) {
    std::string out = "\"";
    for (unsigned char c : text)
        out += (c >= 0x20 && c <= 0x7E && c != '"' && c != '\\') ? static_cast<char>(c) : '?';
    out += '"';
    return out;
}

void add_unique(std::vector<std::string>& into, std::vector<std::string> const& from) {
    for (auto const& s : from)
        if (std::find(into.begin(), into.end(), s) == into.end())
            into.push_back(s);
}

// Whether the query holds an access_token parameter (RFC 6750 §2.3, which OAuth 2.1 §5.2 forbids).
bool token_in_query(std::string_view target) {
    auto const q = target.find('?');
    if (q == std::string_view::npos)
        return false;
    auto query = target.substr(q + 1);
    query = query.substr(0, query.find('#'));
    while (!query.empty()) {
        auto const amp = query.find('&');
        auto const param = query.substr(0, amp);
        auto const name = param.substr(0, param.find('='));
        if (name == "access_token")
            return true;
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    }
    return false;
}

// RFC 6750 §2.1: "Bearer" (any case), one or more spaces, a b64token.
enum class credential_form { none, malformed, bearer };
credential_form read_credential(std::optional<std::string_view> field, std::string_view& token) {
    if (!field)
        return credential_form::none;
    auto value = *field;
    auto const space = value.find(' ');
    if (!protocol::iequals(value.substr(0, space), "Bearer"))
        return credential_form::none; // another scheme: no bearer token was offered
    if (space == std::string_view::npos)
        return credential_form::malformed;
    value.remove_prefix(space);
    while (!value.empty() && value.front() == ' ')
        value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
        value.remove_suffix(1);
    if (!auth::is_token68(value))
        return credential_form::malformed;
    token = value;
    return credential_form::bearer;
}

} // namespace

bearer_guard::bearer_guard(protected_resource const& authorization,
                           std::vector<std::string> const& route_paths,
                           std::vector<std::string> const& scopes_supported)
    : authorization_(authorization),
      cache_control_("public, max-age=" + std::to_string(authorization.metadata_max_age.count())) {
    if (authorization.authorization_servers.empty() || authorization.resource.empty())
        return; // a static token: no authorization server to point to
    // RFC 9728 §3.1: the well-known string goes between the host and the path of the resource identifier.
    auto const [origin, resource_path] = origin_and_path(authorization.resource);
    if (!origin.empty())
        metadata_url_ = std::string(origin) + std::string(well_known) + std::string(resource_path);
    resource_path_ = resource_path;
    set_routes(route_paths, scopes_supported);
}

void bearer_guard::set_routes(std::vector<std::string> const& route_paths,
                              std::vector<std::string> const& scopes_supported) {
    auto const& authorization = authorization_;
    if (authorization.authorization_servers.empty() || authorization.resource.empty())
        return;
    auto next = std::make_shared<published_metadata>();
    next->paths.push_back(std::string(well_known));
    auto add_path = [&next](std::string const& p) {
        auto full = std::string(well_known) + p;
        if (!p.empty() && std::find(next->paths.begin(), next->paths.end(), full) == next->paths.end())
            next->paths.push_back(std::move(full));
    };
    add_path(resource_path_);
    for (auto const& p : route_paths)
        add_path(p);

    json::object doc;
    doc["resource"] = authorization.resource;
    json::array servers;
    for (auto const& s : authorization.authorization_servers)
        servers.emplace_back(s);
    doc["authorization_servers"] = std::move(servers);
    json::array scopes;
    for (auto const& s :
         authorization.scopes_supported.empty() ? scopes_supported : authorization.scopes_supported)
        scopes.emplace_back(s);
    if (!scopes.empty())
        doc["scopes_supported"] = std::move(scopes);
    doc["bearer_methods_supported"] = json::array{"header"};
    if (!authorization.resource_name.empty())
        doc["resource_name"] = authorization.resource_name;
    if (!authorization.resource_documentation.empty())
        doc["resource_documentation"] = authorization.resource_documentation;
    next->body = json::serialize(doc);
    std::shared_ptr<published_metadata const> previous = std::move(next);
    std::lock_guard lock(metadata_mutex_);
    std::swap(metadata_, previous);
}

std::optional<reply> bearer_guard::metadata(request const& req, std::string_view path) const {
    if (!path.starts_with(well_known))
        return std::nullopt;
    std::shared_ptr<published_metadata const> published;
    {
        std::lock_guard lock(metadata_mutex_);
        published = metadata_;
    }
    if (!published ||
        std::find(published->paths.begin(), published->paths.end(), path) == published->paths.end())
        return std::nullopt;
    reply r;
    // Public and read by browser-based clients on other origins (MCP authorization, RFC 9728 §3).
    r.headers.emplace_back("Access-Control-Allow-Origin", "*");
    switch (req.method()) {
    case bhttp::verb::get:
        r.body = published->body;
        r.headers.emplace_back("Cache-Control", cache_control_);
        return r;
    case bhttp::verb::options:
        r.status = bhttp::status::no_content;
        r.headers.emplace_back("Access-Control-Allow-Methods", "GET, OPTIONS");
        r.headers.emplace_back("Access-Control-Allow-Headers", "*");
        r.headers.emplace_back("Access-Control-Max-Age", "86400");
        return r;
    default:
        r = invalid_request_reply(bhttp::status::method_not_allowed,
                                  "Invalid Request: the protected resource metadata is read with GET");
        r.headers.emplace_back("Allow", "GET, OPTIONS");
        return r;
    }
}

std::variant<bearer_guard::token_ptr, reply, bearer_guard::pending>
bearer_guard::check_now(request const& req, remembered_token& last) const {
    if (token_in_query(req.target())) {
        auto r = challenge(bhttp::status::bad_request, "invalid_request",
                           "access tokens are accepted in the Authorization header only, never in the query",
                           authorization_.required_scopes);
        return r;
    }
    std::string_view token;
    switch (read_credential(header(req, bhttp::field::authorization), token)) {
    case credential_form::none:
        return challenge(bhttp::status::unauthorized, {}, {}, authorization_.required_scopes);
    case credential_form::malformed:
        return challenge(bhttp::status::unauthorized, "invalid_token",
                         "the Authorization header holds no well-formed bearer token",
                         authorization_.required_scopes);
    case credential_form::bearer:
        break;
    }
    auto const steady_now = std::chrono::steady_clock::now();
    if (last.verdict && steady_now < last.until && token == last.token)
        return last.verdict; // scopes held were checked when it was remembered
    auto now = authorization_.verifier->verify_now(token);
    if (!now)
        return pending{std::string(token)};
    auto settled = settle(*now, std::string(token), last);
    if (auto* refusal = std::get_if<reply>(&settled))
        return std::move(*refusal);
    return std::get<token_ptr>(std::move(settled));
}

std::variant<bearer_guard::token_ptr, reply>
bearer_guard::settle(auth::token_verdict const& verdict, std::string token, remembered_token& last) const {
    if (!verdict) {
        auto const& why = verdict.error();
        if (why.server_unavailable) {
            reply r = invalid_request_reply(bhttp::status::service_unavailable,
                                            "the token cannot be checked now: " + why.description);
            r.headers.emplace_back("Retry-After", "5");
            return r;
        }
        return challenge(bhttp::status::unauthorized, "invalid_token", why.description,
                         authorization_.required_scopes);
    }
    if (auto refusal = insufficient(**verdict, {}))
        return std::move(*refusal);
    // Remembered for a second at most, and never past the token's expiry.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    if (auto const& expires = (*verdict)->expires_at) {
        auto const left = *expires - std::chrono::system_clock::now();
        until = std::min(until, std::chrono::steady_clock::now() +
                                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(left));
    }
    last = {std::move(token), *verdict, until};
    return *verdict;
}

std::optional<reply> bearer_guard::insufficient(protocol::verified_token const& token,
                                                std::vector<std::string> const& needed) const {
    if (auth::covers(token.scopes, authorization_.required_scopes) && auth::covers(token.scopes, needed))
        return std::nullopt;
    auto all = authorization_.required_scopes;
    add_unique(all, needed);
    return challenge(bhttp::status::forbidden, "insufficient_scope",
                     "the token lacks a scope this request needs: " + auth::join_scopes(all), all);
}

reply bearer_guard::challenge(bhttp::status status, std::string_view error, std::string_view description,
                              std::vector<std::string> const& scopes) const {
    std::string field = "Bearer";
    auto add = [&field](std::string_view name, std::string const& value) {
        field += field.size() == 6 ? " " : ", ";
        field += name;
        field += '=';
        field += value;
    };
    if (!error.empty())
        add("error", quoted(error));
    if (!description.empty())
        add("error_description", quoted(description));
    if (!scopes.empty())
        add("scope", quoted(auth::join_scopes(scopes)));
    if (!metadata_url_.empty())
        add("resource_metadata", quoted(metadata_url_));
    if (field.size() == 6)
        field += " realm=\"duet\"";
    std::string message = "Invalid Request: ";
    if (status == bhttp::status::unauthorized)
        message += description.empty() ? "a bearer token is required" : std::string(description);
    else
        message += std::string(description);
    reply r = invalid_request_reply(status, std::move(message));
    r.headers.emplace_back("WWW-Authenticate", std::move(field));
    return r;
}

} // namespace duet::transport::http
