// Tests for duet/client/negotiation.hpp: the pure decisions of the client side of ERA-POLICY.
//
// Requirements: ERA-POLICY "Client side" (legacy offers 2025-11-25; a modern version on a legacy connect is a
// usage error; a modern or unknown InitializeResult version is rejected; a counter-offer is adopted; -32022
// is retried with a version from data.supported; recognised modern errors), seed handshake-cap-pr, DIGEST §4
// (resultType: missing = complete, unknown = invalid; requestState echoed byte-exact, omitted when none).
#include <duet/client/negotiation.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

namespace {

using namespace duet::client;
using duet::protocol::version;
namespace json = boost::json;

TEST(LegacyOffer, DefaultsToLatestHandshakeVersion) {
    auto const v = legacy_offer(std::nullopt);
    ASSERT_TRUE(v);
    EXPECT_EQ(*v, version::v2025_11_25);
}

TEST(LegacyOffer, KeepsAPinnedHandshakeVersion) {
    auto const v = legacy_offer(version::v2025_03_26);
    ASSERT_TRUE(v);
    EXPECT_EQ(*v, version::v2025_03_26);
}

TEST(LegacyOffer, RefusesAModernVersionAsUsageError) {
    auto const v = legacy_offer(version::v2026_07_28);
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().code, errc::usage);
    EXPECT_NE(v.error().message.find("2026-07-28"), std::string::npos);
}

TEST(ModernOffer, RefusesAHandshakeVersionAsUsageError) {
    EXPECT_EQ(*modern_offer(std::nullopt), version::v2026_07_28);
    auto const v = modern_offer(version::v2025_11_25);
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().code, errc::usage);
}

TEST(InitializeResult, CounterOfferIsAdopted) {
    auto const v = accepted_handshake_version(json::parse(R"({"protocolVersion":"2025-06-18"})"));
    ASSERT_TRUE(v);
    EXPECT_EQ(*v, version::v2025_06_18);
}

TEST(InitializeResult, ModernVersionIsRejected) {
    auto const v = accepted_handshake_version(json::parse(R"({"protocolVersion":"2026-07-28"})"));
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().code, errc::version_rejected);
}

TEST(InitializeResult, UnknownVersionIsRejected) {
    auto const v = accepted_handshake_version(json::parse(R"({"protocolVersion":"2099-01-01"})"));
    ASSERT_FALSE(v);
    EXPECT_EQ(v.error().code, errc::version_rejected);
}

TEST(InitializeResult, MissingOrNonStringVersionIsAViolation) {
    EXPECT_EQ(accepted_handshake_version(json::parse("{}")).error().code, errc::protocol_violation);
    EXPECT_EQ(accepted_handshake_version(json::parse(R"({"protocolVersion":20251125})")).error().code,
              errc::protocol_violation);
    EXPECT_EQ(accepted_handshake_version(json::parse("[]")).error().code, errc::protocol_violation);
}

struct modern_error_row {
    std::string_view name;
    std::int32_t code;
    unsigned status;
    bool modern;
};

void PrintTo(modern_error_row const& r, std::ostream* os) {
    *os << r.name;
}

class ModernError : public ::testing::TestWithParam<modern_error_row> {};

TEST_P(ModernError, IsRecognisedExactlyAsEraPolicySays) {
    auto const& row = GetParam();
    EXPECT_EQ(is_modern_error(duet::jsonrpc::error_object{row.code, "x", nullptr}, row.status), row.modern);
}

INSTANTIATE_TEST_SUITE_P(ClientSide, ModernError,
                         ::testing::Values(modern_error_row{"HeaderMismatch", -32020, 400, true},
                                           modern_error_row{"MissingCapability", -32021, 400, true},
                                           modern_error_row{"UnsupportedVersion", -32022, 400, true},
                                           modern_error_row{"UnsupportedVersionOnStdio", -32022, 0, true},
                                           modern_error_row{"MethodNotFoundWith404", -32601, 404, true},
                                           modern_error_row{"MethodNotFoundWith200", -32601, 200, false},
                                           modern_error_row{"MethodNotFoundOnStdio", -32601, 0, false},
                                           modern_error_row{"InvalidParams", -32602, 400, false},
                                           modern_error_row{"LegacyServerError", -32000, 400, false},
                                           modern_error_row{"OldDraftNumber", -32001, 400, false}),
                         [](auto const& row) { return std::string(row.param.name); });

TEST(RetryVersion, PicksAModernVersionFromSupported) {
    EXPECT_EQ(retry_version(json::parse(R"({"supported":["2025-11-25","2026-07-28"],"requested":"x"})")),
              version::v2026_07_28);
    EXPECT_FALSE(retry_version(json::parse(R"({"supported":["2025-11-25"]})")));
    EXPECT_FALSE(retry_version(json::parse(R"({"supported":"2026-07-28"})")));
    EXPECT_FALSE(retry_version(json::parse(R"({"supported":["2099-01-01", 5]})")));
    EXPECT_FALSE(retry_version(nullptr));
}

TEST(HandshakeFallback, PicksTheNewestHandshakeVersion) {
    EXPECT_EQ(handshake_fallback(json::parse(R"({"supported":["2025-03-26","2025-06-18"]})")),
              version::v2025_06_18);
    EXPECT_FALSE(handshake_fallback(json::parse(R"({"supported":["2026-07-28"]})")));
}

TEST(ResultKind, MissingMeansCompleteAndUnknownIsInvalid) {
    EXPECT_EQ(kind_of(json::object{}), result_kind::complete);
    EXPECT_EQ(kind_of(json::object{{"resultType", "complete"}}), result_kind::complete);
    EXPECT_EQ(kind_of(json::object{{"resultType", "input_required"}}), result_kind::input_required);
    EXPECT_EQ(kind_of(json::object{{"resultType", "task"}}), result_kind::task); // the tasks extension
    EXPECT_EQ(kind_of(json::object{{"resultType", "later"}}), result_kind::invalid);
    EXPECT_EQ(kind_of(json::object{{"resultType", 1}}), result_kind::invalid);
}

TEST(RetryParams, EchoesRequestStateByteExactAndReplacesThePreviousRound) {
    json::object original{
        {"name", "t"}, {"arguments", {{"a", 1}}}, {"requestState", "old"}, {"inputResponses", {{"k", 1}}}};
    json::value const state = "  {\"nonce\":\"\\u00e9\"}  ";
    auto const p = retry_params(original, json::object{{"confirm", {{"action", "accept"}}}}, &state);
    EXPECT_EQ(p.at("requestState"), state);
    EXPECT_EQ(p.at("inputResponses"), (json::object{{"confirm", {{"action", "accept"}}}}));
    EXPECT_EQ(p.at("name"), "t");
}

TEST(RetryParams, OmitsRequestStateWhenTheServerSentNone) {
    json::object original{{"name", "t"}, {"requestState", "stale"}};
    auto const p = retry_params(original, json::object{{"k", json::object{}}}, nullptr);
    EXPECT_FALSE(p.contains("requestState"));
    EXPECT_TRUE(p.contains("inputResponses"));
}

} // namespace
