// The protected resource metadata and authorization server metadata documents read into what the flow uses:
// required members present, every member the flow reads of the type the RFCs give it, and a refusal that
// names the member at fault.
//
// Requirement tags: RFC 9728 §2 (resource required; authorization_servers and scopes_supported JSON arrays
// of strings) https://www.rfc-editor.org/rfc/rfc9728#section-2; RFC 8414 §2 (issuer and token_endpoint
// required, authorization_endpoint unless no grant uses it, the *_supported arrays, RFC 9207 §3's
// authorization_response_iss_parameter_supported boolean) https://www.rfc-editor.org/rfc/rfc8414#section-2;
// MCP 2025-11-25 basic/authorization (client_id_metadata_document_supported).
#include <duet/auth/metadata.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace {

using namespace duet::auth;
using strings_list = std::vector<std::string>;

boost::json::value doc_of(std::string const& text) {
    boost::system::error_code ec;
    auto v = boost::json::parse(text, ec);
    EXPECT_FALSE(ec) << text;
    return v;
}

// ---------------------------------------------------------------------------------------------------------------
// RFC 9728 §2

TEST(Metadata, ResourceMetadataKeepsWhatTheFlowUses) {
    auto const m = read_resource_metadata(doc_of(R"({
        "resource": "https://mcp.example/mcp",
        "authorization_servers": ["https://auth.example", "https://other.example/t"],
        "scopes_supported": ["files:read", "files:write"],
        "bearer_methods_supported": ["header"],
        "resource_name": "Files"})"));
    ASSERT_TRUE(m.has_value()) << m.error().message;
    EXPECT_EQ(m->resource, "https://mcp.example/mcp");
    EXPECT_EQ(m->authorization_servers, (strings_list{"https://auth.example", "https://other.example/t"}));
    EXPECT_EQ(m->scopes_supported, (strings_list{"files:read", "files:write"}));
}

TEST(Metadata, ResourceMetadataOptionalListsMayBeAbsent) {
    auto const m = read_resource_metadata(doc_of(R"({"resource": "https://mcp.example"})"));
    ASSERT_TRUE(m.has_value()) << m.error().message;
    EXPECT_EQ(m->resource, "https://mcp.example");
    EXPECT_TRUE(m->authorization_servers.empty());
    EXPECT_EQ(m->scopes_supported, std::nullopt);
}

TEST(Metadata, ResourceMetadataEmptyScopeListIsNotAnAbsentOne) {
    auto const m = read_resource_metadata(doc_of(R"({"resource": "https://m", "scopes_supported": []})"));
    ASSERT_TRUE(m.has_value()) << m.error().message;
    ASSERT_TRUE(m->scopes_supported.has_value());
    EXPECT_TRUE(m->scopes_supported->empty());
}

struct bad_document_case {
    std::string name;
    std::string document;
    std::string named; ///< what the message must name

    friend void PrintTo(bad_document_case const& row, std::ostream* os) { *os << row.name; }
};

class MetadataRefusesResourceDocument : public ::testing::TestWithParam<bad_document_case> {};

TEST_P(MetadataRefusesResourceDocument, NamesTheFieldAtFault) {
    auto const& row = GetParam();
    auto const m = read_resource_metadata(doc_of(row.document));
    ASSERT_FALSE(m.has_value());
    EXPECT_EQ(m.error().code, duet::client::errc::protocol_violation);
    EXPECT_NE(m.error().message.find("protected resource metadata"), std::string::npos) << m.error().message;
    EXPECT_NE(m.error().message.find(row.named), std::string::npos) << m.error().message;
}

using BD = bad_document_case;

INSTANTIATE_TEST_SUITE_P(
    Metadata, MetadataRefusesResourceDocument,
    ::testing::Values(
        BD{"NotAnObject", R"(["https://mcp.example"])", "is not a JSON object"},
        BD{"ResourceMissing", R"({"authorization_servers": ["https://a"]})", "resource is missing"},
        BD{"ResourceEmpty", R"({"resource": ""})", "resource is missing"},
        BD{"ResourceNotAString", R"({"resource": 5})", "resource is not a string"},
        BD{"ResourceNull", R"({"resource": null})", "resource is not a string"},
        BD{"ServersNotAnArray", R"({"resource": "r", "authorization_servers": "https://a"})",
           "authorization_servers is not an array"},
        BD{"ServersHoldANumber", R"({"resource": "r", "authorization_servers": ["https://a", 1]})",
           "authorization_servers holds something other than strings"},
        BD{"ScopesNotAnArray", R"({"resource": "r", "scopes_supported": {}})",
           "scopes_supported is not an array"},
        BD{"ScopesHoldNull", R"({"resource": "r", "scopes_supported": [null]})",
           "scopes_supported holds something other than strings"}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// RFC 8414 §2

TEST(Metadata, ServerMetadataKeepsWhatTheFlowUses) {
    auto const m = read_server_metadata(doc_of(R"({
        "issuer": "https://auth.example",
        "authorization_endpoint": "https://auth.example/authorize",
        "token_endpoint": "https://auth.example/token",
        "registration_endpoint": "https://auth.example/register",
        "scopes_supported": ["openid", "offline_access"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_signing_alg_values_supported": ["ES256", "RS256"],
        "client_id_metadata_document_supported": true,
        "authorization_response_iss_parameter_supported": true,
        "response_types_supported": ["code"]})"));
    ASSERT_TRUE(m.has_value()) << m.error().message;
    EXPECT_EQ(m->issuer, "https://auth.example");
    EXPECT_EQ(m->authorization_endpoint, "https://auth.example/authorize");
    EXPECT_EQ(m->token_endpoint, "https://auth.example/token");
    EXPECT_EQ(m->registration_endpoint, "https://auth.example/register");
    EXPECT_EQ(m->scopes_supported, (strings_list{"openid", "offline_access"}));
    EXPECT_EQ(m->grant_types_supported, (strings_list{"authorization_code", "refresh_token"}));
    EXPECT_EQ(m->token_endpoint_auth_methods_supported, (strings_list{"none", "client_secret_basic"}));
    EXPECT_EQ(m->code_challenge_methods_supported, (strings_list{"S256"}));
    EXPECT_EQ(m->token_endpoint_auth_signing_alg_values_supported, (strings_list{"ES256", "RS256"}));
    EXPECT_TRUE(m->client_id_metadata_document_supported);
    EXPECT_TRUE(m->authorization_response_iss_parameter_supported);
}

TEST(Metadata, ServerMetadataNeedsOnlyIssuerAndTokenEndpoint) {
    auto const m =
        read_server_metadata(doc_of(R"({"issuer": "https://auth.example", "token_endpoint": "https://t"})"));
    ASSERT_TRUE(m.has_value()) << m.error().message;
    EXPECT_EQ(m->issuer, "https://auth.example");
    EXPECT_EQ(m->token_endpoint, "https://t");
    EXPECT_EQ(m->authorization_endpoint, "");
    EXPECT_EQ(m->registration_endpoint, "");
    EXPECT_EQ(m->scopes_supported, std::nullopt);
    EXPECT_EQ(m->grant_types_supported, std::nullopt);
    EXPECT_EQ(m->token_endpoint_auth_methods_supported, std::nullopt);
    EXPECT_EQ(m->code_challenge_methods_supported, std::nullopt);
    EXPECT_EQ(m->token_endpoint_auth_signing_alg_values_supported, std::nullopt);
    EXPECT_FALSE(m->client_id_metadata_document_supported);
    EXPECT_FALSE(m->authorization_response_iss_parameter_supported);
}

TEST(Metadata, ServerMetadataFalseFlagsReadFalse) {
    auto const m = read_server_metadata(doc_of(R"({"issuer": "i", "token_endpoint": "t",
        "client_id_metadata_document_supported": false,
        "authorization_response_iss_parameter_supported": false})"));
    ASSERT_TRUE(m.has_value()) << m.error().message;
    EXPECT_FALSE(m->client_id_metadata_document_supported);
    EXPECT_FALSE(m->authorization_response_iss_parameter_supported);
}

TEST(Metadata, ServerMetadataFlagsAreIndependent) {
    auto const m = read_server_metadata(doc_of(R"({"issuer": "i", "token_endpoint": "t",
        "authorization_response_iss_parameter_supported": true})"));
    ASSERT_TRUE(m.has_value()) << m.error().message;
    EXPECT_FALSE(m->client_id_metadata_document_supported);
    EXPECT_TRUE(m->authorization_response_iss_parameter_supported);
}

class MetadataRefusesServerDocument : public ::testing::TestWithParam<bad_document_case> {};

TEST_P(MetadataRefusesServerDocument, NamesTheFieldAtFault) {
    auto const& row = GetParam();
    auto const m = read_server_metadata(doc_of(row.document));
    ASSERT_FALSE(m.has_value());
    EXPECT_EQ(m.error().code, duet::client::errc::protocol_violation);
    EXPECT_NE(m.error().message.find("authorization server metadata"), std::string::npos)
        << m.error().message;
    EXPECT_NE(m.error().message.find(row.named), std::string::npos) << m.error().message;
}

// A document with every required member, and `extra` members after them.
std::string server_doc(std::string const& extra) {
    return R"({"issuer": "https://auth.example", "token_endpoint": "https://auth.example/token")" +
           (extra.empty() ? std::string() : ", " + extra) + "}";
}

INSTANTIATE_TEST_SUITE_P(
    Metadata, MetadataRefusesServerDocument,
    ::testing::Values(
        BD{"NotAnObject", R"("https://auth.example")", "is not a JSON object"},
        BD{"IssuerMissing", R"({"token_endpoint": "https://t"})", "issuer is missing"},
        BD{"IssuerEmpty", R"({"issuer": "", "token_endpoint": "https://t"})", "issuer is missing"},
        BD{"IssuerNotAString", R"({"issuer": 1, "token_endpoint": "https://t"})", "issuer is not a string"},
        BD{"TokenEndpointMissing", R"({"issuer": "https://a"})", "token_endpoint is missing"},
        BD{"TokenEndpointNotAString", R"({"issuer": "https://a", "token_endpoint": ["https://t"]})",
           "token_endpoint is not a string"},
        BD{"AuthorizationEndpointNotAString", server_doc(R"("authorization_endpoint": 1)"),
           "authorization_endpoint is not a string"},
        BD{"RegistrationEndpointNull", server_doc(R"("registration_endpoint": null)"),
           "registration_endpoint is not a string"},
        BD{"ScopesNotAnArray", server_doc(R"("scopes_supported": "openid")"),
           "scopes_supported is not an array"},
        BD{"GrantTypesHoldABoolean", server_doc(R"("grant_types_supported": [true])"),
           "grant_types_supported holds something other than strings"},
        BD{"AuthMethodsNotAnArray", server_doc(R"("token_endpoint_auth_methods_supported": "none")"),
           "token_endpoint_auth_methods_supported is not an array"},
        BD{"ChallengeMethodsHoldAnObject", server_doc(R"("code_challenge_methods_supported": [{}])"),
           "code_challenge_methods_supported holds something other than strings"},
        BD{"SigningAlgsNotAnArray", server_doc(R"("token_endpoint_auth_signing_alg_values_supported": 256)"),
           "token_endpoint_auth_signing_alg_values_supported is not an array"},
        BD{"MetadataDocumentFlagAString", server_doc(R"("client_id_metadata_document_supported": "true")"),
           "client_id_metadata_document_supported is not a boolean"},
        BD{"IssFlagANumber", server_doc(R"("authorization_response_iss_parameter_supported": 1)"),
           "authorization_response_iss_parameter_supported is not a boolean"}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------

TEST(Metadata, ListsFindsOnlyListedValues) {
    std::optional<strings_list> const listed = strings_list{"none", "client_secret_post"};
    EXPECT_TRUE(server_metadata::lists(listed, "none"));
    EXPECT_TRUE(server_metadata::lists(listed, "client_secret_post"));
    EXPECT_FALSE(server_metadata::lists(listed, "client_secret_basic"));
    EXPECT_FALSE(server_metadata::lists(listed, "NONE"));
    EXPECT_FALSE(server_metadata::lists(std::nullopt, "none"));
    EXPECT_FALSE(server_metadata::lists(strings_list{}, "none"));
}

} // namespace
