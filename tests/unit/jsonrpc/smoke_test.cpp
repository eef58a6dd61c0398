#include <duet/jsonrpc/codec.hpp>

#include <gtest/gtest.h>

TEST(Smoke, Builds) {
    EXPECT_TRUE(std::holds_alternative<duet::jsonrpc::parsed>(duet::jsonrpc::parse_frame("{}").content));
}
