// Tests for duet/protocol/envelope.hpp: reading the version claim out of `params._meta` and checking the rest
// of a modern request's envelope.
//
// Requirements: ERA-POLICY step 1 (`_meta` present but not an object counts as absent), step 2 (claim not a
// string), step 5 (clientCapabilities must be an object, clientInfo optional); DIGEST §2 (the
// RequestMetaObject keys and their types; an unrecognised logLevel SHOULD get -32602; progressToken is string
// or integer).
#include <duet/protocol/envelope.hpp>
#include <duet/protocol/meta_keys.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <string_view>

namespace {

using namespace duet::protocol;
namespace json = boost::json;

// ---- read_version_claim -----------------------------------------------------------------------------------

struct claim_row {
    std::string_view name;
    std::string_view params; // JSON
    version_claim::kind what;
    std::string_view text;
};

void PrintTo(claim_row const& row, std::ostream* os) {
    *os << row.name << ' ' << row.params;
}

class VersionClaim : public ::testing::TestWithParam<claim_row> {};

// ERA-POLICY steps 1-2: the claim is absent, not a string, or a string (whatever it says).
TEST_P(VersionClaim, ReadsTheProtocolVersionKey) {
    auto const params = json::parse(GetParam().params);
    auto const claim = read_version_claim(params);
    EXPECT_EQ(claim.what, GetParam().what);
    if (GetParam().what == version_claim::kind::text) {
        EXPECT_EQ(claim.text, GetParam().text);
    }
}

using k = version_claim::kind;

INSTANTIATE_TEST_SUITE_P(
    Envelope, VersionClaim,
    ::testing::Values(
        claim_row{"ParamsAbsent", "null", k::absent, ""}, claim_row{"ParamsArray", "[1,2]", k::absent, ""},
        claim_row{"MetaAbsent", R"({"name":"x"})", k::absent, ""},
        claim_row{"MetaNumberCountsAsAbsent", R"({"_meta":5})", k::absent, ""},
        claim_row{"MetaStringCountsAsAbsent", R"({"_meta":"x"})", k::absent, ""},
        claim_row{"MetaArrayCountsAsAbsent", R"({"_meta":[]})", k::absent, ""},
        claim_row{"MetaNullCountsAsAbsent", R"({"_meta":null})", k::absent, ""},
        claim_row{"MetaWithoutVersionKey", R"({"_meta":{"progressToken":1}})", k::absent, ""},
        claim_row{"VersionNumberIsNotString",
                  R"({"_meta":{"io.modelcontextprotocol/protocolVersion":20260728}})", k::not_string, ""},
        claim_row{"VersionNullIsNotString", R"({"_meta":{"io.modelcontextprotocol/protocolVersion":null}})",
                  k::not_string, ""},
        claim_row{"VersionObjectIsNotString", R"({"_meta":{"io.modelcontextprotocol/protocolVersion":{}}})",
                  k::not_string, ""},
        claim_row{"ModernVersionIsText",
                  R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}})", k::text,
                  "2026-07-28"},
        claim_row{"LegacyVersionIsText",
                  R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}})", k::text,
                  "2025-11-25"},
        claim_row{"EmptyStringIsText", R"({"_meta":{"io.modelcontextprotocol/protocolVersion":""}})", k::text,
                  ""},
        claim_row{"OtherPrefixIsAbsent", R"({"_meta":{"protocolVersion":"2026-07-28"}})", k::absent, ""}),
    [](auto const& p) { return std::string(p.param.name); });

// ---- read_envelope ----------------------------------------------------------------------------------------

json::value params_with_meta(std::string_view meta_json) {
    return json::object{{"_meta", json::parse(meta_json)}};
}

// DIGEST §2: clientCapabilities is required (`{}` = none); clientInfo, logLevel and progressToken are
// optional.
TEST(Envelope, MinimalEnvelopeHasCapabilitiesOnly) {
    auto const env =
        read_envelope(params_with_meta(R"({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{}})"),
                      version::v2026_07_28);
    ASSERT_TRUE(env.has_value()) << env.error().message;
    EXPECT_EQ(env->version, version::v2026_07_28);
    EXPECT_TRUE(env->client_capabilities.empty());
    EXPECT_FALSE(env->client_info.has_value());
    EXPECT_FALSE(env->log_level.has_value());
    EXPECT_TRUE(env->progress_token.is_null());
}

TEST(Envelope, FullEnvelopeKeepsEveryKey) {
    auto const env =
        read_envelope(params_with_meta(R"({"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{"sampling":{}},
        "io.modelcontextprotocol/clientInfo":{"name":"c","version":"1","title":"C"},
        "io.modelcontextprotocol/logLevel":"warning",
        "progressToken":"tok-1", "traceparent":"00-abc-def-01"})"),
                      version::v2026_07_28);
    ASSERT_TRUE(env.has_value()) << env.error().message;
    EXPECT_EQ(json::value(env->client_capabilities), json::parse(R"({"sampling":{}})"));
    ASSERT_TRUE(env->client_info.has_value());
    EXPECT_EQ(json::value(*env->client_info), json::parse(R"({"name":"c","version":"1","title":"C"})"));
    EXPECT_EQ(env->log_level, log_level::warning);
    EXPECT_EQ(env->progress_token, json::value("tok-1"));
}

TEST(Envelope, IntegerProgressTokenIsKept) {
    auto const env = read_envelope(params_with_meta(R"({"io.modelcontextprotocol/clientCapabilities":{},
        "progressToken":42})"),
                                   version::v2026_07_28);
    ASSERT_TRUE(env.has_value());
    EXPECT_EQ(env->progress_token, json::value(42));
}

struct envelope_error_row {
    std::string_view name;
    std::string_view meta; // JSON of params._meta
    std::string_view key;  // the key the error names
};

void PrintTo(envelope_error_row const& row, std::ostream* os) {
    *os << row.name << ' ' << row.meta;
}

class EnvelopeError : public ::testing::TestWithParam<envelope_error_row> {};

// DIGEST §2: each malformed key is -32602 naming the key in both message and data.
TEST_P(EnvelopeError, IsInvalidParamsNamingTheKey) {
    auto const env = read_envelope(params_with_meta(GetParam().meta), version::v2026_07_28);
    ASSERT_FALSE(env.has_value());
    EXPECT_EQ(env.error().code, -32602);
    EXPECT_NE(env.error().message.find(GetParam().key), std::string::npos) << env.error().message;
    EXPECT_EQ(env.error().data, (json::value(json::object{{"key", GetParam().key}})));
}

constexpr std::string_view caps_key = meta_key::client_capabilities;
constexpr std::string_view info_key = meta_key::client_info;
constexpr std::string_view level_key = meta_key::log_level;
constexpr std::string_view token_key = meta_key::progress_token;

INSTANTIATE_TEST_SUITE_P(
    Envelope, EnvelopeError,
    ::testing::Values(
        envelope_error_row{"ClientCapabilitiesMissing",
                           R"({"io.modelcontextprotocol/protocolVersion":"2026-07-28"})", caps_key},
        envelope_error_row{"ClientCapabilitiesString",
                           R"({"io.modelcontextprotocol/clientCapabilities":"x"})", caps_key},
        envelope_error_row{"ClientCapabilitiesArray", R"({"io.modelcontextprotocol/clientCapabilities":[]})",
                           caps_key},
        envelope_error_row{"ClientCapabilitiesNull", R"({"io.modelcontextprotocol/clientCapabilities":null})",
                           caps_key},
        envelope_error_row{"ClientInfoNotAnObject", R"({"io.modelcontextprotocol/clientCapabilities":{},
            "io.modelcontextprotocol/clientInfo":"c"})",
                           info_key},
        envelope_error_row{"ClientInfoWithoutVersion", R"({"io.modelcontextprotocol/clientCapabilities":{},
            "io.modelcontextprotocol/clientInfo":{"name":"c"}})",
                           info_key},
        envelope_error_row{"UnknownLogLevel", R"({"io.modelcontextprotocol/clientCapabilities":{},
            "io.modelcontextprotocol/logLevel":"verbose"})",
                           level_key},
        envelope_error_row{"LogLevelWrongCase", R"({"io.modelcontextprotocol/clientCapabilities":{},
            "io.modelcontextprotocol/logLevel":"Info"})",
                           level_key},
        envelope_error_row{"LogLevelNotString", R"({"io.modelcontextprotocol/clientCapabilities":{},
            "io.modelcontextprotocol/logLevel":3})",
                           level_key},
        envelope_error_row{"ProgressTokenBoolean", R"({"io.modelcontextprotocol/clientCapabilities":{},
            "progressToken":true})",
                           token_key},
        envelope_error_row{"ProgressTokenFraction", R"({"io.modelcontextprotocol/clientCapabilities":{},
            "progressToken":1.5})",
                           token_key},
        // Several bad members, listed in the reverse of the order they are checked in: the first checked
        // names the error, whatever the member order (the members are read in one pass).
        envelope_error_row{"BadTokenLevelAndInfoNameInfo", R"({"progressToken":true,
            "io.modelcontextprotocol/logLevel":"x","io.modelcontextprotocol/clientInfo":1,
            "io.modelcontextprotocol/clientCapabilities":{}})",
                           info_key},
        envelope_error_row{"BadTokenAndLevelNameLevel", R"({"progressToken":true,
            "io.modelcontextprotocol/logLevel":"x","io.modelcontextprotocol/clientCapabilities":{}})",
                           level_key},
        envelope_error_row{"BadEverythingNamesCapabilities", R"({"progressToken":true,
            "io.modelcontextprotocol/logLevel":"x","io.modelcontextprotocol/clientInfo":1,
            "io.modelcontextprotocol/clientCapabilities":7})",
                           caps_key}),
    [](auto const& p) { return std::string(p.param.name); });

// Schema LoggingLevel: the eight RFC 5424 severities, least severe first; names are exact.
TEST(Envelope, LogLevelsParseInSeverityOrder) {
    constexpr std::string_view names[] = {"debug", "info",     "notice", "warning",
                                          "error", "critical", "alert",  "emergency"};
    for (std::size_t i = 0; i < std::size(names); ++i) {
        auto const parsed = parse_log_level(names[i]);
        ASSERT_TRUE(parsed.has_value()) << names[i];
        EXPECT_EQ(static_cast<std::size_t>(*parsed), i) << names[i];
        EXPECT_EQ(to_string(*parsed), names[i]);
    }
    EXPECT_LT(log_level::debug, log_level::emergency);
    for (std::string_view const bad : {"", "warn", "Info", "fatal", "debug "})
        EXPECT_FALSE(parse_log_level(bad).has_value()) << bad;
}

} // namespace
