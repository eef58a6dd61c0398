// The encodings the OAuth flow writes and reads in URLs and bodies: application/x-www-form-urlencoded for
// token requests and authorization URLs, percent-encoding of a query value, and a redirect's query read back
// ('+' a space, %XX a byte; a name given twice noticed).
//
// Requirement tags: WHATWG URL §5.2 "application/x-www-form-urlencoded serializing" (ALPHA / DIGIT / "*-._"
// kept, space as '+') https://url.spec.whatwg.org/#urlencoded-serializing and §5.1 (parsing: '+' and %XX);
// RFC 3986 §2.3 (unreserved characters) and §2.1 (upper-case hex) https://www.rfc-editor.org/rfc/rfc3986;
// RFC 6749 Appendix B (form encoding of OAuth parameters); RFC 9110 §5.1 (field names case-insensitive).
#include "auth/fetch.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace duet::auth::detail;
using field_list = std::vector<std::pair<std::string, std::string>>;

// ---------------------------------------------------------------------------------------------------------------
// WHATWG URL §5.2

struct form_encode_case {
    std::string name;
    field_list fields;
    std::string encoded;

    friend void PrintTo(form_encode_case const& row, std::ostream* os) { *os << row.name; }
};

class FetchFormEncode : public ::testing::TestWithParam<form_encode_case> {};

TEST_P(FetchFormEncode, EscapesAllButAlnumAndStarDashDotUnderscore) {
    EXPECT_EQ(form_encode(GetParam().fields), GetParam().encoded);
}

using FE = form_encode_case;

INSTANTIATE_TEST_SUITE_P(
    Fetch, FetchFormEncode,
    ::testing::Values(
        FE{"NoFields", {}, ""},
        FE{"OneField", {{"grant_type", "client_credentials"}}, "grant_type=client_credentials"},
        FE{"FieldsJoinedByAmpersand", {{"a", "1"}, {"b", "2"}, {"c", ""}}, "a=1&b=2&c="},
        FE{"SpaceAsPlus", {{"scope", "files:read files:write"}}, "scope=files%3Aread+files%3Awrite"},
        FE{"KeptCharacters", {{"k", "AZaz09*-._"}}, "k=AZaz09*-._"},
        FE{"TildeEscaped", {{"k", "~"}}, "k=%7E"},
        FE{"ReservedEscaped", {{"k", "a+b&c=d/e?f#g%h"}}, "k=a%2Bb%26c%3Dd%2Fe%3Ff%23g%25h"},
        FE{"UrlValue", {{"resource", "https://mcp.example/mcp"}}, "resource=https%3A%2F%2Fmcp.example%2Fmcp"},
        FE{"NamesEscapedToo", {{"a b", "c"}}, "a+b=c"},
        FE{"NonAsciiBytesUpperHex", {{"k", "h\xc3\xa9"}}, "k=h%C3%A9"},
        FE{"ControlBytes", {{"k", std::string("\0\n", 2)}}, "k=%00%0A"}),
    [](auto const& row) { return row.param.name; });

// RFC 3986 §2.3: only unreserved characters stay as they are; a space is %20 here, never '+'.
TEST(Fetch, UrlEncodeKeepsOnlyUnreservedCharacters) {
    EXPECT_EQ(url_encode(""), "");
    EXPECT_EQ(url_encode("AZaz09-._~"), "AZaz09-._~");
    EXPECT_EQ(url_encode("a b"), "a%20b");
    EXPECT_EQ(url_encode("https://h/p?q=1&r"), "https%3A%2F%2Fh%2Fp%3Fq%3D1%26r");
    EXPECT_EQ(url_encode("*+"), "%2A%2B");
    EXPECT_EQ(url_encode("\xc3\xa9"), "%C3%A9");
}

// ---------------------------------------------------------------------------------------------------------------
// WHATWG URL §5.1: a query's value for a name, decoded.

struct query_value_case {
    std::string name;
    std::string url;
    std::string key;
    std::optional<std::string> value;
    bool several;

    friend void PrintTo(query_value_case const& row, std::ostream* os) { *os << row.name; }
};

class FetchQueryValue : public ::testing::TestWithParam<query_value_case> {};

TEST_P(FetchQueryValue, FindsAndDecodesTheFirstValue) {
    auto const& row = GetParam();
    bool several = !row.several; // must be overwritten
    EXPECT_EQ(query_value(row.url, row.key, &several), row.value);
    EXPECT_EQ(several, row.several);
    EXPECT_EQ(query_value(row.url, row.key), row.value);
}

using QV = query_value_case;

INSTANTIATE_TEST_SUITE_P(
    Fetch, FetchQueryValue,
    ::testing::Values(QV{"Plain", "http://h/cb?code=abc&state=xyz", "state", "xyz", false},
                      QV{"FirstField", "http://h/cb?code=abc&state=xyz", "code", "abc", false},
                      QV{"PlusIsSpace", "http://h/cb?d=a+b", "d", "a b", false},
                      QV{"PercentDecoded", "http://h/cb?d=a%2Bb%20c%3d", "d", "a+b c=", false},
                      QV{"PercentAtTheEnd", "http://h/cb?d=%41", "d", "A", false},
                      QV{"MalformedEscapeKept", "http://h/cb?d=100%zz%4", "d", "100%zz%4", false},
                      QV{"UrlValueDecoded", "http://h/cb?iss=https%3A%2F%2Fauth.example%2F", "iss",
                         "https://auth.example/", false},
                      QV{"EncodedNameMatches", "http://h/cb?my%20key=v", "my key", "v", false},
                      QV{"EmptyValue", "http://h/cb?code=&state=s", "code", "", false},
                      QV{"NoEqualsSign", "http://h/cb?flag&state=s", "flag", "", false},
                      QV{"Absent", "http://h/cb?code=abc", "state", std::nullopt, false},
                      QV{"NoQuery", "http://h/cb", "code", std::nullopt, false},
                      QV{"PrefixOfANameIsNotIt", "http://h/cb?codes=1&xcode=2", "code", std::nullopt, false},
                      QV{"NameCaseMatters", "http://h/cb?Code=1", "code", std::nullopt, false},
                      QV{"FragmentIgnored", "http://h/cb?code=abc#state=xyz", "state", std::nullopt, false},
                      QV{"ValueEndsAtFragment", "http://h/cb?code=abc#x", "code", "abc", false},
                      QV{"TwiceFirstKeptAndNoticed", "http://h/cb?state=a&code=c&state=b", "state", "a",
                         true},
                      QV{"TwiceSameValueNoticed", "http://h/cb?state=a&state=a", "state", "a", true},
                      QV{"EmptyPiecesSkipped", "http://h/cb?&&state=a&", "state", "a", false}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// RFC 9110 §5.1: field names are case-insensitive.

TEST(Fetch, ResponseHeaderLookupIgnoresCase) {
    http_response r;
    r.headers = {{"WWW-Authenticate", "Basic realm=\"x\""},
                 {"Content-Type", "application/json"},
                 {"www-authenticate", "Bearer scope=\"a\""}};
    EXPECT_EQ(r.header("content-type"), "application/json");
    EXPECT_EQ(r.header("Www-Authenticate"), "Basic realm=\"x\"");
    EXPECT_EQ(r.header("Location"), std::nullopt);
    EXPECT_EQ(r.headers_named("WWW-AUTHENTICATE"),
              (std::vector<std::string>{"Basic realm=\"x\"", "Bearer scope=\"a\""}));
    EXPECT_TRUE(r.headers_named("Location").empty());
}

} // namespace
