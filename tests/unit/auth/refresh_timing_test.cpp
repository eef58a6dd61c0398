// When a kept token is refreshed before it is sent: near its expiry, and for tokens that live shorter than
// the margin, past half their lifetime (else every request of a short-lived token's life refreshes it).
//
// Requirement tags: RFC 6749 §1.5 (refresh tokens), §5.1 (expires_in); the MCP authorization spec, "Token
// Handling" (clients refresh expired tokens).
#include <duet/auth/credentials.hpp>

#include <gtest/gtest.h>

namespace {

using namespace duet::auth;
using std::chrono::seconds;
using clock_type = std::chrono::system_clock;

token_set lasting(seconds lifetime, bool known_start, clock_type::time_point start) {
    token_set t;
    t.expires_at = start + lifetime;
    if (known_start)
        t.obtained_at = start;
    return t;
}

TEST(RefreshTiming, ATokenWithoutExpiryIsNeverDue) {
    token_set t;
    EXPECT_FALSE(t.due_for_refresh(seconds(60)));
}

TEST(RefreshTiming, ALongLivedTokenIsDueOnlyWithinTheMargin) {
    auto const start = clock_type::now();
    auto const t = lasting(seconds(3600), true, start);
    EXPECT_FALSE(t.due_for_refresh(seconds(60), start + seconds(3000)));
    EXPECT_TRUE(t.due_for_refresh(seconds(60), start + seconds(3541)));
    EXPECT_TRUE(t.due_for_refresh(seconds(60), start + seconds(4000))) << "expired";
}

TEST(RefreshTiming, AShortLivedTokenIsDuePastHalfItsLifetimeNotAtOnce) {
    auto const start = clock_type::now();
    auto const t = lasting(seconds(10), true, start);
    EXPECT_FALSE(t.due_for_refresh(seconds(60), start)) << "fresh: a 60 s margin would refresh it at once";
    EXPECT_FALSE(t.due_for_refresh(seconds(60), start + seconds(4)));
    EXPECT_TRUE(t.due_for_refresh(seconds(60), start + seconds(6)));
}

TEST(RefreshTiming, AShortLivedTokenOfUnknownAgeFallsBackToTheMargin) {
    auto const start = clock_type::now();
    auto const t = lasting(seconds(10), false, start);
    EXPECT_TRUE(t.due_for_refresh(seconds(60), start));
}

} // namespace
