#include "token_endpoint.hpp"

#include <duet/auth/scopes.hpp>
#include <duet/protocol/base64.hpp>
#include <duet/protocol/header_codec.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>

namespace duet::auth::detail {

namespace json = boost::json;

namespace {

client::error token_error(std::string const& what) {
    return client::make_error(client::errc::auth_required, "the token endpoint " + what);
}

} // namespace

std::string basic_credentials(std::string const& client_id, std::string const& client_secret) {
    auto encode = [](std::string const& text) {
        auto const one = std::pair<std::string, std::string>{text, ""};
        auto encoded = form_encode(std::span(&one, 1));
        encoded.pop_back(); // the '=' of an empty value
        return encoded;
    };
    return "Basic " + protocol::base64_encode(encode(client_id) + ":" + encode(client_secret));
}

http_request token_request(std::string const& token_endpoint, form grant, client_auth const& auth) {
    http_request r;
    r.method = "POST";
    r.url = token_endpoint;
    r.headers = {{"Content-Type", "application/x-www-form-urlencoded"}, {"Accept", "application/json"}};
    if (auth.method == "client_secret_basic") {
        r.headers.emplace_back("Authorization", basic_credentials(auth.client_id, auth.client_secret));
    } else if (auth.method == "private_key_jwt") {
        grant.emplace_back("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
        grant.emplace_back("client_assertion", auth.assertion);
    } else {
        grant.emplace_back("client_id", auth.client_id);
        if (auth.method == "client_secret_post")
            grant.emplace_back("client_secret", auth.client_secret);
    }
    r.body = form_encode(grant);
    return r;
}

std::string choose_auth_method(server_metadata const& as, bool has_secret) {
    auto const& listed = as.token_endpoint_auth_methods_supported;
    if (!has_secret)
        return "none";
    if (!listed || server_metadata::lists(listed, "client_secret_basic"))
        return "client_secret_basic";
    if (server_metadata::lists(listed, "client_secret_post"))
        return "client_secret_post";
    return "client_secret_basic";
}

client::result<token_set> read_token_response(http_response const& answer, std::string const& issuer,
                                              std::string const& resource,
                                              std::vector<std::string> const& requested,
                                              std::chrono::system_clock::time_point now) {
    boost::system::error_code ec;
    auto doc = json::parse(answer.body, ec);
    auto const* o = ec ? nullptr : doc.if_object();
    if (answer.status != 200) {
        std::string why = "refused the request (HTTP " + std::to_string(answer.status) + ")";
        if (o) {
            if (auto const* e = o->if_contains("error"); e && e->is_string())
                why += ": " + std::string(e->get_string());
            if (auto const* d = o->if_contains("error_description"); d && d->is_string())
                why += " (" + std::string(d->get_string()) + ")";
        }
        return token_error(why);
    }
    if (!o)
        return token_error("answered with no JSON object");
    token_set t;
    t.obtained_at = now;
    t.issuer = issuer;
    t.resource = resource;
    auto const* access = o->if_contains("access_token");
    if (!access || !access->is_string() || access->get_string().empty())
        return token_error("answered without an access_token");
    t.access_token = std::string(access->get_string());
    auto const* type = o->if_contains("token_type");
    if (!type || !type->is_string())
        return token_error("answered without a token_type");
    if (!protocol::iequals(type->get_string(), "Bearer"))
        return token_error("issued a " + std::string(type->get_string()) +
                           " token, and this client speaks only Bearer");
    if (auto const* refresh = o->if_contains("refresh_token"); refresh && refresh->is_string())
        t.refresh_token = std::string(refresh->get_string());
    if (auto const* expires = o->if_contains("expires_in"); expires && expires->is_number()) {
        // A century is as good as forever here; a longer lifetime would overflow the clock's nanoseconds.
        constexpr double longest = 100.0 * 365 * 24 * 60 * 60;
        auto const seconds = std::min(expires->to_number<double>(), longest);
        if (seconds > 0)
            t.expires_at = now + std::chrono::seconds(static_cast<long long>(seconds));
    }
    if (auto const* scope = o->if_contains("scope"); scope && scope->is_string())
        t.scopes = split_scopes(scope->get_string());
    else
        t.scopes = requested;
    return t;
}

} // namespace duet::auth::detail
