#include "grants.hpp"

#include <duet/auth/pkce.hpp>
#include <duet/auth/scopes.hpp>

#include "client_assertion.hpp"

namespace duet::auth::detail {

namespace asio = boost::asio;

namespace {

client::error refused(std::string const& why) {
    return client::make_error(client::errc::auth_required, why);
}

// Sends a grant to the token endpoint; the tokens it answers with, granted to `identity`.
asio::awaitable<client::result<token_set>> async_grant(fetcher const& f, authorization_context const& ctx,
                                                       form grant, client_auth const& identity,
                                                       std::vector<std::string> const& requested) {
    auto request = token_request(ctx.server.token_endpoint, std::move(grant), identity);
    auto answer = co_await f.async_send(std::move(request));
    if (!answer)
        co_return answer.error();
    auto tokens =
        read_token_response(*answer, ctx.issuer, ctx.resource, requested, std::chrono::system_clock::now());
    if (tokens)
        tokens->client_id = identity.client_id;
    co_return tokens;
}

} // namespace

std::string authorization_url(authorization_context const& ctx, client_auth const& identity,
                              std::string const& redirect_uri, std::string const& state,
                              std::string const& code_challenge,
                              std::optional<std::vector<std::string>> const& scopes) {
    form query{{"response_type", "code"},          {"client_id", identity.client_id},
               {"redirect_uri", redirect_uri},     {"state", state},
               {"code_challenge", code_challenge}, {"code_challenge_method", "S256"},
               {"resource", ctx.resource}};
    if (scopes && !scopes->empty())
        query.emplace_back("scope", join_scopes(*scopes));
    // OpenID Connect Core §11 grants offline_access only with prompt=consent, and its providers drop the
    // scope silently without it: no refresh token. An OAuth server ignores a parameter it does not know (RFC
    // 6749 §3.1).
    if (scopes && covers(*scopes, std::vector<std::string>{"offline_access"}))
        query.emplace_back("prompt", "consent");
    auto const& endpoint = ctx.server.authorization_endpoint;
    return endpoint + (endpoint.find('?') == std::string::npos ? "?" : "&") + form_encode(query);
}

client::result<std::string> read_redirect(std::string const& redirect, std::string const& state,
                                          server_metadata const& as) {
    if (auto error = query_value(redirect, "error")) {
        auto description = query_value(redirect, "error_description");
        return refused("the authorization server refused: " + *error +
                       (description ? " (" + *description + ")" : std::string()));
    }
    bool several = false;
    auto const returned_state = query_value(redirect, "state", &several);
    if (!returned_state || several || *returned_state != state)
        return refused("the authorization redirect does not carry this request's state: not using its code");
    auto const code = query_value(redirect, "code", &several);
    if (!code || code->empty() || several)
        return refused("the authorization redirect carries no code");
    // RFC 9207: an `iss` must name the server the request went to, byte for byte; one that advertises it
    // must send it. A mismatch is a mix-up attack, and the code goes nowhere.
    auto const iss = query_value(redirect, "iss", &several);
    if (iss && (several || *iss != as.issuer))
        return refused("the authorization redirect comes from the issuer " + *iss + ", not " + as.issuer +
                       ": not using its code");
    if (!iss && as.authorization_response_iss_parameter_supported)
        return refused("the authorization server " + as.issuer +
                       " promises an iss parameter and the redirect has none: not using its code");
    return *code;
}

asio::awaitable<client::result<token_set>>
async_authorization_code(fetcher const& f, oauth_options const& options, authorization_context const& ctx,
                         client_auth const& identity, std::optional<std::vector<std::string>> const& scopes) {
    if (!options.user)
        co_return refused("the server " + ctx.resource +
                          " needs an authorization, and there is no user to give it");
    if (ctx.server.authorization_endpoint.empty())
        co_return refused("the authorization server " + ctx.issuer + " has no authorization endpoint");
    auto proof = make_pkce();
    if (!proof)
        co_return proof.error();
    auto state = random_url_token();
    if (!state)
        co_return state.error();
    auto const url = authorization_url(ctx, identity, options.redirect_uri, *state, proof->challenge, scopes);
    auto redirect = co_await options.user(url);
    if (!redirect)
        co_return redirect.error();
    auto code = read_redirect(*redirect, *state, ctx.server);
    if (!code)
        co_return code.error();
    form grant{{"grant_type", "authorization_code"},
               {"code", *code},
               {"redirect_uri", options.redirect_uri},
               {"code_verifier", proof->verifier},
               {"resource", ctx.resource}};
    auto const requested = scopes.value_or(std::vector<std::string>{});
    co_return co_await async_grant(f, ctx, std::move(grant), identity, requested);
}

asio::awaitable<client::result<token_set>> async_refresh(fetcher const& f, authorization_context const& ctx,
                                                         client_auth const& identity, token_set const& held) {
    form grant{
        {"grant_type", "refresh_token"}, {"refresh_token", held.refresh_token}, {"resource", ctx.resource}};
    auto tokens = co_await async_grant(f, ctx, std::move(grant), identity, held.scopes);
    // A server that does not rotate refresh tokens sends none back (RFC 6749 §6): the old one still holds.
    if (tokens && tokens->refresh_token.empty())
        tokens->refresh_token = held.refresh_token;
    co_return tokens;
}

asio::awaitable<client::result<token_set>>
async_client_credentials(fetcher const& f, authorization_context const& ctx,
                         machine_credentials const& machine,
                         std::optional<std::vector<std::string>> const& scopes) {
    client_auth identity;
    identity.client_id = machine.client_id;
    if (!machine.private_key_pem.empty()) {
        // RFC 7523 §3: the audience is the authorization server, named by its issuer identifier.
        auto assertion =
            sign_client_assertion(machine.private_key_pem, machine.signing_algorithm, machine.client_id,
                                  ctx.server.issuer, std::chrono::system_clock::now());
        if (!assertion)
            co_return assertion.error();
        identity.method = "private_key_jwt";
        identity.assertion = std::move(*assertion);
    } else {
        identity.client_secret = machine.client_secret;
        identity.method = choose_auth_method(ctx.server, true);
    }
    form grant{{"grant_type", "client_credentials"}, {"resource", ctx.resource}};
    if (scopes && !scopes->empty())
        grant.emplace_back("scope", join_scopes(*scopes));
    auto const requested = scopes.value_or(std::vector<std::string>{});
    co_return co_await async_grant(f, ctx, std::move(grant), identity, requested);
}

} // namespace duet::auth::detail
