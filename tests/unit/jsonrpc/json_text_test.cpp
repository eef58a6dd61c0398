// The JSON text Duet writes: doubles as JavaScript writes them (the shortest digits that read back the same,
// in JSON.stringify's layout), everything else byte for byte as boost::json::serialize writes it.
//
// Requirement tags: the contract of include/duet/jsonrpc/json_text.hpp; the layout is ECMA-262
// Number::toString (https://tc39.es/ecma262/#sec-numeric-types-number-tostring). The expected texts of the
// double table were printed by node's JSON.stringify and are written here by hand.
#include <duet/jsonrpc/json_text.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <string_view>

namespace {

using duet::jsonrpc::append_json_string;
using duet::jsonrpc::append_json_text;
using duet::jsonrpc::to_json_text;
namespace json = boost::json;

std::string text_of(double d) {
    return to_json_text(json::value(d));
}

// ---------------------------------------------------------------------------------------------------------------
// Doubles, against what JavaScript writes for the same double.

struct double_case {
    double d;
    std::string_view javascript; // JSON.stringify(d)

    friend void PrintTo(double_case const& row, std::ostream* os) { *os << row.javascript; }
};

class JsonTextDouble : public ::testing::TestWithParam<double_case> {};

TEST_P(JsonTextDouble, PrintsAsJavaScriptDoes) {
    EXPECT_EQ(text_of(GetParam().d), GetParam().javascript);
}

constexpr double from_bits(std::uint64_t bits) {
    return std::bit_cast<double>(bits);
}

INSTANTIATE_TEST_SUITE_P(
    JsonText, JsonTextDouble,
    ::testing::Values(
        // Decimals without an exponent: 1e-6 up to below 1e21.
        double_case{0.1, "0.1"}, double_case{0.5, "0.5"}, double_case{1.5, "1.5"},
        double_case{-123.5, "-123.5"}, double_case{100.25, "100.25"}, double_case{12345.6789, "12345.6789"},
        double_case{4.35, "4.35"}, double_case{65536.125, "65536.125"}, double_case{0.001234, "0.001234"},
        double_case{0.1 + 0.2, "0.30000000000000004"}, double_case{1.0 / 3, "0.3333333333333333"},
        double_case{2.0 / 3, "0.6666666666666666"}, double_case{3.14159, "3.14159"},
        double_case{1e-4 * 3, "0.00030000000000000003"}, double_case{1e-5, "0.00001"},
        double_case{1e-6, "0.000001"}, double_case{-1e-6, "-0.000001"}, double_case{1.234e-6, "0.000001234"},
        // Below 1e-6: exponent form, with its sign.
        double_case{1e-7, "1e-7"}, double_case{1.5e-7, "1.5e-7"}, double_case{-2.5e-8, "-2.5e-8"},
        double_case{1.23e-18, "1.23e-18"}, double_case{-1.5e-300, "-1.5e-300"},
        double_case{2.2250738585072014e-308, "2.2250738585072014e-308"}, double_case{5e-324, "5e-324"},
        // Integral: the digits, padded with zeros below 1e21.
        double_case{299792458.0, "299792458"}, double_case{1e16, "10000000000000000"},
        double_case{0x1p53, "9007199254740992"}, double_case{0x1p53 + 2, "9007199254740994"},
        double_case{0x1p64, "18446744073709552000"}, double_case{1e20, "100000000000000000000"},
        double_case{9.999999999999999e20, "999999999999999900000"},
        double_case{1.2345678901234568e20, "123456789012345680000"},
        // From 1e21 up: exponent form with an explicit '+'.
        double_case{1e21, "1e+21"}, double_case{-1e21, "-1e+21"}, double_case{1.2e21, "1.2e+21"},
        double_case{1e22, "1e+22"}, double_case{1e23, "1e+23"}, double_case{1e300, "1e+300"},
        double_case{1.5e300, "1.5e+300"}, double_case{1.7976931348623157e308, "1.7976931348623157e+308"},
        // Random bit patterns.
        double_case{from_bits(0x1c0d57f10c894254), "1.4830122828920016e-173"},
        double_case{from_bits(0x43f04a6ece53d613), "18781959765316678000"},
        double_case{from_bits(0xe2b8410510668fa6), "-3.575532127436644e+167"},
        double_case{from_bits(0xd5f2e30a9e501b7d), "-1.0829258728928171e+106"},
        double_case{from_bits(0x535c8ea8a4e05948), "3.7230187291668613e+93"},
        double_case{from_bits(0x8f7b1bac9609eaf7), "-4.262874002980358e-234"},
        double_case{from_bits(0xcb3af636587957ba), "-2.5824242072052563e+54"},
        double_case{from_bits(0x6438f14dfe833301), "6.169062368256605e+174"},
        double_case{from_bits(0xd0af9825c659f77c), "-4.682717518917287e+80"},
        double_case{from_bits(0x302bd02b522a861b), "1.2009957333271821e-76"}));

TEST(JsonText, IntegralDoublesPrintWithoutExponent) {
    EXPECT_EQ(text_of(5.0), "5");
    EXPECT_EQ(text_of(100.0), "100");
    EXPECT_EQ(text_of(-3.0), "-3");
    EXPECT_EQ(text_of(1e15), "1000000000000000");
    EXPECT_EQ(to_json_text(json::object{{"result", 5.0}}), R"({"result":5})");
}

TEST(JsonText, NegativeZeroPrintsAsZero) {
    EXPECT_EQ(text_of(-0.0), "0");
    EXPECT_EQ(text_of(0.0), "0");
}

// JSON has no NaN or infinity; JSON.stringify writes null for them.
TEST(JsonText, NonFiniteDoublesPrintAsNull) {
    auto const inf = std::numeric_limits<double>::infinity();
    EXPECT_EQ(text_of(std::numeric_limits<double>::quiet_NaN()), "null");
    EXPECT_EQ(text_of(inf), "null");
    EXPECT_EQ(text_of(-inf), "null");
    EXPECT_EQ(to_json_text(json::array{1.5, inf, -inf}), "[1.5,null,null]");
}

// The significant digits of a number's text: leading and trailing zeros are layout, not precision.
std::size_t significant_digits(std::string_view text) {
    std::string digits;
    for (char c : text.substr(0, text.find('e')))
        if (c >= '0' && c <= '9')
            digits.push_back(c);
    auto const first = digits.find_first_not_of('0');
    return first == std::string::npos ? 0 : digits.find_last_not_of('0') - first + 1;
}

double read(std::string_view text) {
    double d = 0;
    auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    EXPECT_EQ(ec, std::errc{}) << text;
    EXPECT_EQ(end, text.data() + text.size()) << text;
    return d;
}

// Read with std::from_chars, which rounds correctly as JavaScript and Python do. (Boost.JSON 1.81's parser
// does not: it reads about a third of random doubles back one bit off.) Shortest: the same double rounded to
// one digit fewer reads back as another double.
TEST(JsonText, ShortestFormReadsBackTheSameDouble) {
    std::mt19937_64 bits(20250611);
    int checked = 0;
    while (checked < 100'000) {
        auto const d = std::bit_cast<double>(bits());
        if (!std::isfinite(d))
            continue;
        ++checked;
        auto const text = text_of(d);
        ASSERT_EQ(read(text), d) << text;
        auto const digits = significant_digits(text);
        ASSERT_GE(digits, 1u) << text;
        if (digits == 1)
            continue;
        char shorter[40];
        auto const n = std::snprintf(shorter, sizeof shorter, "%.*e", static_cast<int>(digits) - 2, d);
        ASSERT_NE(read(std::string_view(shorter, static_cast<std::size_t>(n))), d) << text << " " << shorter;
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Everything else: boost::json::serialize's bytes.

std::string every_byte() {
    std::string s;
    for (int c = 0; c < 256; ++c)
        s.push_back(static_cast<char>(c));
    return s;
}

TEST(JsonText, StringsEscapeAsBefore) {
    // Short escapes for the five that have one, \u00xx for the other control characters, `"` and `\`
    // escaped; DEL, `/` and UTF-8 passed through.
    EXPECT_EQ(to_json_text(json::value("\b\t\n\f\r")), R"("\b\t\n\f\r")");
    EXPECT_EQ(to_json_text(json::value(std::string_view("\x00\x01\x1f", 3))), R"("\u0000\u0001\u001f")");
    EXPECT_EQ(to_json_text(json::value("q\"b\\s/")), R"("q\"b\\s/")");
    EXPECT_EQ(to_json_text(json::value("caf\xc3\xa9 \xf0\x9f\x98\x80 \x7f")),
              "\"caf\xc3\xa9 \xf0\x9f\x98\x80 \x7f\"");
    // Invalid UTF-8 too, as Boost.JSON writes it.
    auto const all = every_byte();
    EXPECT_EQ(to_json_text(json::value(all)), json::serialize(json::value(all)));
    std::string appended = "x";
    append_json_string(appended, all);
    EXPECT_EQ(appended, "x" + json::serialize(json::value(all)));
}

// A character to escape at every position of strings around the width the writer scans at once, and
// strings longer than its buffer.
TEST(JsonText, StringsEscapeAsBeforeAtEveryPosition) {
    for (std::size_t length = 1; length <= 40; ++length)
        for (std::size_t at = 0; at < length; ++at)
            for (char c : {'\0', '\x1f', ' ', '"', '\\', '\x7f', '\x80', '\xff'}) {
                std::string s(length, 'a');
                s[at] = c;
                ASSERT_EQ(to_json_text(json::value(s)), json::serialize(json::value(s)))
                    << length << " " << at << " " << int(c);
            }
    for (std::size_t length : {1023u, 1024u, 1025u, 5000u}) {
        std::string s(length, 'z');
        s[length / 2] = '\n';
        json::array const a{s, s, json::object{{s, s}}};
        EXPECT_EQ(to_json_text(a), json::serialize(a)) << length;
    }
}

TEST(JsonText, OutputMatchesBoostForEverythingButDoubles) {
    auto const v = json::parse(R"({"jsonrpc":"2.0","id":-9223372036854775808,"result":{
        "content":[{"type":"text","text":"line\none \"quoted\" \u00e9\u0001"}],"isError":false,
        "n":[0,1,-1,9223372036854775807,18446744073709551615,true,false,null,[],{},[[{}]],""],
        "k\ty":{"":{"nested":[null]}}}})");
    EXPECT_EQ(to_json_text(v), json::serialize(v));
    EXPECT_EQ(to_json_text(v.as_object()), json::serialize(v.as_object()));
    EXPECT_EQ(to_json_text(v.at("result").at("n").as_array()), json::serialize(v.at("result").at("n")));
    json::array many;
    for (int i = 0; i < 2000; ++i)
        many.emplace_back(i % 3 ? json::value(i) : json::value("item " + std::to_string(i)));
    EXPECT_EQ(to_json_text(many), json::serialize(many));
}

TEST(JsonText, AppendingKeepsWhatTheStringHeld) {
    std::string out = R"({"result":)";
    append_json_text(out, json::value(json::array{1, 0.25}));
    out.push_back('}');
    EXPECT_EQ(out, R"({"result":[1,0.25]})");
    append_json_text(out, json::object{{"a", 2.0}});
    append_json_text(out, json::array{1e21});
    EXPECT_EQ(out, R"({"result":[1,0.25]}{"a":2}[1e+21])");
}

} // namespace
