#include "identity.hpp"

#include <duet/jsonrpc/json_text.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

namespace duet::auth::detail {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

client::error registration_error(std::string const& why) {
    return client::make_error(client::errc::auth_required, "dynamic client registration " + why);
}

client::result<client_registration> read_registration(http_response const& answer, std::string const& issuer,
                                                      std::string const& requested_method) {
    boost::system::error_code ec;
    auto doc = json::parse(answer.body, ec);
    auto const* o = ec ? nullptr : doc.if_object();
    if (answer.status != 201 && answer.status != 200) {
        std::string why = "was refused (HTTP " + std::to_string(answer.status) + ")";
        if (o)
            if (auto const* d = o->if_contains("error_description"); d && d->is_string())
                why += ": " + std::string(d->get_string());
        return registration_error(why);
    }
    if (!o)
        return registration_error("was answered with no JSON object");
    client_registration r;
    r.issuer = issuer;
    auto const* id = o->if_contains("client_id");
    if (!id || !id->is_string() || id->get_string().empty())
        return registration_error("was answered without a client_id");
    r.client_id = std::string(id->get_string());
    if (auto const* secret = o->if_contains("client_secret"); secret && secret->is_string())
        r.client_secret = std::string(secret->get_string());
    r.token_endpoint_auth_method = requested_method;
    if (auto const* method = o->if_contains("token_endpoint_auth_method"); method && method->is_string())
        r.token_endpoint_auth_method = std::string(method->get_string());
    else if (r.client_secret.empty())
        r.token_endpoint_auth_method = "none";
    if (auto const* expires = o->if_contains("client_secret_expires_at"); expires && expires->is_number()) {
        auto const at = expires->to_number<double>();
        // 0 means never (RFC 7591 §3.2.1); so does a time past what the clock can hold (year 2262).
        if (at > 0 && at < 9.0e9)
            r.secret_expires_at =
                std::chrono::system_clock::time_point(std::chrono::seconds(static_cast<long long>(at)));
    }
    return r;
}

client_auth auth_of(client_registration const& r) {
    return client_auth{r.client_id, r.client_secret, r.token_endpoint_auth_method, {}};
}

} // namespace

std::string registration_auth_method(server_metadata const& as) {
    auto const& listed = as.token_endpoint_auth_methods_supported;
    if (server_metadata::lists(listed, "none"))
        return "none";
    if (!listed || server_metadata::lists(listed, "client_secret_basic"))
        return "client_secret_basic";
    if (server_metadata::lists(listed, "client_secret_post"))
        return "client_secret_post";
    return "none";
}

std::string registration_body(oauth_options const& options, server_metadata const& as,
                              std::string const& auth_method) {
    json::array grants{"authorization_code"};
    // A refresh token is asked for only where the server offers long-lived access (SEP-2207).
    if (server_metadata::lists(as.scopes_supported, "offline_access"))
        grants.emplace_back("refresh_token");
    json::object body{{"client_name", options.client_name},
                      {"redirect_uris", json::array{json::string(options.redirect_uri)}},
                      {"grant_types", std::move(grants)},
                      {"response_types", json::array{"code"}},
                      {"token_endpoint_auth_method", auth_method},
                      {"application_type", "native"}};
    return jsonrpc::to_json_text(body);
}

client::result<client_auth> refresh_identity(oauth_options const& options, credential_store& store,
                                             authorization_context const& ctx, token_set const& held) {
    for (auto const& r : options.preregistered)
        if ((r.issuer.empty() || r.issuer == ctx.issuer) &&
            (held.client_id.empty() || r.client_id == held.client_id))
            return client_auth{
                r.client_id, r.client_secret, choose_auth_method(ctx.server, !r.client_secret.empty()), {}};
    auto kept = store.load_registration(ctx.issuer);
    if (!kept)
        return kept.error();
    if (*kept && (held.client_id.empty() || (*kept)->client_id == held.client_id))
        return auth_of(**kept);
    if (held.client_id.empty())
        return client::make_error(client::errc::auth_required,
                                  "no client credentials for " + ctx.issuer + " to refresh the token with");
    return client_auth{held.client_id, {}, "none", {}};
}

asio::awaitable<client::result<client_auth>> async_identify(fetcher const& f, oauth_options const& options,
                                                            credential_store& store,
                                                            authorization_context const& ctx) {
    auto const& as = ctx.server;
    for (auto const& r : options.preregistered)
        if (r.issuer.empty() || r.issuer == ctx.issuer) {
            auto method = choose_auth_method(as, !r.client_secret.empty());
            co_return client_auth{r.client_id, r.client_secret, std::move(method), {}};
        }
    auto kept = store.load_registration(ctx.issuer);
    if (!kept)
        co_return kept.error();
    if (*kept &&
        (!(*kept)->secret_expires_at || *(*kept)->secret_expires_at > std::chrono::system_clock::now()))
        co_return auth_of(**kept);
    if (as.client_id_metadata_document_supported && !options.client_metadata_url.empty())
        co_return client_auth{options.client_metadata_url, {}, "none", {}};
    if (as.registration_endpoint.empty())
        co_return client::make_error(client::errc::auth_required,
                                     "the authorization server " + ctx.issuer +
                                         " takes no registrations and this client has no client id for it "
                                         "(pre-register one, or use a client metadata document URL)");
    auto const method = registration_auth_method(as);
    http_request r;
    r.method = "POST";
    r.url = as.registration_endpoint;
    r.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
    r.body = registration_body(options, as, method);
    auto answer = co_await f.async_send(std::move(r));
    if (!answer)
        co_return answer.error();
    auto registration = read_registration(*answer, ctx.issuer, method);
    if (!registration)
        co_return registration.error();
    if (auto saved = store.save_registration(*registration); !saved)
        co_return saved.error();
    co_return auth_of(*registration);
}

} // namespace duet::auth::detail
