// The resource server's token introspection against a tiny HTTP server on loopback (a thread with a listening
// socket, answering each POST with the status and JSON the test chose, recording the requests): an active
// token verifies with its scope, subject and client; inactive, foreign-audience, foreign-issuer and expired
// answers are refused; the request carries HTTP Basic client authentication and the form; active answers are
// cached until their exp; oversized tokens are refused unasked; a failing server is marked unavailable; one
// request is shared by concurrent verifications of one token.
//
// Requirement tags: RFC 7662 §2.1 (request), §2.2 (response), §4 (caching); RFC 6749 §2.3.1 (Basic client
// authentication); RFC 6750 §3.1 (invalid_token).
#include <duet/auth/introspection.hpp>

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

namespace introspection_suite {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using duet::auth::introspection_options;
using duet::auth::introspection_verifier;
using verify_result = boost::system::result<duet::auth::verified_token, duet::auth::token_rejection>;

// The authorization server's introspection endpoint; inactive until a test says otherwise.
struct introspection_server : auth_test_support::scripted_server {
    introspection_server() : scripted_server("/introspect") { answer("{\"active\":false}"); }
};

long long in_seconds(std::chrono::seconds from_now) {
    return std::chrono::duration_cast<std::chrono::seconds>(
               (std::chrono::system_clock::now() + from_now).time_since_epoch())
        .count();
}

std::string active_answer(long long exp, std::string const& aud = "\"https://mcp.example/mcp\"",
                          std::string const& iss = "https://as.example") {
    return "{\"active\":true,\"iss\":\"" + iss + "\",\"aud\":" + aud +
           ",\"sub\":\"user-1\",\"client_id\":\"app-7\",\"scope\":\"read write read\",\"exp\":" +
           std::to_string(exp) + "}";
}

duet::auth::token_rules in_rules() {
    duet::auth::token_rules r;
    r.issuer = "https://as.example";
    r.audience = "https://mcp.example/mcp";
    r.leeway = 0s;
    return r;
}

introspection_options in_options() {
    introspection_options o;
    o.client_id = "mcp server";
    o.client_secret = "s3cret:x";
    o.request_timeout = 5s;
    return o;
}

asio::awaitable<verify_result> introspect_with(std::shared_ptr<introspection_verifier> v, std::string token) {
    auto rules = in_rules();
    co_return co_await v->async_verify(std::move(token), std::move(rules));
}

verify_result introspect_now(asio::io_context& io, std::shared_ptr<introspection_verifier> const& v,
                             std::string const& token) {
    return auth_test_support::run_on(io, introspect_with(v, token));
}

std::shared_ptr<introspection_verifier> verifier_for(asio::io_context& io, std::string const& url,
                                                     introspection_options o = in_options()) {
    auto made = introspection_verifier::make(io.get_executor(), url, std::move(o));
    EXPECT_TRUE(made) << made.error().message;
    return made ? *made : nullptr;
}

TEST(Introspection, ActiveTokenVerifiesWithScopeSubjectAndClient) {
    introspection_server server;
    server.answer(active_answer(in_seconds(600s)));
    asio::io_context io;
    auto v = verifier_for(io, server.url());
    auto token = introspect_now(io, v, "opaque token/+=");
    ASSERT_TRUE(token) << token.error().description;
    EXPECT_EQ(token->subject, "user-1");
    EXPECT_EQ(token->client_id, "app-7");
    EXPECT_EQ(token->issuer, "https://as.example");
    EXPECT_EQ(token->scopes, (std::vector<std::string>{"read", "write"}));
    ASSERT_TRUE(token->expires_at);
    EXPECT_TRUE(token->claims.contains("active"));

    auto const seen = server.seen();
    ASSERT_EQ(seen.size(), 1U);
    auto const& request = seen[0];
    EXPECT_EQ(request.rfind("POST /introspect ", 0), 0U) << request;
    // "mcp+server:s3cret%3Ax", form-encoded then base64 (RFC 6749 §2.3.1).
    EXPECT_NE(request.find("Authorization: Basic bWNwK3NlcnZlcjpzM2NyZXQlM0F4\r\n"), std::string::npos)
        << request;
    EXPECT_NE(request.find("application/x-www-form-urlencoded"), std::string::npos);
    auto const body = request.substr(request.find("\r\n\r\n") + 4);
    EXPECT_EQ(body, "token=opaque+token%2F%2B%3D&token_type_hint=access_token");
}

TEST(Introspection, InactiveTokenIsRefusedAndNotCached) {
    introspection_server server;
    server.answer("{\"active\":false}");
    asio::io_context io;
    auto v = verifier_for(io, server.url());
    auto token = introspect_now(io, v, "t1");
    ASSERT_FALSE(token);
    EXPECT_EQ(token.error().description, "the token is not active");
    EXPECT_FALSE(token.error().server_unavailable);
    ASSERT_FALSE(introspect_now(io, v, "t1"));
    EXPECT_EQ(server.requests(), 2);
    EXPECT_EQ(v->cached(), 0U);
}

TEST(Introspection, WrongAudienceIsRefused) {
    introspection_server server;
    server.answer(active_answer(in_seconds(600s), "[\"https://other.example\",\"x\"]"));
    asio::io_context io;
    auto v = verifier_for(io, server.url());
    auto token = introspect_now(io, v, "t1");
    ASSERT_FALSE(token);
    EXPECT_NE(token.error().description.find("not meant for"), std::string::npos);
    EXPECT_FALSE(token.error().server_unavailable);
}

TEST(Introspection, AudienceArrayContainingTheResourceVerifies) {
    introspection_server server;
    server.answer(active_answer(in_seconds(600s), "[\"https://other.example\",\"https://mcp.example/mcp\"]"));
    asio::io_context io;
    auto v = verifier_for(io, server.url());
    auto token = introspect_now(io, v, "t1");
    EXPECT_TRUE(token) << token.error().description;
}

TEST(Introspection, WrongIssuerIsRefused) {
    introspection_server server;
    server.answer(active_answer(in_seconds(600s), "\"https://mcp.example/mcp\"", "https://evil.example"));
    asio::io_context io;
    auto v = verifier_for(io, server.url());
    auto token = introspect_now(io, v, "t1");
    ASSERT_FALSE(token);
    EXPECT_NE(token.error().description.find("issued by"), std::string::npos);
}

TEST(Introspection, ExpiredTokenIsRefusedEvenWhenActive) {
    introspection_server server;
    server.answer(active_answer(in_seconds(-60s)));
    asio::io_context io;
    auto v = verifier_for(io, server.url());
    auto token = introspect_now(io, v, "t1");
    ASSERT_FALSE(token);
    EXPECT_EQ(token.error().description, "the token has expired");
    EXPECT_EQ(v->cached(), 0U);
}

TEST(Introspection, SecondVerifyIsServedFromTheCache) {
    introspection_server server;
    server.answer(active_answer(in_seconds(600s)));
    asio::io_context io;
    auto v = verifier_for(io, server.url());
    ASSERT_TRUE(introspect_now(io, v, "t1"));
    auto again = introspect_now(io, v, "t1");
    ASSERT_TRUE(again) << again.error().description;
    EXPECT_EQ(again->subject, "user-1");
    EXPECT_EQ(server.requests(), 1);
    EXPECT_EQ(v->request_count(), 1U);
    // Another token is asked about.
    ASSERT_TRUE(introspect_now(io, v, "t2"));
    EXPECT_EQ(server.requests(), 2);
}

TEST(Introspection, CacheEndsAtTheTokensExp) {
    introspection_server server;
    // exp is whole seconds: at least 1 s ahead, at most 2 s.
    server.answer(active_answer(in_seconds(2s)));
    asio::io_context io;
    auto v = verifier_for(io, server.url());
    ASSERT_TRUE(introspect_now(io, v, "t1"));
    ASSERT_TRUE(introspect_now(io, v, "t1"));
    EXPECT_EQ(server.requests(), 1);
    std::this_thread::sleep_for(2100ms);
    auto late = introspect_now(io, v, "t1");
    EXPECT_EQ(server.requests(), 2);
    ASSERT_FALSE(late);
    EXPECT_EQ(late.error().description, "the token has expired");
}

TEST(Introspection, CacheIsBoundedDroppingTheOldest) {
    introspection_server server;
    server.answer(active_answer(in_seconds(600s)));
    asio::io_context io;
    auto o = in_options();
    o.max_entries = 2;
    auto v = verifier_for(io, server.url(), o);
    ASSERT_TRUE(introspect_now(io, v, "a"));
    ASSERT_TRUE(introspect_now(io, v, "b"));
    ASSERT_TRUE(introspect_now(io, v, "c"));
    EXPECT_EQ(v->cached(), 2U);
    ASSERT_TRUE(introspect_now(io, v, "c"));
    EXPECT_EQ(server.requests(), 3);
    ASSERT_TRUE(introspect_now(io, v, "a"));
    EXPECT_EQ(server.requests(), 4);
}

TEST(Introspection, OversizedTokenIsRefusedWithoutARequest) {
    introspection_server server;
    server.answer(active_answer(in_seconds(600s)));
    asio::io_context io;
    auto o = in_options();
    o.max_token_bytes = 16;
    auto v = verifier_for(io, server.url(), o);
    auto token = introspect_now(io, v, std::string(17, 'x'));
    ASSERT_FALSE(token);
    EXPECT_FALSE(token.error().server_unavailable);
    EXPECT_EQ(server.requests(), 0);
    EXPECT_EQ(v->request_count(), 0U);
}

TEST(Introspection, ServerDownIsUnavailable) {
    introspection_server server;
    auto const url = server.url();
    server.stop();
    asio::io_context io;
    auto v = verifier_for(io, url);
    auto token = introspect_now(io, v, "t1");
    ASSERT_FALSE(token);
    EXPECT_TRUE(token.error().server_unavailable);
    EXPECT_NE(token.error().description.find("introspection endpoint failed"), std::string::npos);
}

TEST(Introspection, Non200IsUnavailableAndNotCached) {
    introspection_server server;
    server.answer("{\"error\":\"oops\"}", 500);
    asio::io_context io;
    auto v = verifier_for(io, server.url());
    auto token = introspect_now(io, v, "t1");
    ASSERT_FALSE(token);
    EXPECT_TRUE(token.error().server_unavailable);
    EXPECT_NE(token.error().description.find("introspection endpoint failed"), std::string::npos);
    EXPECT_NE(token.error().description.find("500"), std::string::npos);
    server.answer(active_answer(in_seconds(600s)));
    EXPECT_TRUE(introspect_now(io, v, "t1"));
    EXPECT_EQ(server.requests(), 2);
}

TEST(Introspection, NotJsonIsUnavailable) {
    introspection_server server;
    server.answer("<html>no</html>");
    asio::io_context io;
    auto v = verifier_for(io, server.url());
    auto token = introspect_now(io, v, "t1");
    ASSERT_FALSE(token);
    EXPECT_TRUE(token.error().server_unavailable);
}

TEST(Introspection, ConcurrentVerificationsShareOneRequest) {
    introspection_server server;
    server.answer(active_answer(in_seconds(600s)));
    asio::io_context io;
    auto v = verifier_for(io, server.url());
    std::string const token = "same";
    auto a = asio::co_spawn(io, introspect_with(v, token), asio::use_future);
    auto b = asio::co_spawn(io, introspect_with(v, token), asio::use_future);
    auto c = asio::co_spawn(io, introspect_with(v, token), asio::use_future);
    io.run();
    EXPECT_TRUE(a.get());
    EXPECT_TRUE(b.get());
    EXPECT_TRUE(c.get());
    EXPECT_EQ(server.requests(), 1);
}

TEST(Introspection, MakeRefusesMissingClientIdAndBadUrl) {
    asio::io_context io;
    introspection_options o;
    auto no_id = introspection_verifier::make(io.get_executor(), "https://as.example/introspect", o);
    ASSERT_FALSE(no_id);
    EXPECT_EQ(no_id.error().code, duet::client::errc::usage);
    auto bad_url = introspection_verifier::make(io.get_executor(), "not a url", in_options());
    EXPECT_FALSE(bad_url);
}

} // namespace introspection_suite
