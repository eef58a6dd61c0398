// The resource server's cached JWK Set: fetch, freshness (Cache-Control, RFC 9111 §5.2.2), one fetch at a
// time, a stale set kept when the server fails, and the one refetch a token naming an unknown key earns.
#include <duet/auth/key_source.hpp>
#include <duet/client/target.hpp>
#include <duet/protocol/header_codec.hpp>

#include "fetch.hpp"
#include "one_at_a_time.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace duet::auth {

namespace asio = boost::asio;
using asio::awaitable;
using steady = std::chrono::steady_clock;
using verify_result = boost::system::result<verified_token, token_rejection>;

namespace {

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

// How long an answer with this Cache-Control field may be used, within the options' bounds.
std::chrono::milliseconds lifetime_of(std::optional<std::string_view> cache_control, jwks_options const& o) {
    auto lifetime = o.default_lifetime;
    if (cache_control) {
        std::string_view rest = *cache_control;
        while (!rest.empty()) {
            auto const comma = rest.find(',');
            auto const directive = trim(rest.substr(0, comma));
            rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
            auto const eq = directive.find('=');
            auto const name = trim(directive.substr(0, eq));
            if (protocol::iequals(name, "no-store") || protocol::iequals(name, "no-cache"))
                return o.min_lifetime;
            if (protocol::iequals(name, "max-age") && eq != std::string_view::npos) {
                auto value = trim(directive.substr(eq + 1));
                if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
                    value = value.substr(1, value.size() - 2);
                std::uint64_t seconds = 0;
                auto const [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
                if (ec == std::errc() && end == value.data() + value.size())
                    lifetime = std::chrono::milliseconds(std::min<std::uint64_t>(seconds, 10'000'000'000ULL) *
                                                         std::uint64_t{1000});
                else if (ec == std::errc::result_out_of_range)
                    lifetime = o.max_lifetime;
            }
        }
    }
    return std::clamp(lifetime, o.min_lifetime, o.max_lifetime);
}

} // namespace

struct jwks_key_source::state {
    asio::any_io_executor ex;
    std::string url;
    jwks_options options;
    std::optional<jwk_set> keys;
    std::uint64_t generation = 0; ///< bumped each time `keys` is replaced
    steady::time_point fresh_until{};
    std::optional<steady::time_point> last_attempt;
    std::optional<client::error> last_error;
    std::size_t fetches = 0;
    /// One fetch at a time; the others wait for it and then use what it got.
    detail::one_at_a_time slot;

    [[nodiscard]] bool fresh() const { return keys && steady::now() < fresh_until; }
    [[nodiscard]] bool may_fetch() const {
        return !last_attempt || steady::now() - *last_attempt >= options.refetch_interval;
    }

    client::error failure(client::errc code, std::string const& why) const {
        return client::make_error(code, "the JWK Set at " + url + " " + why);
    }

    // One fetch: on success the set, its generation and freshness replaced; on failure `last_error` set and
    // the set held (if any) kept as it was.
    awaitable<void> async_fetch_keys() {
        last_attempt = steady::now();
        ++fetches;
        detail::http_request request;
        request.url = url;
        request.headers.emplace_back("Accept", "application/jwk-set+json, application/json");
        detail::fetch_limits limits;
        limits.timeout = options.request_timeout;
        limits.max_body = options.max_document_bytes;
        auto answer = co_await detail::async_fetch(ex, std::move(request), options.tls, limits);
        if (!answer) {
            last_error = answer.error();
            co_return;
        }
        if (answer->status != 200) {
            last_error = failure(client::errc::http_status,
                                 "cannot be fetched: HTTP status " + std::to_string(answer->status));
            last_error->http_status = answer->status;
            co_return;
        }
        auto parsed = parse_jwk_set(answer->body);
        if (!parsed) {
            last_error =
                failure(client::errc::protocol_violation, "is no JWK Set: " + parsed.error().description);
            co_return;
        }
        keys = std::move(*parsed);
        ++generation;
        fresh_until = steady::now() + lifetime_of(answer->header("Cache-Control"), options);
        last_error.reset();
    }

    [[nodiscard]] client::error why_none() const {
        return last_error ? *last_error : failure(client::errc::connect_failed, "has not been fetched");
    }
};

namespace {

using state = jwks_key_source::state;

// A set newer than generation `seen`: another caller's, or one fetched now if the rate limit allows.
awaitable<std::optional<jwk_set>> async_newer_than(state& s, std::uint64_t seen) {
    co_await s.slot.async_enter(s.ex);
    detail::one_at_a_time::held held(s.slot);
    if (s.keys && s.generation != seen)
        co_return s.keys;
    if (!s.may_fetch())
        co_return std::nullopt;
    co_await s.async_fetch_keys();
    if (s.keys && s.generation != seen)
        co_return s.keys;
    co_return std::nullopt;
}

} // namespace

client::result<std::shared_ptr<jwks_key_source>>
jwks_key_source::make(asio::any_io_executor ex, std::string const& jwks_url, jwks_options options) {
    auto url = client::parse_http_url(jwks_url);
    if (!url)
        return url.error();
    using std::chrono::milliseconds;
    if (options.min_lifetime < milliseconds(0) || options.default_lifetime < milliseconds(0) ||
        options.refetch_interval < milliseconds(0) || options.request_timeout <= milliseconds(0))
        return client::make_error(client::errc::usage, "the JWK Set options have a negative duration");
    if (options.min_lifetime > options.max_lifetime)
        return client::make_error(client::errc::usage,
                                  "the JWK Set's minimum lifetime is over its maximum lifetime");
    if (options.max_document_bytes == 0)
        return client::make_error(client::errc::usage, "the JWK Set's maximum document size is 0");
    return std::make_shared<jwks_key_source>(ex, jwks_url, std::move(options));
}

jwks_key_source::jwks_key_source(asio::any_io_executor ex, std::string jwks_url, jwks_options options)
    : state_(std::make_unique<state>()) {
    state_->ex = std::move(ex);
    state_->url = std::move(jwks_url);
    state_->options = std::move(options);
}

jwks_key_source::~jwks_key_source() = default;

std::size_t jwks_key_source::fetch_count() const noexcept {
    return state_->fetches;
}

std::optional<jwks_key_source::held_keys> jwks_key_source::held() const {
    if (!state_->keys)
        return std::nullopt;
    return held_keys{*state_->keys, state_->fresh_until};
}

awaitable<client::result<jwk_set>> jwks_key_source::async_keys() {
    auto self = shared_from_this();
    auto& s = *state_;
    if (s.fresh())
        co_return *s.keys;
    co_await s.slot.async_enter(s.ex);
    detail::one_at_a_time::held held(s.slot);
    // Fetched by another caller while this one waited, or not to be fetched again yet.
    if (!s.fresh() && s.may_fetch())
        co_await s.async_fetch_keys();
    if (s.keys)
        co_return *s.keys;
    co_return s.why_none();
}

awaitable<verify_result> jwks_key_source::async_verify(std::string token, token_rules rules) {
    auto self = shared_from_this();
    auto& s = *state_;
    auto keys = co_await async_keys();
    if (!keys)
        co_return token_rejection{
            "the authorization server's keys cannot be fetched: " + keys.error().message, false, true};
    auto const seen = s.generation;
    auto first = verify_access_token(token, *keys, rules, std::chrono::system_clock::now());
    if (first || !first.error().unknown_key)
        co_return std::move(first);
    // A rotation, perhaps: one refetch, then a plain answer.
    auto newer = co_await async_newer_than(s, seen);
    if (!newer)
        co_return token_rejection{first.error().description, false};
    auto second = verify_access_token(token, *newer, rules, std::chrono::system_clock::now());
    if (!second)
        co_return token_rejection{second.error().description, false};
    co_return std::move(second);
}

} // namespace duet::auth
