// The in-memory credential store: tokens kept per protected resource, registrations per issuer, each save
// replacing what was kept under its key and nothing else; and a token's expiry margin.
//
// Requirement tags: MCP 2025-11-25 basic/authorization "Token Audience Binding and Validation" (tokens are
// for one resource) and "Dynamic Client Registration" (a client id belongs to the authorization server that
// issued it); RFC 6749 §5.1 (expires_in).
#include <duet/auth/credentials.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace duet::auth;
using namespace std::chrono_literals;

auto const stored_at = std::chrono::system_clock::time_point(std::chrono::seconds(1'750'000'000));

token_set tokens_for(std::string const& resource, std::string const& access) {
    token_set t;
    t.issuer = "https://auth.example";
    t.resource = resource;
    t.access_token = access;
    t.refresh_token = "rt-" + access;
    t.expires_at = stored_at + 1h;
    t.scopes = {"files:read", "files:write"};
    return t;
}

client_registration registration_at(std::string const& issuer, std::string const& id) {
    client_registration r;
    r.issuer = issuer;
    r.client_id = id;
    r.client_secret = "secret-" + id;
    r.token_endpoint_auth_method = "client_secret_post";
    r.secret_expires_at = stored_at + 24h;
    return r;
}

void expect_same_tokens(token_set const& a, token_set const& b) {
    EXPECT_EQ(a.issuer, b.issuer);
    EXPECT_EQ(a.resource, b.resource);
    EXPECT_EQ(a.access_token, b.access_token);
    EXPECT_EQ(a.token_type, b.token_type);
    EXPECT_EQ(a.refresh_token, b.refresh_token);
    EXPECT_EQ(a.expires_at, b.expires_at);
    EXPECT_EQ(a.scopes, b.scopes);
}

TEST(MemoryStore, EmptyStoreHoldsNothing) {
    memory_store s;
    auto const t = s.load_tokens("https://mcp.example/mcp");
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(*t, std::nullopt);
    auto const r = s.load_registration("https://auth.example");
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(*r, std::nullopt);
    EXPECT_TRUE(s.erase_tokens("https://mcp.example/mcp").has_value());
}

TEST(MemoryStore, TokensRoundTripEveryField) {
    memory_store s;
    auto const saved = tokens_for("https://mcp.example/mcp", "at-1");
    ASSERT_TRUE(s.save_tokens(saved).has_value());
    auto const loaded = s.load_tokens("https://mcp.example/mcp");
    ASSERT_TRUE(loaded.has_value());
    ASSERT_TRUE(loaded->has_value());
    expect_same_tokens(**loaded, saved);
}

TEST(MemoryStore, TokensAreKeptPerResource) {
    memory_store s;
    ASSERT_TRUE(s.save_tokens(tokens_for("https://mcp.example/a", "at-a")).has_value());
    ASSERT_TRUE(s.save_tokens(tokens_for("https://mcp.example/b", "at-b")).has_value());
    ASSERT_TRUE(s.save_tokens(tokens_for("https://mcp.example/a", "at-a2")).has_value());
    auto const a = s.load_tokens("https://mcp.example/a");
    auto const b = s.load_tokens("https://mcp.example/b");
    ASSERT_TRUE(a.has_value() && a->has_value());
    ASSERT_TRUE(b.has_value() && b->has_value());
    EXPECT_EQ((*a)->access_token, "at-a2");
    EXPECT_EQ((*a)->refresh_token, "rt-at-a2");
    EXPECT_EQ((*b)->access_token, "at-b");
    // A resource is a key as given: no prefix or trailing-slash matching.
    EXPECT_EQ(*s.load_tokens("https://mcp.example"), std::nullopt);
    EXPECT_EQ(*s.load_tokens("https://mcp.example/a/"), std::nullopt);
}

TEST(MemoryStore, EraseForgetsOnlyThatResource) {
    memory_store s;
    ASSERT_TRUE(s.save_tokens(tokens_for("https://mcp.example/a", "at-a")).has_value());
    ASSERT_TRUE(s.save_tokens(tokens_for("https://mcp.example/b", "at-b")).has_value());
    ASSERT_TRUE(s.erase_tokens("https://mcp.example/a").has_value());
    EXPECT_EQ(*s.load_tokens("https://mcp.example/a"), std::nullopt);
    auto const b = s.load_tokens("https://mcp.example/b");
    ASSERT_TRUE(b.has_value() && b->has_value());
    EXPECT_EQ((*b)->access_token, "at-b");
    ASSERT_TRUE(s.save_tokens(tokens_for("https://mcp.example/a", "at-a3")).has_value());
    EXPECT_EQ((*s.load_tokens("https://mcp.example/a"))->access_token, "at-a3");
}

TEST(MemoryStore, RegistrationsRoundTripAndAreKeptPerIssuer) {
    memory_store s;
    ASSERT_TRUE(s.save_registration(registration_at("https://auth.example", "id-1")).has_value());
    ASSERT_TRUE(s.save_registration(registration_at("https://other.example", "id-2")).has_value());
    ASSERT_TRUE(s.save_registration(registration_at("https://auth.example", "id-3")).has_value());
    auto const first = s.load_registration("https://auth.example");
    ASSERT_TRUE(first.has_value() && first->has_value());
    EXPECT_EQ((*first)->issuer, "https://auth.example");
    EXPECT_EQ((*first)->client_id, "id-3");
    EXPECT_EQ((*first)->client_secret, "secret-id-3");
    EXPECT_EQ((*first)->token_endpoint_auth_method, "client_secret_post");
    EXPECT_EQ((*first)->secret_expires_at, stored_at + 24h);
    auto const second = s.load_registration("https://other.example");
    ASSERT_TRUE(second.has_value() && second->has_value());
    EXPECT_EQ((*second)->client_id, "id-2");
    EXPECT_EQ(*s.load_registration("https://auth.example/"), std::nullopt);
}

TEST(MemoryStore, TokensAndRegistrationsDoNotShareKeys) {
    memory_store s;
    ASSERT_TRUE(s.save_registration(registration_at("https://same.example", "id")).has_value());
    EXPECT_EQ(*s.load_tokens("https://same.example"), std::nullopt);
    ASSERT_TRUE(s.save_tokens(tokens_for("https://same.example", "at")).has_value());
    EXPECT_EQ((*s.load_registration("https://same.example"))->client_id, "id");
}

TEST(MemoryStore, ExpiresWithinMargin) {
    token_set t;
    EXPECT_FALSE(t.expires_within(24h, stored_at)); // no expiry: never
    t.expires_at = stored_at + 30s;
    EXPECT_TRUE(t.expires_within(60s, stored_at));
    EXPECT_TRUE(t.expires_within(30s, stored_at));
    EXPECT_FALSE(t.expires_within(29s, stored_at));
    t.expires_at = stored_at - 1s;
    EXPECT_TRUE(t.expires_within(0s, stored_at));
}

} // namespace
