// The resource server's JWK Set source against a tiny HTTP server on loopback (a thread with a listening
// socket, answering each GET with the document and headers the test chose, counting requests): fetched once
// and kept while fresh, Cache-Control max-age honoured within bounds, one refetch when a token names a new
// key (a rotation) and no more within the rate limit, a stale set kept when the server goes away, an error
// when there never was a set, the document size limit, and one fetch shared by concurrent verifications.
//
// Requirement tags: RFC 8414 §2 (jwks_uri), RFC 7517 §5 (JWK Set), RFC 9111 §5.2.2.1 (max-age), §5.2.2.4
// (no-cache), §5.2.2.5 (no-store); RFC 9068 §4 (validation with the server's keys), RFC 6750 §3.1
// (invalid_token).
#include <duet/auth/key_source.hpp>
#include <duet/jsonrpc/json_text.hpp>

#include "unit/auth/jose_minting.hpp"
#include "unit/auth/run_on.hpp"
#include "unit/auth/scripted_server.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace key_source_suite {

namespace asio = boost::asio;
using namespace jose_minting;
using namespace std::chrono_literals;
using duet::auth::jwks_key_source;
using duet::auth::jwks_options;
using verify_result = boost::system::result<duet::auth::verified_token, duet::auth::token_rejection>;

// The authorization server's JWKS endpoint.
struct jwks_server : auth_test_support::scripted_server {
    jwks_server() : scripted_server("/jwks.json") {}
};

std::string jwks_text(std::vector<json::object> keys) {
    return duet::jsonrpc::to_json_text(jwks_of(std::move(keys)));
}

duet::auth::token_rules ks_rules() {
    duet::auth::token_rules r;
    r.issuer = "https://as.example";
    r.audience = "https://mcp.example/mcp";
    return r;
}

std::string ks_token(EVP_PKEY* key, std::string const& kid) {
    auto const now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    json::object claims{{"iss", "https://as.example"},
                        {"aud", "https://mcp.example/mcp"},
                        {"sub", "user-1"},
                        {"exp", now + 600},
                        {"iat", now}};
    return sign_token(key, json::object{{"alg", "RS256"}, {"typ", "at+jwt"}, {"kid", kid}}, claims);
}

jwks_options quick_options() {
    jwks_options o;
    o.request_timeout = 5s;
    o.min_lifetime = 1s;
    o.refetch_interval = 1s;
    return o;
}

asio::awaitable<verify_result> verify_with(std::shared_ptr<jwks_key_source> source, std::string token) {
    auto rules = ks_rules();
    co_return co_await source->async_verify(std::move(token), std::move(rules));
}

verify_result verify_now(asio::io_context& io, std::shared_ptr<jwks_key_source> const& source,
                         std::string const& token) {
    return auth_test_support::run_on(io, verify_with(source, token));
}

std::shared_ptr<jwks_key_source> source_for(asio::io_context& io, std::string const& url, jwks_options o) {
    auto made = jwks_key_source::make(io.get_executor(), url, std::move(o));
    EXPECT_TRUE(made) << made.error().message;
    return made ? *made : nullptr;
}

TEST(KeySource, FetchesOnceAndKeepsTheSetWhileFresh) {
    jwks_server server;
    server.answer(jwks_text({public_jwk(rsa_key(), "k1")}));
    asio::io_context io;
    auto source = source_for(io, server.url(), jwks_options{});
    auto const token = ks_token(rsa_key(), "k1");
    auto first = verify_now(io, source, token);
    ASSERT_TRUE(first) << first.error().description;
    EXPECT_EQ(first->subject, "user-1");
    EXPECT_EQ(server.requests(), 1);
    auto second = verify_now(io, source, token);
    ASSERT_TRUE(second) << second.error().description;
    EXPECT_EQ(server.requests(), 1);
    EXPECT_EQ(source->fetch_count(), 1U);
}

TEST(KeySource, HonoursMaxAgeThenFetchesAgain) {
    jwks_server server;
    server.answer(jwks_text({public_jwk(rsa_key(), "k1")}), 200, "Cache-Control: public, max-age=1\r\n");
    asio::io_context io;
    auto source = source_for(io, server.url(), quick_options());
    auto const token = ks_token(rsa_key(), "k1");
    ASSERT_TRUE(verify_now(io, source, token));
    ASSERT_TRUE(verify_now(io, source, token));
    EXPECT_EQ(server.requests(), 1);
    std::this_thread::sleep_for(1100ms);
    ASSERT_TRUE(verify_now(io, source, token));
    EXPECT_EQ(server.requests(), 2);
}

TEST(KeySource, NoStoreGetsTheMinimumLifetime) {
    jwks_server server;
    server.answer(jwks_text({public_jwk(rsa_key(), "k1")}), 200, "Cache-Control: no-store\r\n");
    asio::io_context io;
    auto o = quick_options();
    o.min_lifetime = 300ms;
    o.refetch_interval = 0ms;
    auto source = source_for(io, server.url(), o);
    auto const token = ks_token(rsa_key(), "k1");
    ASSERT_TRUE(verify_now(io, source, token));
    ASSERT_TRUE(verify_now(io, source, token));
    EXPECT_EQ(server.requests(), 1);
    std::this_thread::sleep_for(400ms);
    ASSERT_TRUE(verify_now(io, source, token));
    EXPECT_EQ(server.requests(), 2);
}

TEST(KeySource, ARotatedKeyTriggersOneRefetchAndVerifies) {
    jwks_server server;
    server.answer(jwks_text({public_jwk(rsa_key(), "k1")}));
    asio::io_context io;
    auto source = source_for(io, server.url(), quick_options());
    ASSERT_TRUE(verify_now(io, source, ks_token(rsa_key(), "k1")));
    EXPECT_EQ(server.requests(), 1);
    std::this_thread::sleep_for(1100ms); // past the rate limit, still within the set's lifetime
    server.answer(jwks_text({public_jwk(other_rsa_key(), "k2")}));
    auto rotated = verify_now(io, source, ks_token(other_rsa_key(), "k2"));
    ASSERT_TRUE(rotated) << rotated.error().description;
    EXPECT_EQ(server.requests(), 2);
    ASSERT_TRUE(verify_now(io, source, ks_token(other_rsa_key(), "k2")));
    EXPECT_EQ(server.requests(), 2);
}

TEST(KeySource, AnUnknownKidRefetchesOnlyOnceWithinTheRateLimit) {
    jwks_server server;
    server.answer(jwks_text({public_jwk(rsa_key(), "k1")}));
    asio::io_context io;
    auto source = source_for(io, server.url(), quick_options());
    ASSERT_TRUE(verify_now(io, source, ks_token(rsa_key(), "k1")));
    std::this_thread::sleep_for(1100ms);
    auto const stranger = ks_token(other_rsa_key(), "nobody");
    auto first = verify_now(io, source, stranger);
    ASSERT_FALSE(first);
    EXPECT_FALSE(first.error().unknown_key); // the refetch has been done
    EXPECT_NE(first.error().description.find("nobody"), std::string::npos) << first.error().description;
    EXPECT_EQ(server.requests(), 2);
    auto second = verify_now(io, source, stranger);
    ASSERT_FALSE(second);
    EXPECT_FALSE(second.error().unknown_key);
    EXPECT_EQ(server.requests(), 2);
}

TEST(KeySource, KeepsServingAStaleSetWhenTheServerGoesAway) {
    jwks_server server;
    server.answer(jwks_text({public_jwk(rsa_key(), "k1")}), 200, "Cache-Control: max-age=1\r\n");
    asio::io_context io;
    auto source = source_for(io, server.url(), quick_options());
    auto const token = ks_token(rsa_key(), "k1");
    ASSERT_TRUE(verify_now(io, source, token));
    server.stop();
    std::this_thread::sleep_for(1100ms);
    auto stale = verify_now(io, source, token);
    ASSERT_TRUE(stale) << stale.error().description;
    EXPECT_EQ(source->fetch_count(), 2U);
    // The failed fetch is not retried before the rate limit allows.
    ASSERT_TRUE(verify_now(io, source, token));
    EXPECT_EQ(source->fetch_count(), 2U);
}

TEST(KeySource, ServerDownFromTheStartIsARejection) {
    std::string url;
    {
        jwks_server gone;
        url = gone.url();
    }
    asio::io_context io;
    auto source = source_for(io, url, quick_options());
    auto refused = verify_now(io, source, ks_token(rsa_key(), "k1"));
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().description.find("keys cannot be fetched"), std::string::npos)
        << refused.error().description;
    EXPECT_FALSE(refused.error().unknown_key);
    EXPECT_TRUE(refused.error().server_unavailable);
}

TEST(KeySource, RefusesADocumentOverTheSizeLimit) {
    jwks_server server;
    server.answer(jwks_text({public_jwk(rsa_key(), "k1")}));
    asio::io_context io;
    auto o = quick_options();
    o.max_document_bytes = 200; // an RSA 2048 JWK alone is over 350 bytes
    auto source = source_for(io, server.url(), o);
    auto refused = verify_now(io, source, ks_token(rsa_key(), "k1"));
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().description.find("keys cannot be fetched"), std::string::npos)
        << refused.error().description;
    EXPECT_NE(refused.error().description.find("200 bytes"), std::string::npos)
        << refused.error().description;
}

TEST(KeySource, ConcurrentVerificationsShareOneFetch) {
    jwks_server server;
    server.answer(jwks_text({public_jwk(rsa_key(), "k1")}));
    asio::io_context io;
    auto source = source_for(io, server.url(), jwks_options{});
    auto const token = ks_token(rsa_key(), "k1");
    std::vector<std::future<verify_result>> results;
    for (int i = 0; i < 5; ++i)
        results.push_back(asio::co_spawn(io, verify_with(source, token), asio::use_future));
    io.run();
    for (auto& r : results) {
        auto got = r.get();
        EXPECT_TRUE(got) << got.error().description;
    }
    EXPECT_EQ(server.requests(), 1);
}

TEST(KeySource, ConcurrentTokensOfARotatedKeyShareOneRefetch) {
    jwks_server server;
    server.answer(jwks_text({public_jwk(rsa_key(), "k1")}));
    asio::io_context io;
    auto source = source_for(io, server.url(), quick_options());
    ASSERT_TRUE(verify_now(io, source, ks_token(rsa_key(), "k1")));
    std::this_thread::sleep_for(1100ms);
    server.answer(jwks_text({public_jwk(other_rsa_key(), "k2")}));
    auto const token = ks_token(other_rsa_key(), "k2");
    std::vector<std::future<verify_result>> results;
    for (int i = 0; i < 4; ++i)
        results.push_back(asio::co_spawn(io, verify_with(source, token), asio::use_future));
    io.restart();
    io.run();
    for (auto& r : results) {
        auto got = r.get();
        EXPECT_TRUE(got) << got.error().description;
    }
    EXPECT_EQ(server.requests(), 2);
}

TEST(KeySource, MakeRefusesABadUrlAndContradictoryBounds) {
    asio::io_context io;
    EXPECT_FALSE(jwks_key_source::make(io.get_executor(), "not a url", {}));
    jwks_options o;
    o.min_lifetime = 2h;
    o.max_lifetime = 1h;
    EXPECT_FALSE(jwks_key_source::make(io.get_executor(), "https://as.example/jwks", o));
}

} // namespace key_source_suite
