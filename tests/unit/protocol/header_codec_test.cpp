// The MCP HTTP header value encoding: values unsafe as plain ASCII travel as `=?base64?<UTF-8 b64>?=`, and
// receivers decode before comparing with the body.
//
// Requirement tags: DIGEST §9 "Header encoding" (MCP 2026-07-28 basic/transports/streamable-http,
// https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http); base64 alphabet
// and padding: RFC 4648 §4 https://www.rfc-editor.org/rfc/rfc4648#section-4
#include <duet/protocol/header_codec.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace {

using namespace duet::protocol;
using namespace std::string_literals;

// A header value no HTTP field may carry raw (RFC 9110 §5.5: visible ASCII, space and tab only).
bool is_header_safe(std::string_view v) {
    for (unsigned char c : v)
        if ((c < 0x20 && c != '\t') || c >= 0x7F)
            return false;
    return true;
}

// ---------------------------------------------------------------------------------------------------------------
// DIGEST §9: encode, then decode, gives the value back; only unsafe values are encoded.

struct round_trip_case {
    std::string name;
    std::string value;
    bool needs_encoding;

    friend void PrintTo(round_trip_case const& row, std::ostream* os) { *os << row.name; }
};

class HeaderCodecRoundTrip : public ::testing::TestWithParam<round_trip_case> {};

TEST_P(HeaderCodecRoundTrip, DecodesToTheOriginalValue) {
    auto const& c = GetParam();
    EXPECT_EQ(needs_header_encoding(c.value), c.needs_encoding);
    auto const header = encode_header_value(c.value);
    EXPECT_TRUE(is_header_safe(header)) << header;
    if (c.needs_encoding) {
        EXPECT_TRUE(header.starts_with("=?base64?")) << header;
        EXPECT_TRUE(header.ends_with("?=")) << header;
    } else {
        EXPECT_EQ(header, c.value);
    }
    EXPECT_EQ(decode_header_value(header), c.value);
}

using T = round_trip_case;

INSTANTIATE_TEST_SUITE_P(
    HeaderCodec, HeaderCodecRoundTrip,
    ::testing::Values(
        // safe as they are
        T{"Empty", "", false}, T{"PlainAscii", "us-west-2", false}, T{"InnerSpaces", "New York", false},
        T{"AllVisibleAscii", "!\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~", false},
        T{"SentinelPrefixOnly", "=?base64?abc", false}, T{"SentinelSuffixOnly", "abc?=", false},
        T{"SentinelPiecesOverlapping", "=?base64?=", false},
        // unsafe: non-ASCII UTF-8 (characters of 2, 3 and 4 bytes)
        T{"Latin1Accent", "h\xc3\xa9llo", true}, T{"EuroSign", "\xe2\x82\xac", true},
        T{"Japanese", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", true}, T{"Emoji", "\xf0\x9f\x98\x80", true},
        // unsafe: spaces at the edges
        T{"LeadingSpace", " lead", true}, T{"TrailingSpace", "trail ", true}, T{"OnlySpace", " ", true},
        T{"LeadingTab", "\tx", true},
        // unsafe: control characters
        T{"ControlChar", "\x01", true}, T{"CrLfInjection", "a\r\nX-Evil: 1", true},
        T{"InnerTab", "a\tb", true}, T{"NulByte", "a\0b"s, true}, T{"Delete", "\x7f", true},
        // unsafe: looks like the sentinel, so it must not be mistaken for an encoded value
        T{"LooksLikeSentinel", "=?base64?aGk=?=", true}, T{"LooksLikeEmptySentinel", "=?base64?\?=", true},
        T{"LooksLikeSentinelWithJunk", "=?base64?not base64!?=", true}),
    [](auto const& row) { return row.param.name; });

// The header_codec.hpp example and one value per reason to encode, checked byte for byte.
TEST(HeaderCodec, EncodesUtf8AsBase64Sentinel) {
    EXPECT_EQ(encode_header_value("h\xc3\xa9llo"), "=?base64?aMOpbGxv?=");
    EXPECT_EQ(encode_header_value(" lead"), "=?base64?IGxlYWQ=?=");
    EXPECT_EQ(encode_header_value("\x01"), "=?base64?AQ==?=");
    EXPECT_EQ(encode_header_value("=?base64?aGk=?="), "=?base64?PT9iYXNlNjQ/YUdrPT89?=");
}

// ---------------------------------------------------------------------------------------------------------------
// RFC 4648 §10 test vectors, through the sentinel.

struct vector_case {
    std::string name;
    std::string base64;
    std::string plain;

    friend void PrintTo(vector_case const& row, std::ostream* os) { *os << row.name; }
};

class HeaderCodecRfc4648 : public ::testing::TestWithParam<vector_case> {};

TEST_P(HeaderCodecRfc4648, DecodesTestVector) {
    EXPECT_EQ(decode_header_value("=?base64?" + GetParam().base64 + "?="), GetParam().plain);
}

INSTANTIATE_TEST_SUITE_P(HeaderCodec, HeaderCodecRfc4648,
                         ::testing::Values(vector_case{"Empty", "", ""}, vector_case{"F", "Zg==", "f"},
                                           vector_case{"Fo", "Zm8=", "fo"}, vector_case{"Foo", "Zm9v", "foo"},
                                           vector_case{"Foob", "Zm9vYg==", "foob"},
                                           vector_case{"Fooba", "Zm9vYmE=", "fooba"},
                                           vector_case{"Foobar", "Zm9vYmFy", "foobar"},
                                           vector_case{"PlusAndSlash", "+/8=", "\xfb\xff"}),
                         [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// DIGEST §9 "invalid characters" -> the header is rejected (the caller answers 400 + -32020).

struct reject_case {
    std::string name;
    std::string header;

    friend void PrintTo(reject_case const& row, std::ostream* os) { *os << row.name; }
};

class HeaderCodecRejects : public ::testing::TestWithParam<reject_case> {};

TEST_P(HeaderCodecRejects, MalformedHeaderDecodesToNothing) {
    EXPECT_EQ(decode_header_value(GetParam().header), std::nullopt);
}

using X = reject_case;

INSTANTIATE_TEST_SUITE_P(HeaderCodec, HeaderCodecRejects,
                         ::testing::Values(
                             // malformed base64 inside the sentinel
                             X{"LengthNotMultipleOfFour", "=?base64?Zm9?="}, X{"SingleChar", "=?base64?Z?="},
                             X{"CharOutsideAlphabet", "=?base64?Zm9*?="},
                             X{"UrlSafeAlphabet", "=?base64?-_8=?="}, X{"SpaceInside", "=?base64?Zm 9v?="},
                             X{"DataAfterPadding", "=?base64?Zg=v?="},
                             X{"PaddingThenMoreQuads", "=?base64?Zg==Zm9v?="},
                             X{"ThreePads", "=?base64?Z===?="}, X{"AllPadding", "=?base64?====?="},
                             X{"MissingPadding", "=?base64?Zg?="},
                             // raw characters no header may hold
                             X{"RawNonAscii", "h\xc3\xa9llo"}, X{"RawControlChar", "a\x01"},
                             X{"RawNewline", "a\nb"}, X{"RawCarriageReturn", "a\rb"}, X{"RawNul", "a\0b"s},
                             X{"RawDelete", "a\x7f"}, X{"NonAsciiInsideSentinel", "=?base64?Zm9v\xc3\xa9?="}),
                         [](auto const& row) { return row.param.name; });

// DIGEST §9: a value that needs no encoding is taken as it is.
TEST(HeaderCodec, PlainValuePassesThroughDecode) {
    EXPECT_EQ(decode_header_value("plain"), "plain");
    EXPECT_EQ(decode_header_value("tools/call"), "tools/call");
    EXPECT_EQ(decode_header_value(""), "");
}

// ---------------------------------------------------------------------------------------------------------------
// DIGEST §9 "Names are case-insensitive; values are case-sensitive."

struct iequals_case {
    std::string name;
    std::string a;
    std::string b;
    bool equal;

    friend void PrintTo(iequals_case const& row, std::ostream* os) { *os << row.name; }
};

class HeaderCodecIequals : public ::testing::TestWithParam<iequals_case> {};

TEST_P(HeaderCodecIequals, ComparesAsciiIgnoringCase) {
    auto const& c = GetParam();
    EXPECT_EQ(iequals(c.a, c.b), c.equal);
    EXPECT_EQ(iequals(c.b, c.a), c.equal);
}

using I = iequals_case;

INSTANTIATE_TEST_SUITE_P(
    HeaderCodec, HeaderCodecIequals,
    ::testing::Values(I{"Identical", "Mcp-Method", "Mcp-Method", true},
                      I{"DifferentCase", "MCP-Protocol-Version", "mcp-protocol-version", true},
                      I{"BothEmpty", "", "", true}, I{"DigitsAndPunctuation", "X-1_2.3", "x-1_2.3", true},
                      I{"DifferentLength", "Mcp-Name", "Mcp-Names", false},
                      I{"EmptyAndNonEmpty", "", "a", false},
                      I{"DifferentLetters", "Mcp-Name", "Mcp-Nome", false},
                      // 0x40/0x60 and 0x5B/0x7B differ by the case bit but are not letters
                      I{"AtAndBacktick", "@", "`", false}, I{"BracketAndBrace", "[", "{", false},
                      // non-ASCII bytes compare exactly
                      I{"NonAsciiExact", "\xc3\xa9", "\xc3\xa9", true},
                      I{"NonAsciiCaseNotFolded", "\xc3\xa9", "\xc3\x89", false}),
    [](auto const& row) { return row.param.name; });

} // namespace
