// The resource server's token introspection (RFC 7662): the request (§2.1) with HTTP Basic client
// authentication (RFC 6749 §2.3.1), the answer's checks (§2.2), a bounded cache of active answers keyed by
// the token's SHA-256, and one request shared by concurrent verifications of one token.
#include <duet/auth/introspection.hpp>
#include <duet/auth/scopes.hpp>
#include <duet/client/target.hpp>

#include "fetch.hpp"
#include "one_at_a_time.hpp"
#include "token_endpoint.hpp"
#include "verified_cache.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace duet::auth {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using system_clock = std::chrono::system_clock;
using verify_result = boost::system::result<verified_token, token_rejection>;

namespace {

token_rejection refuse(std::string why) {
    return token_rejection{std::move(why), false, false};
}

token_rejection unavailable(std::string why) {
    return token_rejection{"the introspection endpoint failed: " + why, false, true};
}

// A NumericDate member (seconds since the epoch, RFC 7519 §2); nullopt when absent, an error when no number.
std::optional<token_rejection> read_time(json::object const& o, char const* name,
                                         std::optional<system_clock::time_point>& out) {
    auto const* v = o.if_contains(name);
    if (!v)
        return std::nullopt;
    double seconds = 0;
    if (v->is_int64())
        seconds = static_cast<double>(v->get_int64());
    else if (v->is_uint64())
        seconds = static_cast<double>(v->get_uint64());
    else if (v->is_double())
        seconds = v->get_double();
    else
        return refuse(std::string("the introspection answer's ") + name + " is not a number");
    if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e11)
        return refuse(std::string("the introspection answer's ") + name + " is out of range");
    out = system_clock::time_point(std::chrono::duration_cast<system_clock::duration>(
        std::chrono::duration<double>(std::floor(seconds))));
    return std::nullopt;
}

std::optional<token_rejection> read_string(json::object const& o, char const* name, std::string& out) {
    auto const* v = o.if_contains(name);
    if (!v)
        return std::nullopt;
    if (!v->is_string())
        return refuse(std::string("the introspection answer's ") + name + " is not a string");
    out = std::string(v->get_string());
    return std::nullopt;
}

bool audience_holds(json::value const& aud, std::string const& audience) {
    if (aud.is_string())
        return aud.get_string() == audience;
    if (aud.is_array())
        return std::any_of(aud.get_array().begin(), aud.get_array().end(),
                           [&](json::value const& v) { return v.is_string() && v.get_string() == audience; });
    return false;
}

// An answer (a JSON object) checked against the rules as of `now` (RFC 7662 §2.2).
verify_result check_answer(json::object const& answer, token_rules const& rules,
                           system_clock::time_point now) {
    auto const* active = answer.if_contains("active");
    if (!active || !active->is_bool() || !active->get_bool())
        return refuse("the token is not active");
    verified_token out;
    if (auto bad = read_string(answer, "iss", out.issuer))
        return *bad;
    if (answer.contains("iss") && out.issuer != rules.issuer)
        return refuse("the token was issued by " + out.issuer + ", not " + rules.issuer);
    auto const* aud = answer.if_contains("aud");
    if (rules.audience.empty() || !aud || !audience_holds(*aud, rules.audience))
        return refuse("the token is not meant for " + rules.audience);
    if (auto bad = read_time(answer, "exp", out.expires_at))
        return *bad;
    if (out.expires_at && *out.expires_at + rules.leeway <= now)
        return refuse("the token has expired");
    if (auto bad = read_string(answer, "sub", out.subject))
        return *bad;
    if (auto bad = read_string(answer, "client_id", out.client_id))
        return *bad;
    if (auto const* scope = answer.if_contains("scope")) {
        if (!scope->is_string())
            return refuse("the introspection answer's scope is not a string");
        for (auto& name : split_scopes(scope->get_string()))
            if (!name.empty() && std::find(out.scopes.begin(), out.scopes.end(), name) == out.scopes.end())
                out.scopes.push_back(std::move(name));
    }
    out.claims = answer;
    return out;
}

} // namespace

struct introspection_verifier::state {
    /// An answer being fetched: the verifications of the same token wait for it.
    struct pending {
        std::optional<boost::system::result<json::object, token_rejection>> outcome;
        detail::waiters waiting;
    };
    struct entry {
        json::object answer;
        system_clock::time_point until;
        std::uint64_t order = 0;
    };

    asio::any_io_executor ex;
    std::string url;
    introspection_options options;
    std::string authorization;
    std::size_t requests = 0;
    std::uint64_t next_order = 0;
    std::unordered_map<std::string, entry> cache;     ///< by the token's SHA-256
    std::map<std::uint64_t, std::string> cache_order; ///< oldest first
    std::unordered_map<std::string, std::shared_ptr<pending>> in_flight;

    void forget(std::string const& key) {
        auto it = cache.find(key);
        if (it == cache.end())
            return;
        cache_order.erase(it->second.order);
        cache.erase(it);
    }

    void remember(std::string const& key, json::object const& answer, system_clock::time_point now) {
        if (options.max_entries == 0 || options.max_cache <= std::chrono::milliseconds(0))
            return;
        auto until = now + std::chrono::duration_cast<system_clock::duration>(options.max_cache);
        std::optional<system_clock::time_point> exp;
        if (read_time(answer, "exp", exp) || (exp && *exp <= now))
            return;
        if (exp)
            until = std::min(until, *exp);
        forget(key);
        while (cache.size() >= options.max_entries && !cache_order.empty()) {
            cache.erase(cache_order.begin()->second);
            cache_order.erase(cache_order.begin());
        }
        auto const order = next_order++;
        cache.emplace(key, entry{answer, until, order});
        cache_order.emplace(order, key);
    }

    // One introspection request: the answer's object, or why the server failed.
    awaitable<boost::system::result<json::object, token_rejection>> async_ask(std::string const& token) {
        ++requests;
        detail::http_request request;
        request.method = "POST";
        request.url = url;
        request.headers = {{"Content-Type", "application/x-www-form-urlencoded"},
                           {"Accept", "application/json"},
                           {"Authorization", authorization}};
        std::vector<std::pair<std::string, std::string>> form{{"token", token},
                                                              {"token_type_hint", "access_token"}};
        request.body = detail::form_encode(form);
        detail::fetch_limits limits;
        limits.timeout = options.request_timeout;
        limits.max_body = 1024 * 1024;
        auto answer = co_await detail::async_fetch(ex, std::move(request), options.tls, limits);
        if (!answer)
            co_return unavailable(answer.error().message);
        if (answer->status != 200)
            co_return unavailable("HTTP status " + std::to_string(answer->status));
        boost::system::error_code ec;
        auto doc = json::parse(answer->body, ec);
        if (ec || !doc.is_object())
            co_return unavailable("its answer is no JSON object");
        co_return std::move(doc.get_object());
    }
};

namespace {

using state = introspection_verifier::state;

// Settles a shared request when the asking coroutine ends, however it ends, and wakes its waiters.
class settle {
public:
    settle(state& s, std::string key, std::shared_ptr<state::pending> p)
        : s_(&s), key_(std::move(key)), p_(std::move(p)) {}
    settle(settle const&) = delete;
    settle& operator=(settle const&) = delete;
    ~settle() {
        if (!p_->outcome)
            p_->outcome = unavailable("the request was abandoned");
        auto it = s_->in_flight.find(key_);
        if (it != s_->in_flight.end() && it->second == p_)
            s_->in_flight.erase(it);
        p_->waiting.wake_all();
    }

private:
    state* s_;
    std::string key_;
    std::shared_ptr<state::pending> p_;
};

} // namespace

client::result<std::shared_ptr<introspection_verifier>>
introspection_verifier::make(asio::any_io_executor ex, std::string const& introspection_url,
                             introspection_options options) {
    auto url = client::parse_http_url(introspection_url);
    if (!url)
        return url.error();
    if (options.client_id.empty())
        return client::make_error(client::errc::usage, "token introspection needs a client id");
    using std::chrono::milliseconds;
    if (options.request_timeout <= milliseconds(0) || options.max_cache < milliseconds(0))
        return client::make_error(client::errc::usage, "the introspection options have a negative duration");
    if (options.max_token_bytes == 0)
        return client::make_error(client::errc::usage, "the introspection's maximum token size is 0");
    return std::make_shared<introspection_verifier>(ex, introspection_url, std::move(options));
}

introspection_verifier::introspection_verifier(asio::any_io_executor ex, std::string introspection_url,
                                               introspection_options options)
    : state_(std::make_unique<state>()) {
    state_->ex = std::move(ex);
    state_->url = std::move(introspection_url);
    state_->options = std::move(options);
    state_->authorization =
        detail::basic_credentials(state_->options.client_id, state_->options.client_secret);
}

introspection_verifier::~introspection_verifier() = default;

std::size_t introspection_verifier::request_count() const noexcept {
    return state_->requests;
}

std::size_t introspection_verifier::cached() const noexcept {
    return state_->cache.size();
}

awaitable<verify_result> introspection_verifier::async_verify(std::string token, token_rules rules) {
    auto self = shared_from_this();
    auto& s = *state_;
    if (token.empty())
        co_return refuse("the token is empty");
    if (token.size() > s.options.max_token_bytes || token.size() > rules.max_bytes)
        co_return refuse("the token is longer than " +
                         std::to_string(std::min(s.options.max_token_bytes, rules.max_bytes)) + " bytes");
    auto const key = detail::token_digest(token);
    if (key.empty())
        co_return refuse("the token cannot be digested");

    if (auto it = s.cache.find(key); it != s.cache.end()) {
        auto const now = system_clock::now();
        if (now < it->second.until)
            co_return check_answer(it->second.answer, rules, now);
        s.forget(key);
    }

    if (auto it = s.in_flight.find(key); it != s.in_flight.end()) {
        auto shared = it->second;
        while (!shared->outcome) {
            co_await shared->waiting.async_wait(s.ex);
        }
        if (!*shared->outcome)
            co_return shared->outcome->error();
        co_return check_answer(shared->outcome->value(), rules, system_clock::now());
    }

    auto mine = std::make_shared<state::pending>();
    s.in_flight.emplace(key, mine);
    settle settled(s, key, mine);
    auto answer = co_await s.async_ask(token);
    mine->outcome = answer;
    if (!answer)
        co_return answer.error();
    auto const now = system_clock::now();
    auto result = check_answer(*answer, rules, now);
    auto const* active = answer->if_contains("active");
    if (active && active->is_bool() && active->get_bool())
        s.remember(key, *answer, now);
    co_return result;
}

} // namespace duet::auth
