// Where Redis is: the URL of --store (duet/store/redis.hpp), and a check that it answers.
#include <duet/store/redis.hpp>

#include <hiredis/hiredis.h>

#include <charconv>
#include <memory>

namespace duet::store {

namespace {

template<class T>
bool parse_number(std::string_view text, T& out) {
    auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

using url_result = boost::system::result<redis_options, std::string>;

url_result failed(std::string why) {
    return url_result(boost::system::in_place_error, std::move(why));
}

} // namespace

boost::system::result<redis_options, std::string> parse_redis_url(std::string_view url) {
    redis_options out;
    if (url.starts_with("rediss://"))
        return failed(
            "rediss:// (Redis over TLS) needs hiredis 1.0 or later with TLS; this build has hiredis " +
            std::to_string(HIREDIS_MAJOR) + '.' + std::to_string(HIREDIS_MINOR));
    constexpr std::string_view scheme = "redis://";
    if (!url.starts_with(scheme))
        return failed("'" + std::string(url) + "' is not a redis:// URL (redis://HOST[:PORT][/DB])");
    auto rest = url.substr(scheme.size());
    if (rest.find_first_of("?#") != std::string_view::npos)
        return failed("a Redis URL takes no query or fragment: redis://HOST[:PORT][/DB]");
    if (rest.find('@') != std::string_view::npos)
        return failed("a Redis URL here carries no credentials (they would show on the command line)");
    auto const slash = rest.find('/');
    auto authority = rest.substr(0, slash);
    if (slash != std::string_view::npos) {
        auto const db = rest.substr(slash + 1);
        if (!db.empty() && (!parse_number(db, out.database) || out.database < 0))
            return failed("'" + std::string(db) + "' is not a Redis database number");
    }
    std::string_view port;
    if (authority.starts_with('[')) {
        auto const close = authority.find(']');
        if (close == std::string_view::npos)
            return failed("an IPv6 address in a Redis URL needs its closing ']'");
        out.host = std::string(authority.substr(1, close - 1));
        auto const after = authority.substr(close + 1);
        if (!after.empty() && !after.starts_with(':'))
            return failed("expected ':PORT' after the IPv6 address in the Redis URL");
        if (!after.empty())
            port = after.substr(1);
    } else {
        auto const colon = authority.rfind(':');
        out.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos)
            port = authority.substr(colon + 1);
    }
    if (out.host.empty())
        return failed("the Redis URL names no host: redis://HOST[:PORT][/DB]");
    if (!port.empty() || authority.ends_with(':')) {
        unsigned value = 0;
        if (!parse_number(port, value) || value == 0 || value > 65535)
            return failed("'" + std::string(port) + "' is not a port (1-65535)");
        out.port = static_cast<std::uint16_t>(value);
    }
    return out;
}

std::string redis_unreachable(redis_options const& where, std::chrono::milliseconds timeout) {
    auto const seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout);
    timeval const tv{static_cast<time_t>(seconds.count()),
                     static_cast<suseconds_t>(
                         std::chrono::duration_cast<std::chrono::microseconds>(timeout - seconds).count())};
    std::unique_ptr<redisContext, void (*)(redisContext*)> c(
        redisConnectWithTimeout(where.host.c_str(), where.port, tv), &redisFree);
    std::string const at = "Redis at " + where.host + ':' + std::to_string(where.port);
    if (!c)
        return at + ": cannot allocate a connection";
    if (c->err)
        return at + " cannot be reached: " + c->errstr;
    redisSetTimeout(c.get(), tv);
    auto ask = [&](char const* command) -> std::string {
        std::unique_ptr<redisReply, void (*)(void*)> r(
            static_cast<redisReply*>(redisCommand(c.get(), command)), &freeReplyObject);
        if (!r)
            return at + " did not answer " + command + ": " + (c->errstr[0] ? c->errstr : "no reply");
        if (r->type == REDIS_REPLY_ERROR)
            return at + " refused " + command + ": " + std::string(r->str, r->len);
        return {};
    };
    if (where.database != 0)
        if (auto why = ask(("SELECT " + std::to_string(where.database)).c_str()); !why.empty())
            return why;
    return ask("PING");
}

} // namespace duet::store
