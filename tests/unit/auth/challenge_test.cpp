// The challenges of a WWW-Authenticate field: the scheme, then one token68 or a comma-separated list of
// name=value parameters (quoted strings unescaped), several challenges per field and across fields, empty
// list elements skipped, and a malformed challenge stopping the parse without losing those read before it.
//
// Requirement tags: RFC 9110 §11.6.1 "WWW-Authenticate" and §11.2/§11.3 (challenge, token68, auth-param
// grammar, case-insensitive scheme and parameter names) https://www.rfc-editor.org/rfc/rfc9110#section-11;
// RFC 9110 §5.6.1.2 (empty list elements), §5.6.3 (BWS), §5.6.4 (quoted-string, quoted-pair); RFC 6750 §3
// (the Bearer challenge's error/scope) https://www.rfc-editor.org/rfc/rfc6750#section-3; RFC 9728 §5.1
// (resource_metadata); MCP 2025-11-25 basic/authorization "Protected Resource Metadata Discovery".
#include <duet/auth/challenge.hpp>

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace {

using duet::auth::challenge;
using duet::auth::find_bearer;
using duet::auth::parse_challenges;

using param_list = std::vector<std::pair<std::string, std::string>>;

struct expected_challenge {
    std::string scheme;
    std::string token68;
    param_list params;
};

// ---------------------------------------------------------------------------------------------------------------
// RFC 9110 §11.6.1: what each field list parses to, and whether the parse reports an error.

struct challenge_parse_case {
    std::string name;
    std::vector<std::string> fields;
    std::vector<expected_challenge> expected; ///< for a malformed input: those read before the fault
    bool malformed;

    friend void PrintTo(challenge_parse_case const& row, std::ostream* os) { *os << row.name; }
};

class ChallengeParse : public ::testing::TestWithParam<challenge_parse_case> {};

TEST_P(ChallengeParse, ReadsEveryChallengeBeforeAnyFault) {
    auto const& row = GetParam();
    auto const list = parse_challenges(row.fields);
    if (row.malformed) {
        EXPECT_TRUE(list.error.starts_with("WWW-Authenticate: ")) << "error: \"" << list.error << "\"";
    } else {
        EXPECT_EQ(list.error, "");
    }
    ASSERT_EQ(list.challenges.size(), row.expected.size());
    for (std::size_t i = 0; i < row.expected.size(); ++i) {
        SCOPED_TRACE("challenge " + std::to_string(i));
        EXPECT_EQ(list.challenges[i].scheme, row.expected[i].scheme);
        EXPECT_EQ(list.challenges[i].token68, row.expected[i].token68);
        EXPECT_EQ(list.challenges[i].params, row.expected[i].params);
    }
}

using CP = challenge_parse_case;
using EC = expected_challenge;

INSTANTIATE_TEST_SUITE_P(
    Challenge, ChallengeParse,
    ::testing::Values(
        // RFC 6750 §3 and RFC 9728 §5.1: the Bearer challenge an MCP server sends
        CP{"BearerWithErrorScopeAndResourceMetadata",
           {R"(Bearer error="insufficient_scope", scope="files:read files:write", )"
            R"(resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp")"},
           {EC{"Bearer",
               "",
               {{"error", "insufficient_scope"},
                {"scope", "files:read files:write"},
                {"resource_metadata", "https://mcp.example/.well-known/oauth-protected-resource/mcp"}}}},
           false},
        CP{"SchemeAlone", {"Bearer"}, {EC{"Bearer", "", {}}}, false},
        CP{"UnquotedTokenValues",
           {"Bearer error=invalid_token, realm=mcp"},
           {EC{"Bearer", "", {{"error", "invalid_token"}, {"realm", "mcp"}}}},
           false},
        CP{"EmptyQuotedValue", {R"(Bearer realm="")"}, {EC{"Bearer", "", {{"realm", ""}}}}, false},
        // several challenges: in one field, and across fields (one list, RFC 9110 §5.3)
        CP{"TwoChallengesInOneField",
           {R"(Basic realm="x", Bearer scope="a b")"},
           {EC{"Basic", "", {{"realm", "x"}}}, EC{"Bearer", "", {{"scope", "a b"}}}},
           false},
        CP{"BareSchemeThenAnother",
           {R"(Bearer, Basic realm="r")"},
           {EC{"Bearer", "", {}}, EC{"Basic", "", {{"realm", "r"}}}},
           false},
        CP{"ChallengesAcrossFields",
           {R"(Basic realm="x")", R"(Bearer realm="y", scope="s")"},
           {EC{"Basic", "", {{"realm", "x"}}}, EC{"Bearer", "", {{"realm", "y"}, {"scope", "s"}}}},
           false},
        // RFC 9110 §5.6.4: quoted-pair unescapes any character; commas inside quotes are not separators
        CP{"EscapedQuotesAndCommaInsideQuotes",
           {R"(Bearer error_description="say \"no\", then leave", scope="a")"},
           {EC{"Bearer", "", {{"error_description", R"(say "no", then leave)"}, {"scope", "a"}}}},
           false},
        CP{"EscapedBackslash", {R"(Bearer realm="a\\b")"}, {EC{"Bearer", "", {{"realm", R"(a\b)"}}}}, false},
        CP{"CommaInsideQuotesIsNotANewChallenge",
           {R"(Bearer realm="a, Basic b")"},
           {EC{"Bearer", "", {{"realm", "a, Basic b"}}}},
           false},
        // RFC 9110 §11.2 token68
        CP{"Token68WithTwoPads", {"Negotiate abc=="}, {EC{"Negotiate", "abc==", {}}}, false},
        CP{"Token68WithOnePad", {"Negotiate YWI="}, {EC{"Negotiate", "YWI=", {}}}, false},
        CP{"Token68WithoutPad", {"Negotiate a+b/c.d_e~f-g"}, {EC{"Negotiate", "a+b/c.d_e~f-g", {}}}, false},
        CP{"Token68ThenBearer",
           {R"(Negotiate YWI=, Bearer realm="x")"},
           {EC{"Negotiate", "YWI=", {}}, EC{"Bearer", "", {{"realm", "x"}}}},
           false},
        // RFC 9110 §11.1: names are kept as sent (compared case-insensitively, see below)
        CP{"CaseKeptAsSent", {R"(bEaReR Scope="a")"}, {EC{"bEaReR", "", {{"Scope", "a"}}}}, false},
        // RFC 9110 §5.6.1.2: empty list elements; §5.6.3: BWS around '='
        CP{"EmptyListElements",
           {R"(, ,Bearer realm="x",, ,scope="y" ,, Basic realm="z",)"},
           {EC{"Bearer", "", {{"realm", "x"}, {"scope", "y"}}}, EC{"Basic", "", {{"realm", "z"}}}},
           false},
        CP{"EmptyField", {""}, {}, false}, CP{"OnlyCommas", {" , ,"}, {}, false},
        CP{"NoFields", {}, {}, false},
        CP{"SpacesAroundEquals",
           {"Bearer realm = \"x\" ,scope\t=\tplain"},
           {EC{"Bearer", "", {{"realm", "x"}, {"scope", "plain"}}}},
           false},
        // malformed: an error, and the challenges read before the fault kept
        CP{"UnterminatedQuoteKeepsEarlierChallenge",
           {R"(Basic realm="x", Bearer error="oops)"},
           {EC{"Basic", "", {{"realm", "x"}}}},
           true},
        CP{"BackslashAtTheEnd", {R"(Bearer realm="abc\)"}, {}, true},
        CP{"MissingValueAfterParameters",
           {R"(Bearer realm="x", scope=)"},
           {EC{"Bearer", "", {{"realm", "x"}}}},
           true},
        CP{"MissingCommaBetweenParameters",
           {R"(Basic realm="x", Bearer realm="y" scope="z")"},
           {EC{"Basic", "", {{"realm", "x"}}}},
           true},
        CP{"QuotedStringWhereSchemeBelongs", {R"("Bearer" realm="x")"}, {}, true},
        CP{"GarbageAfterScheme", {"Bearer @@@"}, {}, true},
        CP{"EqualsRightAfterScheme", {"Bearer=x"}, {}, true},
        CP{"Token68FollowedByJunk", {"Negotiate abc== def"}, {}, true},
        CP{"FaultInSecondFieldKeepsFirstAndStops",
           {R"(Basic realm="x")", R"(Bearer realm="never closed)", R"(Digest realm="z")"},
           {EC{"Basic", "", {{"realm", "x"}}}},
           true}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// RFC 9110 §11.1 and §11.2: the scheme and parameter names are case-insensitive.

// RFC 9110 §11.2 token68 = RFC 6750 §2.1 b64token: what a bearer token may be.
TEST(Challenge, Token68IsItsCharactersThenPadding) {
    for (std::string_view good : {"a", "AZaz09-._~+/", "abc=", "abc==", "x.y.z"})
        EXPECT_TRUE(duet::auth::is_token68(good)) << good;
    for (std::string_view bad : {"", "=", "==", "a b", "a=b", "a\"b", "a,b", "a\tb", "\xC3\xA9"})
        EXPECT_FALSE(duet::auth::is_token68(bad)) << bad;
}

TEST(Challenge, ParamLookupIgnoresCase) {
    auto const list = parse_challenges(
        std::vector<std::string>{R"(Bearer Resource_Metadata="https://m.example/prm", scope="a")"});
    ASSERT_EQ(list.challenges.size(), 1u);
    auto const& c = list.challenges.front();
    EXPECT_EQ(c.param("resource_metadata"), "https://m.example/prm");
    EXPECT_EQ(c.param("SCOPE"), "a");
    EXPECT_EQ(c.param("error"), std::nullopt);
    EXPECT_TRUE(c.is("bearer"));
    EXPECT_TRUE(c.is("BEARER"));
    EXPECT_FALSE(c.is("Basic"));
    EXPECT_FALSE(c.is("Bearer2"));
}

TEST(Challenge, ParamLookupReturnsTheFirstOfRepeatedNames) {
    auto const list = parse_challenges(std::vector<std::string>{R"(Bearer scope="first", SCOPE="second")"});
    ASSERT_EQ(list.challenges.size(), 1u);
    EXPECT_EQ(list.challenges.front().param("scope"), "first");
}

TEST(Challenge, FindBearerReturnsTheFirstBearerWhateverItsCase) {
    auto const list = parse_challenges(
        std::vector<std::string>{R"(Basic realm="x", bearer scope="one")", R"(Bearer scope="two")"});
    ASSERT_EQ(list.error, "");
    ASSERT_EQ(list.challenges.size(), 3u);
    auto const* bearer = find_bearer(list.challenges);
    ASSERT_NE(bearer, nullptr);
    EXPECT_EQ(bearer, &list.challenges[1]);
    EXPECT_EQ(bearer->param("scope"), "one");
}

TEST(Challenge, FindBearerFindsNothingWithoutOne) {
    auto const list = parse_challenges(std::vector<std::string>{R"(Basic realm="x", Negotiate abc==)"});
    ASSERT_EQ(list.challenges.size(), 2u);
    EXPECT_EQ(find_bearer(list.challenges), nullptr);
    EXPECT_EQ(find_bearer(std::vector<challenge>{}), nullptr);
}

TEST(Challenge, FindBearerFindsOneReadBeforeAFault) {
    auto const list =
        parse_challenges(std::vector<std::string>{R"(Bearer scope="a", resource_metadata="x")", "Basic @@"});
    EXPECT_NE(list.error, "");
    auto const* bearer = find_bearer(list.challenges);
    ASSERT_NE(bearer, nullptr);
    EXPECT_EQ(bearer->param("resource_metadata"), "x");
}

} // namespace
