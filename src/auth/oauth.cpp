// The provider: when to discover, identify, authorize, refresh and step up, one authorization at a time.
// The steps themselves live beside it (discover, identity, grants, token_endpoint).
#include <duet/auth/challenge.hpp>
#include <duet/auth/discovery.hpp>
#include <duet/auth/oauth.hpp>
#include <duet/auth/scopes.hpp>

#include "discover.hpp"
#include "grants.hpp"
#include "identity.hpp"
#include "one_at_a_time.hpp"

namespace duet::auth {

namespace asio = boost::asio;
using asio::awaitable;

struct oauth_authorization::state {
    asio::any_io_executor ex;
    client::http_url url;
    std::string resource_key;
    oauth_options options;
    detail::fetcher fetch;
    std::optional<token_set> tokens;
    bool loaded = false;
    /// Where the last authorization happened: a step-up or a refresh goes to the same server.
    std::optional<detail::authorization_context> context;
    /// One authorization at a time; the others wait for it and then use what it got.
    detail::one_at_a_time slot;

    [[nodiscard]] std::string header() const {
        return tokens ? "Bearer " + tokens->access_token : std::string();
    }

    client::result<void> load() {
        if (loaded)
            return {};
        auto held = options.store->load_tokens(resource_key);
        if (!held)
            return held.error();
        tokens = std::move(*held);
        loaded = true;
        return {};
    }

    client::result<void> keep(token_set t) {
        t.resource = resource_key;
        tokens = std::move(t);
        return options.store->save_tokens(*tokens);
    }

    client::result<void> drop() {
        tokens.reset();
        return options.store->erase_tokens(resource_key);
    }

    // The scopes of a first authorization: the caller's, else the spec's selection, plus offline_access
    // where the authorization server offers it (SEP-2207), so a refresh token can outlive this session.
    std::optional<std::vector<std::string>> first_scopes(challenge const* bearer,
                                                         detail::authorization_context const& ctx) const {
        if (options.scopes)
            return options.scopes;
        std::optional<std::string_view> challenged;
        if (bearer)
            challenged = bearer->param("scope");
        std::optional<std::vector<std::string>> none;
        auto scopes = select_scopes(challenged, ctx.resource_doc ? ctx.resource_doc->scopes_supported : none);
        if (server_metadata::lists(ctx.server.scopes_supported, "offline_access") && !options.machine) {
            if (!scopes)
                scopes.emplace();
            if (!covers(*scopes, std::vector<std::string>{"offline_access"}))
                scopes->emplace_back("offline_access");
        }
        return scopes;
    }

    // New tokens from the server `ctx` names, by whichever grant this client uses.
    awaitable<client::result<token_set>> async_obtain(detail::authorization_context const& ctx,
                                                      std::optional<std::vector<std::string>> scopes) {
        if (options.machine)
            co_return co_await detail::async_client_credentials(fetch, ctx, *options.machine, scopes);
        auto identity = co_await detail::async_identify(fetch, options, *options.store, ctx);
        if (!identity)
            co_return identity.error();
        co_return co_await detail::async_authorization_code(fetch, options, ctx, *identity, scopes);
    }

    // Discovery afresh (the server may have moved to another authorization server since: SEP-2352), the
    // tokens held dropped, new ones obtained and kept.
    awaitable<client::result<void>> async_authorize_anew(challenge const* bearer) {
        auto found = co_await detail::async_discover(fetch, url, bearer);
        if (!found)
            co_return found.error();
        context = std::move(*found);
        if (tokens)
            if (auto dropped = drop(); !dropped)
                co_return dropped.error();
        auto const where = *context;
        auto scopes = first_scopes(bearer, where);
        auto granted = co_await async_obtain(where, scopes);
        if (!granted)
            co_return granted.error();
        co_return keep(std::move(*granted));
    }

    // A refreshed token, or nullopt when there is no refresh token or the server refused it.
    awaitable<std::optional<token_set>> async_try_refresh() {
        if (!tokens || tokens->refresh_token.empty())
            co_return std::nullopt;
        if (!context) {
            auto found = co_await detail::async_discover(fetch, url, nullptr);
            if (!found)
                co_return std::nullopt;
            context = std::move(*found);
        }
        if (context->issuer != tokens->issuer)
            co_return std::nullopt;
        auto identity = detail::refresh_identity(options, *options.store, *context, *tokens);
        if (!identity)
            co_return std::nullopt;
        auto refreshed = co_await detail::async_refresh(fetch, *context, *identity, *tokens);
        if (!refreshed)
            co_return std::nullopt;
        co_return std::move(*refreshed);
    }
};

client::result<std::shared_ptr<oauth_authorization>>
oauth_authorization::make(asio::any_io_executor ex, std::string const& server_url, oauth_options options) {
    auto url = client::parse_http_url(server_url);
    if (!url)
        return url.error();
    if (options.machine && options.machine->client_secret.empty() && options.machine->private_key_pem.empty())
        return client::make_error(client::errc::usage,
                                  "the client credentials grant needs a client secret or a private key");
    return std::make_shared<oauth_authorization>(ex, std::move(*url), std::move(options));
}

oauth_authorization::oauth_authorization(asio::any_io_executor ex, client::http_url url,
                                         oauth_options options)
    : state_(std::make_unique<state>()) {
    state_->ex = ex;
    state_->resource_key = canonical_resource(url);
    state_->url = std::move(url);
    if (!options.store)
        options.store = std::make_shared<memory_store>();
    state_->fetch = detail::fetcher{ex, options.tls, {options.request_timeout, 1024 * 1024}};
    state_->options = std::move(options);
}

oauth_authorization::~oauth_authorization() = default;

std::string const& oauth_authorization::resource_key() const noexcept {
    return state_->resource_key;
}

awaitable<client::result<std::string>> oauth_authorization::async_header() {
    auto self = shared_from_this();
    auto& s = *state_;
    if (auto loaded = s.load(); !loaded)
        co_return loaded.error();
    auto const due = [&s] {
        return s.tokens && !s.tokens->refresh_token.empty() &&
               s.tokens->due_for_refresh(s.options.refresh_margin);
    };
    if (due()) {
        co_await s.slot.async_enter(s.ex);
        detail::one_at_a_time::held held(s.slot);
        // Another request may have refreshed it while this one waited.
        if (due()) {
            auto refreshed = co_await s.async_try_refresh();
            if (refreshed)
                if (auto kept = s.keep(std::move(*refreshed)); !kept)
                    co_return kept.error();
        }
    }
    co_return s.header();
}

awaitable<client::result<bool>>
oauth_authorization::async_refused(unsigned status, std::vector<std::string> const& www_authenticate,
                                   std::string const& sent) {
    auto self = shared_from_this();
    auto& s = *state_;
    auto const parsed = parse_challenges(www_authenticate);
    auto const* bearer = find_bearer(parsed.challenges);
    co_await s.slot.async_enter(s.ex);
    detail::one_at_a_time::held held(s.slot);
    if (auto loaded = s.load(); !loaded)
        co_return loaded.error();
    // Renewed by another request while this one was refused: try again with that.
    if (s.tokens && s.header() != sent)
        co_return true;

    if (status == 403) {
        // Only a missing scope is worth another authorization (RFC 6750 §3.1); one the token already holds
        // will not be granted by asking again.
        if (!bearer || bearer->param("error") != std::optional<std::string_view>("insufficient_scope"))
            co_return false;
        auto const challenged = bearer->param("scope").value_or("");
        std::vector<std::string> held_scopes = s.tokens ? s.tokens->scopes : std::vector<std::string>{};
        auto const wanted = split_scopes(challenged);
        if (wanted.empty() || covers(held_scopes, wanted))
            co_return false;
        if (!s.context) {
            auto found = co_await detail::async_discover(s.fetch, s.url, bearer);
            if (!found)
                co_return found.error();
            s.context = std::move(*found);
        }
        auto const context = *s.context;
        auto scopes = std::optional<std::vector<std::string>>(step_up_scopes(held_scopes, challenged));
        auto granted = co_await s.async_obtain(context, scopes);
        if (!granted)
            co_return granted.error();
        if (auto kept = s.keep(std::move(*granted)); !kept)
            co_return kept.error();
        co_return true;
    }

    if (s.tokens && !s.tokens->refresh_token.empty()) {
        auto refreshed = co_await s.async_try_refresh();
        if (refreshed) {
            if (auto kept = s.keep(std::move(*refreshed)); !kept)
                co_return kept.error();
            co_return true;
        }
    }
    auto authorized = co_await s.async_authorize_anew(bearer);
    if (!authorized)
        co_return authorized.error();
    co_return true;
}

awaitable<client::result<token_set>> oauth_authorization::async_login() {
    auto self = shared_from_this();
    auto& s = *state_;
    co_await s.slot.async_enter(s.ex);
    detail::one_at_a_time::held held(s.slot);
    if (auto loaded = s.load(); !loaded)
        co_return loaded.error();
    challenge const* no_challenge = nullptr;
    auto authorized = co_await s.async_authorize_anew(no_challenge);
    if (!authorized)
        co_return authorized.error();
    co_return *s.tokens;
}

client::result<std::optional<token_set>> oauth_authorization::tokens() const {
    return state_->options.store->load_tokens(state_->resource_key);
}

client::result<void> oauth_authorization::forget() {
    return state_->drop();
}

} // namespace duet::auth
