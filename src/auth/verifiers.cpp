// The built-in token verifiers: each answers from its verified-token cache when it can, a JWT from the keys
// held when they are fresh, and hands the rest (a key fetch, an introspection request) to a strand of its
// own, where the single-strand key source and introspection client live.
#include <duet/auth/challenge.hpp>
#include <duet/auth/verifiers.hpp>

#include "verified_cache.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <openssl/crypto.h>

#include <mutex>
#include <utility>

namespace duet::auth {

namespace asio = boost::asio;
using asio::awaitable;
using system_clock = std::chrono::system_clock;

namespace {

client::result<void> check_rules(token_rules const& rules) {
    if (rules.issuer.empty())
        return client::make_error(client::errc::usage, "a token verifier needs the issuer tokens come from");
    if (rules.audience.empty())
        return client::make_error(client::errc::usage,
                                  "a token verifier needs the audience tokens are for (this resource)");
    return {};
}

token_verdict shared(boost::system::result<verified_token, token_rejection> r) {
    if (!r)
        return r.error();
    return std::make_shared<verified_token const>(std::move(*r));
}

// What both fetching verifiers share: the verdict without waiting when verify_now has it, else from
// Derived::async_verify_on_strand on the strand where their single-strand fetcher lives.
template<class Derived>
class on_strand : public token_verifier, public std::enable_shared_from_this<Derived> {
public:
    awaitable<token_verdict> async_verify(std::string token) override {
        if (auto now = verify_now(token))
            co_return std::move(*now);
        auto self = this->shared_from_this();
        co_return co_await asio::co_spawn(strand_, self->async_verify_on_strand(std::move(token)),
                                          asio::use_awaitable);
    }

protected:
    using strand_type = asio::strand<asio::any_io_executor>;
    /// The strand the fetcher was made on.
    explicit on_strand(strand_type strand) : strand_(std::move(strand)) {}
    strand_type strand_;
};

class jwt_verifier final : public on_strand<jwt_verifier> {
public:
    jwt_verifier(strand_type strand, std::shared_ptr<jwks_key_source> source, token_rules rules,
                 verified_cache_options cache)
        : on_strand(std::move(strand)), source_(std::move(source)), rules_(std::move(rules)), cache_(cache) {}

    std::optional<token_verdict> verify_now(std::string_view token) override {
        auto const now = system_clock::now();
        if (token.size() > rules_.max_bytes)
            return shared(verify_access_token(token, jwk_set(), rules_, now)); // refused for its size
        auto const digest = detail::token_digest(token);
        if (auto hit = cache_.find(digest, now))
            return hit;
        auto keys = fresh_keys();
        if (!keys)
            return std::nullopt;
        auto checked = verify_access_token(token, *keys, rules_, now);
        if (!checked && checked.error().unknown_key)
            return std::nullopt; // a rotation, perhaps: the key source refetches (rate-limited)
        return remembered(digest, std::move(checked), now);
    }

private:
    friend class on_strand<jwt_verifier>;
    awaitable<token_verdict> async_verify_on_strand(std::string token) {
        auto checked = co_await source_->async_verify(token, rules_);
        if (auto held = source_->held()) {
            std::lock_guard lock(keys_mutex_);
            keys_ = std::move(*held);
        }
        co_return remembered(detail::token_digest(token), std::move(checked), system_clock::now());
    }

    std::optional<jwk_set> fresh_keys() {
        std::lock_guard lock(keys_mutex_);
        if (!keys_ || std::chrono::steady_clock::now() >= keys_->fresh_until)
            return std::nullopt;
        return keys_->keys;
    }

    token_verdict remembered(std::string digest, boost::system::result<verified_token, token_rejection> r,
                             system_clock::time_point now) {
        auto verdict = shared(std::move(r));
        if (verdict)
            cache_.insert(std::move(digest), *verdict, now);
        return verdict;
    }

    std::shared_ptr<jwks_key_source> source_; ///< on strand_ only
    token_rules const rules_;
    detail::verified_cache cache_;
    std::mutex keys_mutex_;
    std::optional<jwks_key_source::held_keys> keys_; ///< a copy of the source's, for every thread
};

class introspecting_verifier final : public on_strand<introspecting_verifier> {
public:
    introspecting_verifier(strand_type strand, std::shared_ptr<introspection_verifier> endpoint,
                           token_rules rules, verified_cache_options cache, std::size_t max_token_bytes)
        : on_strand(std::move(strand)), endpoint_(std::move(endpoint)), rules_(std::move(rules)),
          cache_(cache), max_token_bytes_(max_token_bytes) {}

    std::optional<token_verdict> verify_now(std::string_view token) override {
        if (token.size() > max_token_bytes_)
            return std::nullopt; // the endpoint's client refuses it with its own words, asking no one
        if (auto hit = cache_.find(detail::token_digest(token), system_clock::now()))
            return hit;
        return std::nullopt;
    }

private:
    friend class on_strand<introspecting_verifier>;
    awaitable<token_verdict> async_verify_on_strand(std::string token) {
        auto answer = co_await endpoint_->async_verify(token, rules_);
        auto verdict = shared(std::move(answer));
        if (verdict)
            cache_.insert(detail::token_digest(token), *verdict, system_clock::now());
        co_return verdict;
    }

    std::shared_ptr<introspection_verifier> endpoint_; ///< on strand_ only
    token_rules const rules_;
    detail::verified_cache cache_;
    std::size_t const max_token_bytes_;
};

class static_verifier final : public token_verifier {
public:
    static_verifier(std::string token, std::vector<std::string> scopes)
        : token_(std::move(token)), caller_(std::make_shared<verified_token const>(verified_token{
                                        .subject = "static-token", .scopes = std::move(scopes)})) {}

    std::optional<token_verdict> verify_now(std::string_view token) override {
        // Constant time in the contents: how long a comparison takes says nothing of how much of a guess was
        // right.
        if (token.size() == token_.size() && CRYPTO_memcmp(token.data(), token_.data(), token.size()) == 0)
            return caller_;
        return token_rejection{"the token is not the one this server accepts"};
    }

    awaitable<token_verdict> async_verify(std::string token) override { co_return *verify_now(token); }

private:
    std::string const token_;
    std::shared_ptr<verified_token const> const caller_;
};

} // namespace

client::result<std::shared_ptr<token_verifier>> make_jwt_verifier(asio::any_io_executor ex,
                                                                  std::string const& jwks_url,
                                                                  token_rules rules, jwks_options options,
                                                                  verified_cache_options cache) {
    if (auto ok = check_rules(rules); !ok)
        return ok.error();
    auto strand = asio::make_strand(ex);
    auto source = jwks_key_source::make(strand, jwks_url, std::move(options));
    if (!source)
        return source.error();
    return std::make_shared<jwt_verifier>(strand, std::move(*source), std::move(rules), cache);
}

client::result<std::shared_ptr<token_verifier>>
make_introspection_token_verifier(asio::any_io_executor ex, std::string const& introspection_url,
                                  token_rules rules, introspection_options options) {
    if (auto ok = check_rules(rules); !ok)
        return ok.error();
    auto strand = asio::make_strand(ex);
    verified_cache_options const cache{.cache_entries = options.max_entries,
                                       .cache_lifetime = options.max_cache};
    auto const max_token_bytes = options.max_token_bytes;
    auto endpoint = introspection_verifier::make(strand, introspection_url, std::move(options));
    if (!endpoint)
        return endpoint.error();
    return std::make_shared<introspecting_verifier>(strand, std::move(*endpoint), std::move(rules), cache,
                                                    max_token_bytes);
}

client::result<std::shared_ptr<token_verifier>> make_static_token_verifier(std::string token,
                                                                           std::vector<std::string> scopes) {
    if (!is_token68(token))
        return client::make_error(client::errc::usage,
                                  token.empty() ? "the static bearer token is empty"
                                                : "the static bearer token holds characters a bearer token "
                                                  "cannot (RFC 6750 §2.1: letters, digits, -._~+/ and "
                                                  "trailing =)");
    return std::make_shared<static_verifier>(std::move(token), std::move(scopes));
}

} // namespace duet::auth
