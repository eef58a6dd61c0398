// Where a client looks for the protected resource's and the authorization server's metadata, in the spec's
// order, and how it compares the URLs involved: origins, the canonical server URI, and whether a metadata
// document's `resource` names this server.
//
// Requirement tags: MCP 2025-11-25 basic/authorization "Protected Resource Metadata Discovery Requirements",
// "Authorization Server Metadata Discovery" (the three issuer-with-path URLs, in order) and "Canonical Server
// URI" https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization; RFC 9728 §3.1
// (path-based well-known URL) and §3.3 (the resource check) https://www.rfc-editor.org/rfc/rfc9728; RFC 8414
// §3.1 (terminating '/' removed, well-known segment inserted; issuer without query or fragment, §2)
// https://www.rfc-editor.org/rfc/rfc8414; OpenID Connect Discovery 1.0 §4 (path appended); RFC 8707 §2
// (resource URI); RFC 6454 §4 (origin: scheme, lower-case host, port).
#include <duet/auth/discovery.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace {

using namespace duet::auth;
using duet::client::http_url;

http_url server_url(std::string const& text) {
    auto parsed = duet::client::parse_http_url(text);
    EXPECT_TRUE(parsed.has_value()) << text;
    return parsed ? *parsed : http_url{};
}

// ---------------------------------------------------------------------------------------------------------------
// RFC 9728 §3.1 and the spec's discovery order: the challenge's URL, then path-based, then root.

struct resource_urls_case {
    std::string name;
    std::string server;
    std::optional<std::string> from_challenge;
    std::vector<std::string> expected;

    friend void PrintTo(resource_urls_case const& row, std::ostream* os) { *os << row.name; }
};

class DiscoveryResourceMetadataUrls : public ::testing::TestWithParam<resource_urls_case> {};

TEST_P(DiscoveryResourceMetadataUrls, ListsUrlsInSpecOrder) {
    auto const& row = GetParam();
    std::optional<std::string_view> challenge;
    if (row.from_challenge)
        challenge = *row.from_challenge;
    EXPECT_EQ(resource_metadata_urls(server_url(row.server), challenge), row.expected);
}

using RU = resource_urls_case;
constexpr char prm[] = "/.well-known/oauth-protected-resource";

INSTANTIATE_TEST_SUITE_P(
    Discovery, DiscoveryResourceMetadataUrls,
    ::testing::Values(
        RU{"ChallengeUrlFirst",
           "https://mcp.example/api/mcp",
           "https://meta.example/custom/prm",
           {"https://meta.example/custom/prm", "https://mcp.example" + std::string(prm) + "/api/mcp",
            "https://mcp.example" + std::string(prm)}},
        RU{"PathBasedThenRoot",
           "https://mcp.example/api/mcp",
           std::nullopt,
           {"https://mcp.example" + std::string(prm) + "/api/mcp", "https://mcp.example" + std::string(prm)}},
        RU{"ServerAtRootHasNoPathBasedUrl",
           "https://mcp.example/",
           std::nullopt,
           {"https://mcp.example" + std::string(prm)}},
        RU{"ServerWithoutPathHasNoPathBasedUrl",
           "https://mcp.example",
           std::nullopt,
           {"https://mcp.example" + std::string(prm)}},
        RU{"ChallengeUrlForServerAtRoot",
           "https://mcp.example/",
           "https://mcp.example/prm",
           {"https://mcp.example/prm", "https://mcp.example" + std::string(prm)}},
        RU{"TrailingSlashStripped",
           "https://mcp.example/mcp/",
           std::nullopt,
           {"https://mcp.example" + std::string(prm) + "/mcp", "https://mcp.example" + std::string(prm)}},
        RU{"QueryIgnored",
           "https://mcp.example/mcp?tenant=1",
           std::nullopt,
           {"https://mcp.example" + std::string(prm) + "/mcp", "https://mcp.example" + std::string(prm)}},
        RU{"EmptyChallengeUrlIgnored",
           "https://mcp.example/mcp",
           "",
           {"https://mcp.example" + std::string(prm) + "/mcp", "https://mcp.example" + std::string(prm)}},
        RU{"OriginLowerCaseWithoutDefaultPort",
           "http://MCP.Example:80/mcp",
           std::nullopt,
           {"http://mcp.example" + std::string(prm) + "/mcp", "http://mcp.example" + std::string(prm)}},
        RU{"NonDefaultPortKept",
           "http://localhost:8080/mcp",
           std::nullopt,
           {"http://localhost:8080" + std::string(prm) + "/mcp",
            "http://localhost:8080" + std::string(prm)}}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// The spec's authorization server metadata order (RFC 8414 §3.1, OpenID Connect Discovery 1.0 §4).

struct server_urls_case {
    std::string name;
    std::string issuer;
    std::vector<std::string> expected;

    friend void PrintTo(server_urls_case const& row, std::ostream* os) { *os << row.name; }
};

class DiscoveryServerMetadataUrls : public ::testing::TestWithParam<server_urls_case> {};

TEST_P(DiscoveryServerMetadataUrls, ListsUrlsInSpecOrder) {
    auto const& row = GetParam();
    auto const urls = authorization_server_metadata_urls(row.issuer);
    ASSERT_TRUE(urls.has_value()) << urls.error().message;
    EXPECT_EQ(*urls, row.expected);
}

using SU = server_urls_case;

INSTANTIATE_TEST_SUITE_P(
    Discovery, DiscoveryServerMetadataUrls,
    ::testing::Values(SU{"IssuerWithPath",
                         "https://auth.example/tenant1",
                         {"https://auth.example/.well-known/oauth-authorization-server/tenant1",
                          "https://auth.example/.well-known/openid-configuration/tenant1",
                          "https://auth.example/tenant1/.well-known/openid-configuration"}},
                      SU{"IssuerWithDeepPath",
                         "https://auth.example/a/b",
                         {"https://auth.example/.well-known/oauth-authorization-server/a/b",
                          "https://auth.example/.well-known/openid-configuration/a/b",
                          "https://auth.example/a/b/.well-known/openid-configuration"}},
                      SU{"TerminatingSlashRemoved",
                         "https://auth.example/tenant1/",
                         {"https://auth.example/.well-known/oauth-authorization-server/tenant1",
                          "https://auth.example/.well-known/openid-configuration/tenant1",
                          "https://auth.example/tenant1/.well-known/openid-configuration"}},
                      SU{"IssuerWithoutPath",
                         "https://auth.example",
                         {"https://auth.example/.well-known/oauth-authorization-server",
                          "https://auth.example/.well-known/openid-configuration"}},
                      SU{"IssuerAtRootSlash",
                         "https://auth.example/",
                         {"https://auth.example/.well-known/oauth-authorization-server",
                          "https://auth.example/.well-known/openid-configuration"}},
                      SU{"PlainHttpWithPort",
                         "http://localhost:9000",
                         {"http://localhost:9000/.well-known/oauth-authorization-server",
                          "http://localhost:9000/.well-known/openid-configuration"}}),
    [](auto const& row) { return row.param.name; });

// RFC 8414 §2: an issuer is an https URL with no query or fragment (http allowed for local servers).
struct bad_issuer_case {
    std::string name;
    std::string issuer;

    friend void PrintTo(bad_issuer_case const& row, std::ostream* os) { *os << row.name; }
};

class DiscoveryRefusesIssuer : public ::testing::TestWithParam<bad_issuer_case> {};

TEST_P(DiscoveryRefusesIssuer, GivesAUsageErrorNamingTheIssuer) {
    auto const& row = GetParam();
    auto const urls = authorization_server_metadata_urls(row.issuer);
    ASSERT_FALSE(urls.has_value());
    EXPECT_EQ(urls.error().code, duet::client::errc::usage);
    EXPECT_NE(urls.error().message.find(row.issuer), std::string::npos) << urls.error().message;
}

using BI = bad_issuer_case;

INSTANTIATE_TEST_SUITE_P(Discovery, DiscoveryRefusesIssuer,
                         ::testing::Values(BI{"QueryAtRoot", "https://auth.example/?x=1"},
                                           BI{"QueryAfterPath", "https://auth.example/t?x"},
                                           BI{"QueryWithoutPath", "https://auth.example?x"},
                                           BI{"Fragment", "https://auth.example#frag"},
                                           BI{"FragmentAfterPath", "https://auth.example/t#"},
                                           BI{"FtpScheme", "ftp://auth.example"},
                                           BI{"NoScheme", "auth.example"}, BI{"Empty", ""}),
                         [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// RFC 6454 §4: an origin is scheme, lower-case host and port (the default one left out).

struct origin_case {
    std::string name;
    std::string url;
    std::string origin;

    friend void PrintTo(origin_case const& row, std::ostream* os) { *os << row.name; }
};

class DiscoveryOrigin : public ::testing::TestWithParam<origin_case> {};

TEST_P(DiscoveryOrigin, IsSchemeLowerCaseHostAndNonDefaultPort) {
    EXPECT_EQ(origin_of(server_url(GetParam().url)), GetParam().origin);
}

using OR = origin_case;

INSTANTIATE_TEST_SUITE_P(
    Discovery, DiscoveryOrigin,
    ::testing::Values(OR{"HostLowered", "https://MCP.Example.COM/x", "https://mcp.example.com"},
                      OR{"HttpsDefaultPortDropped", "https://h:443/", "https://h"},
                      OR{"HttpDefaultPortDropped", "http://h:80", "http://h"},
                      OR{"HttpsPortOnHttpKept", "http://h:443", "http://h:443"},
                      OR{"HttpPortOnHttpsKept", "https://h:80", "https://h:80"},
                      OR{"QueryAndPathDropped", "http://h:1/a/b?c=d", "http://h:1"},
                      OR{"Ipv6Bracketed", "http://[::1]:8080/mcp", "http://[::1]:8080"},
                      OR{"Ipv6LoweredDefaultPort", "https://[FE80::1]/", "https://[fe80::1]"},
                      OR{"Ipv4Literal", "http://127.0.0.1:3000", "http://127.0.0.1:3000"}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// The spec's "Canonical Server URI" (RFC 8707 §2): lower-case scheme and host, no default port, no fragment,
// no trailing slash.

struct canonical_case {
    std::string name;
    std::string url;
    std::string canonical;

    friend void PrintTo(canonical_case const& row, std::ostream* os) { *os << row.name; }
};

class DiscoveryCanonicalResource : public ::testing::TestWithParam<canonical_case> {};

TEST_P(DiscoveryCanonicalResource, IsTheSpecsCanonicalForm) {
    EXPECT_EQ(canonical_resource(server_url(GetParam().url)), GetParam().canonical);
}

using CR = canonical_case;

INSTANTIATE_TEST_SUITE_P(
    Discovery, DiscoveryCanonicalResource,
    ::testing::Values(
        CR{"AlreadyCanonical", "https://mcp.example.com/mcp", "https://mcp.example.com/mcp"},
        CR{"HostLoweredPortDroppedSlashStripped", "https://MCP.Example.com:443/mcp/",
           "https://mcp.example.com/mcp"},
        CR{"RootSlashDropped", "https://mcp.example.com/", "https://mcp.example.com"},
        CR{"NoPath", "https://mcp.example.com", "https://mcp.example.com"},
        CR{"FragmentDropped", "https://mcp.example.com/mcp#part", "https://mcp.example.com/mcp"},
        CR{"NonDefaultPortKept", "http://localhost:8080/a/b//", "http://localhost:8080/a/b"},
        CR{"PathCaseKept", "https://mcp.example.com/MCP", "https://mcp.example.com/MCP"},
        // A query tells servers on one path apart, so it stays part of the identifier.
        CR{"QueryKept", "https://mcp.example.com/mcp?tenant=a", "https://mcp.example.com/mcp?tenant=a"}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// RFC 9728 §3.3: the metadata's `resource` must name this server: the same origin, and a path that is the
// server's or a parent of it on a segment boundary.

struct covers_case {
    std::string name;
    std::string resource;
    std::string server;
    bool covers;

    friend void PrintTo(covers_case const& row, std::ostream* os) { *os << row.name; }
};

class DiscoveryResourceCovers : public ::testing::TestWithParam<covers_case> {};

TEST_P(DiscoveryResourceCovers, AcceptsOnlySameOriginAndParentPath) {
    auto const& row = GetParam();
    EXPECT_EQ(resource_covers(row.resource, server_url(row.server)), row.covers);
}

using RC = covers_case;

INSTANTIATE_TEST_SUITE_P(
    Discovery, DiscoveryResourceCovers,
    ::testing::Values(
        RC{"OriginCoversEveryPath", "http://h:1", "http://h:1/mcp", true},
        RC{"RootSlashCoversEveryPath", "http://h:1/", "http://h:1/mcp", true},
        RC{"SamePath", "http://h:1/mcp", "http://h:1/mcp", true},
        RC{"SamePathWithTrailingSlash", "http://h:1/mcp/", "http://h:1/mcp", true},
        RC{"ParentPath", "http://h:1/api", "http://h:1/api/mcp", true},
        RC{"HostCaseIgnored", "http://H:1/mcp", "http://h:1/mcp", true},
        RC{"DefaultPortSpelledOut", "https://h:443/mcp", "https://h/mcp", true},
        RC{"PrefixNotOnSegmentBoundary", "http://h:1/mc", "http://h:1/mcp", false},
        RC{"ChildDoesNotCoverParent", "http://h:1/mcp/sub", "http://h:1/mcp", false},
        RC{"SiblingPath", "http://h:1/other", "http://h:1/mcp", false},
        RC{"PathCaseMatters", "http://h:1/MCP", "http://h:1/mcp", false},
        RC{"OtherScheme", "https://h:1/mcp", "http://h:1/mcp", false},
        RC{"OtherHost", "http://g:1/mcp", "http://h:1/mcp", false},
        RC{"OtherPort", "http://h:2/mcp", "http://h:1/mcp", false},
        RC{"SubdomainOfAttacker", "https://evil.example.com/mcp", "https://example.com/mcp", false},
        RC{"SuffixedHost", "https://example.com.evil.net/mcp", "https://example.com/mcp", false},
        RC{"WithFragment", "http://h:1/mcp#x", "http://h:1/mcp", false},
        RC{"NotAUrl", "mcp", "http://h:1/mcp", false}, RC{"Empty", "", "http://h:1/mcp", false}),
    [](auto const& row) { return row.param.name; });

} // namespace
