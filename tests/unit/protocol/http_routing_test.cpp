// Tests for duet/protocol/http_routing.hpp: where a Streamable HTTP request goes by era and session, before
// admission decides the request itself.
//
// Requirements: ERA-POLICY "HTTP routing of one POST" (a version claim is modern whatever session id it
// carries; initialize opens a new session; an unknown session id gets 404 so that the client re-initializes;
// without claim or session admission answers) and "Consequences" (a stale session id on a modern request is
// ignored, never 404); DIGEST §9 (GET and DELETE only within a session, 405 without one) and §0 (batches only
// in a 2025-03-26 session).
#include <duet/protocol/http_routing.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace {

using namespace duet::protocol;
using route_claim = version_claim::kind;
using route_lookup = session_lookup;

// ---- route_post -------------------------------------------------------------------------------------------

struct route_post_row {
    std::string_view name;
    route_claim c;
    std::string_view method;
    route_lookup session;
    era_support eras;
    post_route expected;
};

void PrintTo(route_post_row const& row, std::ostream* os) {
    *os << row.name;
}

class RoutePost : public ::testing::TestWithParam<route_post_row> {};

TEST_P(RoutePost, GoesWherePolicySays) {
    auto const& row = GetParam();
    EXPECT_EQ(route_post(row.c, row.method, row.session, row.eras), row.expected);
}

constexpr auto route_both = era_support::both;
constexpr auto route_legacy_only = era_support::legacy_only;
constexpr auto route_modern_only = era_support::modern_only;

constexpr route_post_row route_post_rows[] = {
    // A claim (any kind: admission refuses a malformed one) makes the request modern, whatever session it
    // names.
    {"ClaimIsModern", route_claim::text, "tools/list", route_lookup::none, route_both, post_route::modern},
    {"NonStringClaimIsModern", route_claim::not_string, "tools/list", route_lookup::none, route_both,
     post_route::modern},
    {"ClaimInLiveSessionIsModern", route_claim::text, "tools/list", route_lookup::live, route_both,
     post_route::modern},
    {"ClaimWithStaleSessionIsModernNotNotFound", route_claim::text, "tools/list", route_lookup::unknown,
     route_both, post_route::modern},
    {"ClaimedInitializeIsModern", route_claim::text, "initialize", route_lookup::none, route_both,
     post_route::modern},
    {"ClaimOnModernOnlyServerIsModern", route_claim::text, "tools/list", route_lookup::none,
     route_modern_only, post_route::modern},
    {"ClaimedListenIsAModernListen", route_claim::text, "subscriptions/listen", route_lookup::none,
     route_both, post_route::modern_listen},
    {"ClaimedListenWithStaleSessionIsAModernListen", route_claim::text, "subscriptions/listen",
     route_lookup::unknown, route_both, post_route::modern_listen},
    // A legacy-only server reads no claim: the request routes as if it had none.
    {"LegacyOnlyIgnoresClaimWithoutSession", route_claim::text, "tools/list", route_lookup::none,
     route_legacy_only, post_route::sessionless},
    {"LegacyOnlyIgnoresClaimInSession", route_claim::text, "tools/list", route_lookup::live,
     route_legacy_only, post_route::in_session},
    {"LegacyOnlyIgnoresClaimWithStaleSession", route_claim::text, "tools/list", route_lookup::unknown,
     route_legacy_only, post_route::unknown_session},
    {"LegacyOnlyClaimedListenIsSessionless", route_claim::text, "subscriptions/listen", route_lookup::none,
     route_legacy_only, post_route::sessionless},
    {"LegacyOnlyClaimedInitializeOpensSession", route_claim::text, "initialize", route_lookup::none,
     route_legacy_only, post_route::open_session},
    // initialize opens a new session: without one, beside a live one, or after an unknown one.
    {"InitializeOpensSession", route_claim::absent, "initialize", route_lookup::none, route_both,
     post_route::open_session},
    {"InitializeInLiveSessionOpensAnother", route_claim::absent, "initialize", route_lookup::live, route_both,
     post_route::open_session},
    {"InitializeWithUnknownSessionOpensSession", route_claim::absent, "initialize", route_lookup::unknown,
     route_both, post_route::open_session},
    {"InitializeOnModernOnlyServerGoesToAdmission", route_claim::absent, "initialize", route_lookup::none,
     route_modern_only, post_route::open_session},
    // Without a claim: the session decides.
    {"UnknownSessionIsNotFound", route_claim::absent, "tools/list", route_lookup::unknown, route_both,
     post_route::unknown_session},
    {"UnknownSessionPingIsNotFound", route_claim::absent, "ping", route_lookup::unknown, route_both,
     post_route::unknown_session},
    {"UnknownSessionListenIsNotFound", route_claim::absent, "subscriptions/listen", route_lookup::unknown,
     route_both, post_route::unknown_session},
    {"UnknownSessionOnModernOnlyServerIsNotFound", route_claim::absent, "tools/list", route_lookup::unknown,
     route_modern_only, post_route::unknown_session},
    {"LiveSessionServes", route_claim::absent, "tools/list", route_lookup::live, route_both,
     post_route::in_session},
    {"LiveSessionServesPing", route_claim::absent, "ping", route_lookup::live, route_both,
     post_route::in_session},
    {"NoSessionIsSessionless", route_claim::absent, "tools/list", route_lookup::none, route_both,
     post_route::sessionless},
    {"NoSessionPingIsSessionless", route_claim::absent, "ping", route_lookup::none, route_both,
     post_route::sessionless},
    {"UnclaimedListenIsSessionless", route_claim::absent, "subscriptions/listen", route_lookup::none,
     route_both, post_route::sessionless},
    {"NoSessionOnModernOnlyServerIsSessionless", route_claim::absent, "tools/list", route_lookup::none,
     route_modern_only, post_route::sessionless},
};

INSTANTIATE_TEST_SUITE_P(HttpRouting, RoutePost, ::testing::ValuesIn(route_post_rows),
                         [](auto const& p) { return std::string(p.param.name); });

// ---- notifications and responses, batches, GET and DELETE -------------------------------------------------

TEST(HttpRouting, PostedMessageGoesToItsSessionOrIsAcceptedOrRefused) {
    EXPECT_EQ(route_post_message(route_lookup::live), message_route::to_session);
    EXPECT_EQ(route_post_message(route_lookup::none), message_route::accept);
    EXPECT_EQ(route_post_message(route_lookup::unknown), message_route::unknown_session);
}

// One row per session lookup and per version the session may have negotiated.
TEST(HttpRouting, BatchIsServedOnlyInA20250326Session) {
    for (auto const& row : version_registry) {
        SCOPED_TRACE(row.name);
        auto const live = row.id == version::v2025_03_26 ? batch_route::in_session : batch_route::not_allowed;
        EXPECT_EQ(route_batch(route_lookup::live, row.id), live);
        EXPECT_EQ(route_batch(route_lookup::none, row.id), batch_route::not_allowed);
        EXPECT_EQ(route_batch(route_lookup::unknown, row.id), batch_route::unknown_session);
    }
    EXPECT_EQ(route_batch(route_lookup::live, std::nullopt), batch_route::not_allowed);
    EXPECT_EQ(route_batch(route_lookup::none, std::nullopt), batch_route::not_allowed);
    EXPECT_EQ(route_batch(route_lookup::unknown, std::nullopt), batch_route::unknown_session);
}

TEST(HttpRouting, GetAndDeleteNeedALiveSession) {
    EXPECT_EQ(route_session_request(route_lookup::live), session_request_route::in_session);
    EXPECT_EQ(route_session_request(route_lookup::unknown), session_request_route::unknown_session);
    EXPECT_EQ(route_session_request(route_lookup::none), session_request_route::no_session);
}

// ---- the refusals -----------------------------------------------------------------------------------------

TEST(HttpRouting, UnknownSessionIsInvalidRequestWith404) {
    auto const r = unknown_session_rejection();
    EXPECT_EQ(r.http_status, 404u);
    EXPECT_EQ(r.error.code, static_cast<std::int32_t>(errc::invalid_request));
    EXPECT_NE(r.error.message.find("send initialize"), std::string::npos) << r.error.message;
}

TEST(HttpRouting, BatchNotAllowedIsInvalidRequestNamingTheVersion) {
    auto const e = batch_not_allowed();
    EXPECT_EQ(e.code, static_cast<std::int32_t>(errc::invalid_request));
    EXPECT_NE(e.message.find("2025-03-26"), std::string::npos) << e.message;
}

} // namespace
