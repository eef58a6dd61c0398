#include <duet/protocol/base64.hpp>
#include <duet/protocol/header_codec.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace {

using duet::protocol::base64_decode;
using duet::protocol::base64_encode;
using duet::protocol::decode_header_value;

TEST(Base64, EncodesEveryTailLengthWithPadding) {
    EXPECT_EQ(base64_encode(""), "");
    EXPECT_EQ(base64_encode("f"), "Zg==");
    EXPECT_EQ(base64_encode("fo"), "Zm8=");
    EXPECT_EQ(base64_encode("foo"), "Zm9v");
    EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
}

TEST(Base64, RoundTripsEveryByteValue) {
    std::string all;
    for (int i = 0; i < 256; ++i)
        all += static_cast<char>(i);
    auto const back = base64_decode(base64_encode(all));
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, all);
}

TEST(Base64, RefusesMalformedText) {
    EXPECT_FALSE(base64_decode("Zg="));      // length not a multiple of four
    EXPECT_FALSE(base64_decode("Z!=="));     // foreign character
    EXPECT_FALSE(base64_decode("Zg==Zm8=")); // data after padding
    EXPECT_FALSE(base64_decode("Z==="));     // padding too early
    EXPECT_FALSE(base64_decode("Zm 9"));     // whitespace is not base64
}

// Canonical text only (RFC 4648 §3.5): the unused low bits of the last character before padding are zero, so
// each value has one spelling (a header value decoded and encoded again is the same header).
TEST(Base64, RefusesNonZeroPaddingBits) {
    EXPECT_EQ(base64_decode("aGk="), std::optional<std::string>("hi"));
    EXPECT_FALSE(base64_decode("aGl="));
    EXPECT_FALSE(base64_decode("aGn="));
    EXPECT_EQ(base64_decode("Zg=="), std::optional<std::string>("f"));
    EXPECT_FALSE(base64_decode("Zh=="));
    EXPECT_FALSE(base64_decode("Zv=="));
    EXPECT_FALSE(decode_header_value("=?base64?aGl=?="));
}

} // namespace
