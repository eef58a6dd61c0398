#include "discover.hpp"

#include <duet/auth/discovery.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

namespace duet::auth::detail {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

client::error discovery_error(std::string const& why) {
    return client::make_error(client::errc::auth_required, why);
}

// The 2025-03-26 revision's defaults for an authorization server that publishes no metadata.
server_metadata fallback_endpoints(std::string const& origin) {
    server_metadata m;
    m.issuer = origin;
    m.authorization_endpoint = origin + "/authorize";
    m.token_endpoint = origin + "/token";
    m.registration_endpoint = origin + "/register";
    m.code_challenge_methods_supported = std::vector<std::string>{"S256"};
    return m;
}

} // namespace

asio::awaitable<client::result<http_response>> fetcher::async_send(http_request request) const {
    co_return co_await async_fetch(ex, std::move(request), tls, limits);
}

asio::awaitable<client::result<std::optional<json::value>>> fetcher::async_json(std::string const& url,
                                                                                std::string& why) const {
    http_request r;
    r.url = url;
    r.headers = {{"Accept", "application/json"}};
    auto answer = co_await async_send(std::move(r));
    if (!answer)
        co_return answer.error();
    if (answer->status != 200) {
        why = url + " answered HTTP " + std::to_string(answer->status);
        co_return std::optional<json::value>{};
    }
    boost::system::error_code ec;
    auto doc = json::parse(answer->body, ec);
    if (ec) {
        why = url + " is not JSON";
        co_return std::optional<json::value>{};
    }
    co_return std::optional<json::value>(std::move(doc));
}

asio::awaitable<client::result<authorization_context>>
async_discover(fetcher const& f, client::http_url const& server, challenge const* bearer) {
    authorization_context ctx;
    std::optional<std::string_view> pointed;
    if (bearer)
        pointed = bearer->param("resource_metadata");
    std::string tried;
    for (auto const& url : resource_metadata_urls(server, pointed)) {
        std::string why;
        auto doc = co_await f.async_json(url, why);
        if (!doc)
            co_return doc.error();
        if (!*doc) {
            tried += (tried.empty() ? "" : "; ") + why;
            continue;
        }
        auto read = read_resource_metadata(**doc);
        if (!read)
            co_return discovery_error(url + ": " + read.error().message);
        ctx.resource_doc = std::move(*read);
        break;
    }

    std::vector<std::string> metadata_urls;
    if (ctx.resource_doc) {
        auto const& prm = *ctx.resource_doc;
        // Before anything is sent to an authorization server: a document for another resource could send
        // this server's users, and their tokens, anywhere (RFC 9728 §7.3).
        if (!resource_covers(prm.resource, server))
            co_return discovery_error("the protected resource metadata is for " + prm.resource +
                                      ", not for " + canonical_resource(server) + ": not authorizing");
        if (prm.authorization_servers.empty())
            co_return discovery_error("the protected resource metadata names no authorization server");
        ctx.resource = prm.resource;
        ctx.issuer = prm.authorization_servers.front();
    } else {
        ctx.resource = canonical_resource(server);
        ctx.issuer = origin_of(server);
    }
    auto urls = authorization_server_metadata_urls(ctx.issuer);
    if (!urls)
        co_return discovery_error(urls.error().message);
    std::string missing;
    for (auto const& url : *urls) {
        std::string why;
        auto doc = co_await f.async_json(url, why);
        if (!doc)
            co_return doc.error();
        if (!*doc) {
            missing += (missing.empty() ? "" : "; ") + why;
            continue;
        }
        auto read = read_server_metadata(**doc);
        if (!read)
            co_return discovery_error(url + ": " + read.error().message);
        // RFC 8414 §3.3: a document naming another issuer is not this server's, whoever serves it.
        if (read->issuer != ctx.issuer)
            co_return discovery_error("the authorization server metadata at " + url + " is for the issuer " +
                                      read->issuer + ", not " + ctx.issuer + ": not authorizing");
        if (!server_metadata::lists(read->code_challenge_methods_supported, "S256"))
            co_return discovery_error("the authorization server " + ctx.issuer +
                                      " does not offer PKCE with S256, which MCP requires: not authorizing");
        ctx.server = std::move(*read);
        co_return ctx;
    }
    if (ctx.resource_doc)
        co_return discovery_error("no authorization server metadata for " + ctx.issuer + " (" + missing +
                                  ")");
    ctx.server = fallback_endpoints(ctx.issuer);
    co_return ctx;
}

} // namespace duet::auth::detail
