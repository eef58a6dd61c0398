#include <duet/auth/discovery.hpp>

#include <algorithm>
#include <cctype>

namespace duet::auth {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

// The path of a request target: up to its query, without trailing slashes ("/" stays "").
std::string_view path_of(std::string_view target) {
    target = target.substr(0, target.find('?'));
    while (!target.empty() && target.back() == '/')
        target.remove_suffix(1);
    return target;
}

} // namespace

std::string origin_of(client::http_url const& url) {
    std::string out = url.tls ? "https://" : "http://";
    bool const ipv6 = url.host.find(':') != std::string::npos;
    if (ipv6)
        out += '[';
    out += lower(url.host);
    if (ipv6)
        out += ']';
    if (url.port != (url.tls ? 443 : 80))
        out += ":" + std::to_string(url.port);
    return out;
}

std::string canonical_resource(client::http_url const& server) {
    auto const query = server.target.find('?');
    std::string out = origin_of(server) + std::string(path_of(server.target));
    if (query != std::string::npos)
        out += server.target.substr(query);
    return out;
}

std::vector<std::string> resource_metadata_urls(client::http_url const& server,
                                                std::optional<std::string_view> from_challenge) {
    std::vector<std::string> urls;
    if (from_challenge && !from_challenge->empty())
        urls.emplace_back(*from_challenge);
    auto const origin = origin_of(server);
    auto const path = path_of(server.target);
    if (!path.empty())
        urls.push_back(origin + "/.well-known/oauth-protected-resource" + std::string(path));
    urls.push_back(origin + "/.well-known/oauth-protected-resource");
    return urls;
}

client::result<std::vector<std::string>> authorization_server_metadata_urls(std::string_view issuer) {
    auto url = client::parse_http_url(issuer);
    if (!url)
        return client::make_error(client::errc::usage, "the authorization server " + std::string(issuer) +
                                                           " is not a URL: " + url.error().message);
    if (url->target.find('?') != std::string::npos || issuer.find('#') != std::string_view::npos)
        return client::make_error(client::errc::usage,
                                  "the authorization server " + std::string(issuer) +
                                      " has a query or fragment, which an issuer may not");
    auto const origin = origin_of(*url);
    auto const path = std::string(path_of(url->target));
    if (path.empty())
        return std::vector<std::string>{origin + "/.well-known/oauth-authorization-server",
                                        origin + "/.well-known/openid-configuration"};
    return std::vector<std::string>{origin + "/.well-known/oauth-authorization-server" + path,
                                    origin + "/.well-known/openid-configuration" + path,
                                    origin + path + "/.well-known/openid-configuration"};
}

bool resource_covers(std::string_view resource, client::http_url const& server) {
    auto named = client::parse_http_url(resource);
    if (!named || resource.find('#') != std::string_view::npos)
        return false;
    if (origin_of(*named) != origin_of(server))
        return false;
    auto const parent = path_of(named->target);
    auto const path = path_of(server.target);
    if (!path.starts_with(parent))
        return false;
    return path.size() == parent.size() || path[parent.size()] == '/';
}

} // namespace duet::auth
