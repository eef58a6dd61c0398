// The built-in token verifiers (auth/verifiers.hpp) against tiny loopback servers (scripted_server.hpp): a
// JWT verifier answers without waiting once it holds fresh keys, hands a token naming an unknown key to its
// key source (which refetches), keeps verified tokens by their hash until they expire or the cache is full,
// and is used from several threads at once; the introspection verifier reuses an active answer; the static
// verifier takes exactly its token; every maker refuses what cannot work.
//
// Requirement tags: RFC 9068 §4 (validation), RFC 7662 §4 (caching introspection answers), RFC 6750 §2.1
// (b64token).
#include <duet/auth/verifiers.hpp>
#include <duet/jsonrpc/json_text.hpp>

#include "unit/auth/jose_minting.hpp"
#include "unit/auth/run_on.hpp"
#include "unit/auth/scripted_server.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace verifiers_suite {

namespace asio = boost::asio;
using namespace jose_minting;
using namespace std::chrono_literals;
using duet::auth::token_verdict;
using duet::auth::token_verifier;

long long unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

duet::auth::token_rules vf_rules(std::chrono::seconds leeway = 30s) {
    duet::auth::token_rules r;
    r.issuer = "https://as.example";
    r.audience = "https://mcp.example/mcp";
    r.leeway = leeway;
    return r;
}

std::string vf_token(EVP_PKEY* key, std::string const& kid, std::string const& subject = "user-1",
                     long long lifetime = 600) {
    json::object claims{
        {"iss", "https://as.example"}, {"aud", "https://mcp.example/mcp"}, {"sub", subject},
        {"scope", "mcp tools:write"},  {"exp", unix_now() + lifetime},     {"iat", unix_now()}};
    return sign_token(key, json::object{{"alg", "RS256"}, {"kid", kid}}, claims);
}

std::string vf_jwks(std::vector<json::object> keys) {
    return duet::jsonrpc::to_json_text(jwks_of(std::move(keys)));
}

asio::awaitable<token_verdict> vf_verify(std::shared_ptr<token_verifier> v, std::string token) {
    co_return co_await v->async_verify(std::move(token));
}

token_verdict verify_async(asio::io_context& io, std::shared_ptr<token_verifier> const& v,
                           std::string token) {
    return auth_test_support::run_on(io, vf_verify(v, std::move(token)));
}

std::shared_ptr<token_verifier> jwt_verifier_for(asio::io_context& io, std::string const& url,
                                                 duet::auth::verified_cache_options cache = {},
                                                 std::chrono::seconds leeway = 30s) {
    duet::auth::jwks_options o;
    o.request_timeout = 5s;
    o.refetch_interval = 0s;
    auto made = duet::auth::make_jwt_verifier(io.get_executor(), url, vf_rules(leeway), o, cache);
    EXPECT_TRUE(made) << made.error().message;
    return made ? *made : nullptr;
}

TEST(JwtVerifier, AnswersWithoutWaitingOnlyOnceItHoldsFreshKeys) {
    auth_test_support::scripted_server jwks("/jwks");
    jwks.answer(vf_jwks({public_jwk(rsa_key(), "k1")}));
    asio::io_context io;
    auto v = jwt_verifier_for(io, jwks.url());
    auto const first = vf_token(rsa_key(), "k1", "first");
    EXPECT_FALSE(v->verify_now(first)) << "no keys are held before the first fetch";
    auto fetched = verify_async(io, v, first);
    ASSERT_TRUE(fetched) << fetched.error().description;
    EXPECT_EQ((*fetched)->subject, "first");
    // Another token, never seen: checked against the keys held, with no request.
    auto second = v->verify_now(vf_token(rsa_key(), "k1", "second"));
    ASSERT_TRUE(second);
    ASSERT_TRUE(*second) << second->error().description;
    EXPECT_EQ((**second)->subject, "second");
    EXPECT_EQ((**second)->scopes, (std::vector<std::string>{"mcp", "tools:write"}));
    EXPECT_EQ(jwks.requests(), 1);
}

TEST(JwtVerifier, ARepeatedTokenIsTheSameVerifiedIdentity) {
    auth_test_support::scripted_server jwks("/jwks");
    jwks.answer(vf_jwks({public_jwk(rsa_key(), "k1")}));
    asio::io_context io;
    auto v = jwt_verifier_for(io, jwks.url());
    auto const token = vf_token(rsa_key(), "k1");
    auto a = verify_async(io, v, token);
    auto b = v->verify_now(token);
    ASSERT_TRUE(a);
    ASSERT_TRUE(b && *b);
    EXPECT_EQ(a->get(), b->value().get()) << "the cached verdict, not a second verification";
}

TEST(JwtVerifier, ABadTokenIsRefusedWithoutWaitingOnceKeysAreHeld) {
    auth_test_support::scripted_server jwks("/jwks");
    jwks.answer(vf_jwks({public_jwk(rsa_key(), "k1")}));
    asio::io_context io;
    auto v = jwt_verifier_for(io, jwks.url());
    ASSERT_TRUE(verify_async(io, v, vf_token(rsa_key(), "k1")));
    auto forged = v->verify_now(vf_token(other_rsa_key(), "k1"));
    ASSERT_TRUE(forged);
    EXPECT_FALSE(*forged);
    auto expired = v->verify_now(vf_token(rsa_key(), "k1", "late", -3600));
    ASSERT_TRUE(expired);
    ASSERT_FALSE(*expired);
    EXPECT_NE(expired->error().description.find("expired"), std::string::npos)
        << expired->error().description;
}

TEST(JwtVerifier, AnUnknownKeyGoesToTheKeySourceWhichFetchesTheRotatedSet) {
    auth_test_support::scripted_server jwks("/jwks");
    jwks.answer(vf_jwks({public_jwk(rsa_key(), "k1")}));
    asio::io_context io;
    auto v = jwt_verifier_for(io, jwks.url());
    ASSERT_TRUE(verify_async(io, v, vf_token(rsa_key(), "k1")));
    jwks.answer(vf_jwks({public_jwk(rsa_key(), "k1"), public_jwk(other_rsa_key(), "k2")}));
    auto const rotated = vf_token(other_rsa_key(), "k2");
    EXPECT_FALSE(v->verify_now(rotated)) << "a key the copy lacks is not refused without asking";
    auto after = verify_async(io, v, rotated);
    ASSERT_TRUE(after) << after.error().description;
    EXPECT_EQ(jwks.requests(), 2);
    // The new set is the copy every thread checks against now.
    auto again = v->verify_now(vf_token(other_rsa_key(), "k2", "another"));
    ASSERT_TRUE(again && *again);
}

TEST(JwtVerifier, KeysThatCannotBeFetchedMakeTheServerUnavailableNotTheTokenBad) {
    std::string url;
    {
        auth_test_support::scripted_server gone("/jwks");
        url = gone.url();
    }
    asio::io_context io;
    auto v = jwt_verifier_for(io, url);
    auto refused = verify_async(io, v, vf_token(rsa_key(), "k1"));
    ASSERT_FALSE(refused);
    EXPECT_TRUE(refused.error().server_unavailable) << refused.error().description;
}

TEST(JwtVerifier, ACachedTokenIsNotServedPastItsExpiry) {
    auth_test_support::scripted_server jwks("/jwks");
    jwks.answer(vf_jwks({public_jwk(rsa_key(), "k1")}));
    asio::io_context io;
    auto v = jwt_verifier_for(io, jwks.url(), {}, 0s);
    auto const token = vf_token(rsa_key(), "k1", "brief", 1);
    ASSERT_TRUE(verify_async(io, v, token));
    std::this_thread::sleep_for(2100ms);
    auto late = v->verify_now(token);
    ASSERT_TRUE(late);
    EXPECT_FALSE(*late) << "an expired token is checked again, and refused";
}

TEST(JwtVerifier, AFullCacheDropsItsOldestEntry) {
    auth_test_support::scripted_server jwks("/jwks");
    jwks.answer(vf_jwks({public_jwk(rsa_key(), "k1")}));
    asio::io_context io;
    auto v = jwt_verifier_for(io, jwks.url(), {.cache_entries = 2, .cache_lifetime = 10min});
    auto const a = vf_token(rsa_key(), "k1", "a");
    auto const b = vf_token(rsa_key(), "k1", "b");
    auto const c = vf_token(rsa_key(), "k1", "c");
    auto first_a = verify_async(io, v, a);
    auto first_c = [&] {
        (void)v->verify_now(b);
        return v->verify_now(c);
    }();
    ASSERT_TRUE(first_a && first_c && *first_c);
    auto again_a = v->verify_now(a);
    auto again_c = v->verify_now(c);
    ASSERT_TRUE(again_a && *again_a && again_c && *again_c);
    EXPECT_NE(again_a->value().get(), first_a->get()) << "a was dropped for c and verified again";
    EXPECT_EQ(again_c->value().get(), first_c->value().get());
}

TEST(JwtVerifier, ServesManyThreadsAtOnce) {
    auth_test_support::scripted_server jwks("/jwks");
    jwks.answer(vf_jwks({public_jwk(rsa_key(), "k1")}));
    asio::io_context io;
    auto v = jwt_verifier_for(io, jwks.url(), {.cache_entries = 8, .cache_lifetime = 10min});
    ASSERT_TRUE(verify_async(io, v, vf_token(rsa_key(), "k1")));
    std::vector<std::string> tokens;
    for (int i = 0; i < 16; ++i)
        tokens.push_back(vf_token(rsa_key(), "k1", "user-" + std::to_string(i)));
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 200; ++i) {
                auto const n = (i + t) % 16;
                auto r = v->verify_now(tokens[n]);
                if (!r || !*r || (**r)->subject != "user-" + std::to_string(n))
                    ++wrong;
            }
        });
    for (auto& t : threads)
        t.join();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(jwks.requests(), 1);
}

TEST(JwtVerifier, RulesWithoutIssuerOrAudienceAreAUsageError) {
    asio::io_context io;
    duet::auth::token_rules no_issuer = vf_rules();
    no_issuer.issuer.clear();
    EXPECT_FALSE(duet::auth::make_jwt_verifier(io.get_executor(), "http://127.0.0.1:1/jwks", no_issuer));
    duet::auth::token_rules no_audience = vf_rules();
    no_audience.audience.clear();
    EXPECT_FALSE(duet::auth::make_jwt_verifier(io.get_executor(), "http://127.0.0.1:1/jwks", no_audience));
    EXPECT_FALSE(duet::auth::make_jwt_verifier(io.get_executor(), "not a url", vf_rules()));
}

TEST(IntrospectionTokenVerifier, AnActiveAnswerIsReusedWithoutAnotherRequest) {
    auth_test_support::scripted_server endpoint("/introspect");
    endpoint.answer("{\"active\":true,\"iss\":\"https://as.example\",\"aud\":\"https://mcp.example/mcp\","
                    "\"sub\":\"opaque-user\",\"scope\":\"mcp\",\"exp\":" +
                    std::to_string(unix_now() + 600) + "}");
    asio::io_context io;
    duet::auth::introspection_options o;
    o.client_id = "mcp-server";
    o.client_secret = "shh";
    auto v = duet::auth::make_introspection_token_verifier(io.get_executor(), endpoint.url(), vf_rules(), o);
    ASSERT_TRUE(v) << v.error().message;
    EXPECT_FALSE((*v)->verify_now("opaque-1")) << "never asked about: only the endpoint can tell";
    auto first = verify_async(io, *v, "opaque-1");
    ASSERT_TRUE(first) << first.error().description;
    EXPECT_EQ((*first)->subject, "opaque-user");
    auto cached = (*v)->verify_now("opaque-1");
    ASSERT_TRUE(cached && *cached);
    EXPECT_EQ(endpoint.requests(), 1);
}

TEST(IntrospectionTokenVerifier, AnEndpointThatIsDownMakesTheServerUnavailable) {
    std::string url;
    {
        auth_test_support::scripted_server gone("/introspect");
        url = gone.url();
    }
    asio::io_context io;
    duet::auth::introspection_options o;
    o.client_id = "mcp-server";
    auto v = duet::auth::make_introspection_token_verifier(io.get_executor(), url, vf_rules(), o);
    ASSERT_TRUE(v) << v.error().message;
    auto refused = verify_async(io, *v, "opaque-1");
    ASSERT_FALSE(refused);
    EXPECT_TRUE(refused.error().server_unavailable);
}

TEST(StaticTokenVerifier, TakesExactlyItsTokenAsACallerWithItsScopes) {
    auto v = duet::auth::make_static_token_verifier("s3cret-Token_1~", {"mcp"});
    ASSERT_TRUE(v) << v.error().message;
    auto good = (*v)->verify_now("s3cret-Token_1~");
    ASSERT_TRUE(good && *good);
    EXPECT_EQ((**good)->subject, "static-token");
    EXPECT_EQ((**good)->scopes, std::vector<std::string>{"mcp"});
    for (std::string bad : {"s3cret-Token_1", "s3cret-Token_1~~", "S3cret-Token_1~", ""}) {
        auto r = (*v)->verify_now(bad);
        ASSERT_TRUE(r);
        EXPECT_FALSE(*r) << bad;
    }
}

TEST(StaticTokenVerifier, ATokenNoBearerHeaderCouldCarryIsAUsageError) {
    EXPECT_FALSE(duet::auth::make_static_token_verifier(""));
    EXPECT_FALSE(duet::auth::make_static_token_verifier("two words"));
    EXPECT_FALSE(duet::auth::make_static_token_verifier("quote\"d"));
    EXPECT_FALSE(duet::auth::make_static_token_verifier("==="));
    EXPECT_TRUE(duet::auth::make_static_token_verifier("abc=="));
}

} // namespace verifiers_suite
