// src/support/hex.hpp: the one hex codec behind pagination cursors and session ids.
#include "support/hex.hpp"

#include <gtest/gtest.h>

namespace {

using duet::support::from_hex;
using duet::support::to_hex;

TEST(Hex, EncodesEveryByteAsTwoLowercaseDigits) {
    EXPECT_EQ(to_hex(""), "");
    EXPECT_EQ(to_hex(std::string_view("\x00\x0f\xa0\xff", 4)), "000fa0ff");
    EXPECT_EQ(to_hex("tool/b"), "746f6f6c2f62");
}

TEST(Hex, DecodesWhatItEncodes) {
    std::string all;
    for (int b = 0; b < 256; ++b)
        all += static_cast<char>(b);
    EXPECT_EQ(from_hex(to_hex(all)), all);
}

TEST(Hex, RefusesOddLengthsAndForeignDigits) {
    EXPECT_EQ(from_hex("abc"), std::nullopt);
    EXPECT_EQ(from_hex("0G"), std::nullopt);
    EXPECT_EQ(from_hex("AB"), std::nullopt); // uppercase is not what Duet writes
    EXPECT_EQ(from_hex(" 0"), std::nullopt);
    EXPECT_EQ(from_hex(""), std::string());
}

} // namespace
