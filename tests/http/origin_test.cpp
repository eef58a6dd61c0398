// The Origin and Host checks that stand against DNS rebinding (src/transport/http/origin.hpp): loopback
// names always pass; a server bound beyond loopback answers the names it was told (allowed_hosts, "*" for
// any) and the address it is bound to, nothing else; an allowed origin is compared whole, port included.
#include "transport/http/origin.hpp"

#include <gtest/gtest.h>

namespace {

using duet::transport::http::host_allowed;
using duet::transport::http::origin_allowed;

TEST(HostCheck, LoopbackNamesPassWhereverTheServerIsBound) {
    for (auto const* host : {"127.0.0.1:8750", "localhost", "[::1]:9", "127.1.2.3"}) {
        EXPECT_TRUE(host_allowed(host, "", {})) << host;
        EXPECT_TRUE(host_allowed(host, "10.0.0.5", {})) << host;
    }
}

TEST(HostCheck, ALoopbackServerRefusesOtherNamesUnlessListed) {
    EXPECT_FALSE(host_allowed("evil.example", "", {}));
    EXPECT_FALSE(host_allowed("10.0.0.5:8750", "", {}));
    EXPECT_TRUE(host_allowed("mcp.example:8750", "", {"mcp.example"}));
    EXPECT_FALSE(host_allowed(std::nullopt, "", {"*"})) << "HTTP/1.1 requires Host";
}

TEST(HostCheck, AServerBeyondLoopbackAnswersOnlyItsAddressAndTheNamesItWasTold) {
    EXPECT_TRUE(host_allowed("10.0.0.5:8750", "10.0.0.5", {}));
    EXPECT_TRUE(host_allowed("10.0.0.5", "10.0.0.5", {}));
    EXPECT_TRUE(host_allowed("[2001:db8::1]:8750", "2001:db8::1", {}));
    EXPECT_FALSE(host_allowed("evil.example", "10.0.0.5", {})) << "a rebound name must not reach it";
    EXPECT_FALSE(host_allowed("10.0.0.50", "10.0.0.5", {}));
    EXPECT_FALSE(host_allowed("0.0.0.0:8750", "10.0.0.5", {}));
    EXPECT_TRUE(host_allowed("mcp.example:443", "0.0.0.0", {"mcp.example"}));
    EXPECT_TRUE(host_allowed("anything.example", "0.0.0.0", {"*"}));
}

TEST(OriginCheck, AnAllowedOriginIsComparedWholePortIncluded) {
    std::vector<std::string> const allowed{"https://app.example:8443"};
    EXPECT_TRUE(origin_allowed("https://app.example:8443", allowed));
    EXPECT_FALSE(origin_allowed("https://app.example", allowed));
    EXPECT_FALSE(origin_allowed("https://app.example:9443", allowed));
    EXPECT_FALSE(origin_allowed("http://app.example:8443", allowed));
    EXPECT_TRUE(origin_allowed("http://localhost:3000", {}));
    EXPECT_FALSE(origin_allowed("null", {}));
    EXPECT_TRUE(origin_allowed(std::nullopt, {}));
}

} // namespace
