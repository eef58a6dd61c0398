// Tests for duet/protocol/errors.hpp: the MCP error codes, their category, the HTTP status each maps to, and
// one constructor per error the spec describes.
//
// Requirements: DIGEST §2 "Error codes" (codes, `data` shapes, HTTP statuses); DIGEST §9 "Statuses";
// ERA-POLICY steps 4 and 9 and "Consequences" (legacy -32002 vs modern -32602 with data.uri);
// STYLE §6 rule 6 (a test that walks every enumerator of an error enum).
#include <duet/protocol/errors.hpp>
#include <duet/protocol/meta_keys.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <ostream>
#include <set>
#include <string>
#include <string_view>

namespace {

using namespace duet::protocol;
namespace json = boost::json;

// ---- the enum and its category ----------------------------------------------------------------------------

struct errc_row {
    std::string_view name;
    errc code;
    int value;
    std::string_view message;
    unsigned modern_status;
};

void PrintTo(errc_row const& row, std::ostream* os) {
    *os << row.name;
}

// DIGEST §2: the codes and their statuses (400 for -32020/-32021/-32022 and -32602, 404 for -32601; parse
// errors and invalid requests are bad requests too; everything else is a JSON-RPC error in a 200 answer).
constexpr errc_row errc_rows[] = {
    {"ParseError", errc::parse_error, -32700, "Parse error", 400},
    {"InvalidRequest", errc::invalid_request, -32600, "Invalid Request", 400},
    {"MethodNotFound", errc::method_not_found, -32601, "Method not found", 404},
    {"InvalidParams", errc::invalid_params, -32602, "Invalid params", 400},
    {"InternalError", errc::internal_error, -32603, "Internal error", 200},
    {"ResourceNotFound", errc::resource_not_found, -32002, "Resource not found", 200},
    {"HeaderMismatch", errc::header_mismatch, -32020, "Header mismatch", 400},
    {"MissingRequiredClientCapability", errc::missing_required_client_capability, -32021,
     "Missing required client capability", 400},
    {"UnsupportedProtocolVersion", errc::unsupported_protocol_version, -32022, "Unsupported protocol version",
     400},
    {"UrlElicitationRequired", errc::url_elicitation_required, -32042, "URL elicitation required", 200},
};

class ErrcEnumerator : public ::testing::TestWithParam<errc_row> {};

// DIGEST §2: each code has its spec number, its standard message, and its HTTP status.
TEST_P(ErrcEnumerator, HasSpecCodeMessageAndStatus) {
    auto const& row = GetParam();
    EXPECT_EQ(static_cast<int>(row.code), row.value);
    EXPECT_EQ(standard_message(row.code), row.message);
    EXPECT_EQ(modern_http_status(row.code), row.modern_status);

    boost::system::error_code const ec = row.code; // is_error_code_enum
    EXPECT_EQ(ec.value(), row.value);
    EXPECT_EQ(&ec.category(), &error_category());
    EXPECT_EQ(ec, make_error_code(row.code));
    EXPECT_EQ(ec.message(), row.message);
}

INSTANTIATE_TEST_SUITE_P(Errors, ErrcEnumerator, ::testing::ValuesIn(errc_rows),
                         [](auto const& p) { return std::string(p.param.name); });

// STYLE §6 rule 6: walking every enumerator; the table above and all_errc list the same codes, each once.
TEST(Errors, EveryEnumeratorHasANamedCategoryAndAMessage) {
    EXPECT_STREQ(error_category().name(), "duet.mcp");
    ASSERT_EQ(std::size(all_errc), std::size(errc_rows));
    std::set<int> seen;
    for (std::size_t i = 0; i < std::size(all_errc); ++i) {
        auto const e = all_errc[i];
        EXPECT_EQ(e, errc_rows[i].code);
        EXPECT_TRUE(seen.insert(static_cast<int>(e)).second) << static_cast<int>(e);
        EXPECT_FALSE(standard_message(e).empty()) << static_cast<int>(e);
        EXPECT_NE(standard_message(e), "Unknown error") << static_cast<int>(e);
        EXPECT_FALSE(make_error_code(e).message().empty()) << static_cast<int>(e);
    }
}

// DIGEST §2: the spec allocates -32020..-32099; -32000..-32019 are never minted (only legacy -32002, which
// the spec itself defines).
TEST(Errors, NoCodeIsMintedInTheImplementationRange) {
    for (auto const e : all_errc) {
        auto const n = static_cast<int>(e);
        if (n == -32002)
            continue;
        EXPECT_FALSE(n >= -32019 && n <= -32000) << n;
    }
}

// ---- constructors -----------------------------------------------------------------------------------------

// DIGEST §1: -32601 carries free-form data; Duet names the method and the reason.
TEST(Errors, MethodNotFoundNamesMethodAndReason) {
    auto const e = method_not_found("tasks/get", "unknown method");
    EXPECT_EQ(e.code, -32601);
    EXPECT_EQ(e.message, "Method not found");
    EXPECT_EQ(e.data, json::parse(R"({"method":"tasks/get","reason":"unknown method"})"));
}

TEST(Errors, InvalidParamsKeepsMessageAndOptionalData) {
    auto const bare = invalid_params("Invalid params: x");
    EXPECT_EQ(bare.code, -32602);
    EXPECT_EQ(bare.message, "Invalid params: x");
    EXPECT_TRUE(bare.data.is_null());
    auto const with = invalid_params("m", json::object{{"key", "k"}});
    EXPECT_EQ(with.data, json::parse(R"({"key":"k"})"));
}

// ERA-POLICY step 4, DIGEST §2: -32022, data {supported: <modern list>, requested: <value as sent>}.
TEST(Errors, UnsupportedProtocolVersionEchoesRequestedByteExact) {
    for (std::string_view const requested : {"2027-01-01", "2025-11-25", "", " 2026-07-28", "v\xC3\xA9\"9"}) {
        auto const e = unsupported_protocol_version(requested);
        EXPECT_EQ(e.code, -32022);
        EXPECT_EQ(e.message, "Unsupported protocol version");
        ASSERT_TRUE(e.data.is_object());
        auto const& data = e.data.as_object();
        EXPECT_EQ(data.size(), 2u);
        EXPECT_EQ(data.at("supported"), json::parse(R"(["2026-07-28"])"));
        ASSERT_TRUE(data.at("requested").is_string());
        EXPECT_EQ(std::string_view(data.at("requested").as_string()), requested);
    }
}

// DIGEST §2: -32020, "none defined" for data.
TEST(Errors, HeaderMismatchPrefixesDetailAndHasNoData) {
    auto const e = header_mismatch("Mcp-Method header does not match the body");
    EXPECT_EQ(e.code, -32020);
    EXPECT_EQ(e.message, "Header mismatch: Mcp-Method header does not match the body");
    EXPECT_TRUE(e.data.is_null());
}

// DIGEST §2 (conf): -32021 data.requiredCapabilities is a ClientCapabilities object.
TEST(Errors, MissingRequiredClientCapabilityCarriesCapabilitiesObject) {
    auto const e = missing_required_client_capability(json::object{{"sampling", json::object{}}});
    EXPECT_EQ(e.code, -32021);
    EXPECT_EQ(e.message, "Missing required client capability");
    EXPECT_EQ(e.data, json::parse(R"({"requiredCapabilities":{"sampling":{}}})"));
}

// ERA-POLICY "Consequences": legacy resource-not-found is -32002; modern is -32602 with data.uri.
TEST(Errors, ResourceNotFoundIsMinus32002LegacyAndInvalidParamsModern) {
    auto const legacy = resource_not_found(era::legacy, "file:///missing.txt");
    EXPECT_EQ(legacy.code, -32002);
    EXPECT_EQ(legacy.message, "Resource not found: file:///missing.txt");
    EXPECT_EQ(legacy.data, json::parse(R"({"uri":"file:///missing.txt"})"));

    auto const modern = resource_not_found(era::modern, "file:///missing.txt");
    EXPECT_EQ(modern.code, -32602);
    EXPECT_EQ(modern.message, "Resource not found: file:///missing.txt");
    EXPECT_EQ(modern.data, json::parse(R"({"uri":"file:///missing.txt"})"));
}

// STYLE §6 rule 7: an unexpected failure becomes a sanitized -32603 with nothing inside leaking out.
TEST(Errors, InternalErrorHasFixedMessageAndNoData) {
    auto const e = internal_error();
    EXPECT_EQ(e.code, -32603);
    EXPECT_EQ(e.message, "Internal error");
    EXPECT_TRUE(e.data.is_null());
}

TEST(Errors, InvalidRequestKeepsMessage) {
    auto const e = invalid_request("Invalid Request: why");
    EXPECT_EQ(e.code, -32600);
    EXPECT_EQ(e.message, "Invalid Request: why");
    EXPECT_TRUE(e.data.is_null());
}

TEST(Errors, MakeErrorTakesCodeMessageAndData) {
    auto const e =
        make_error(errc::url_elicitation_required, "m", json::object{{"elicitations", json::array{}}});
    EXPECT_EQ(e.code, -32042);
    EXPECT_EQ(e.message, "m");
    EXPECT_EQ(e.data, json::parse(R"({"elicitations":[]})"));
    EXPECT_TRUE(make_error(errc::parse_error, "p").data.is_null());
}

// ERA-POLICY step 9: -32602 whose message and data name the metadata key and every version the server speaks
// (modern through `_meta`, legacy through `initialize`).
TEST(Errors, MissingProtocolVersionNamesKeyAndEveryVersion) {
    auto const e = missing_protocol_version(true, true);
    EXPECT_EQ(e.code, -32602);
    for (std::string_view const needle :
         {meta_key::protocol_version, std::string_view("initialize"), std::string_view("2026-07-28"),
          std::string_view("2025-11-25"), std::string_view("2025-06-18"), std::string_view("2025-03-26"),
          std::string_view("2024-11-05")})
        EXPECT_NE(e.message.find(needle), std::string::npos) << needle;
    EXPECT_EQ(e.data, json::parse(R"({"requiredMetaKey":"io.modelcontextprotocol/protocolVersion",
        "modernVersions":["2026-07-28"],
        "handshakeVersions":["2025-11-25","2025-06-18","2025-03-26","2024-11-05"]})"));
}

// era_support: a single-era server names only the versions it speaks.
TEST(Errors, MissingProtocolVersionNamesOnlyTheEnabledEra) {
    auto const modern_only = missing_protocol_version(true, false);
    EXPECT_EQ(modern_only.data, json::parse(R"({"requiredMetaKey":"io.modelcontextprotocol/protocolVersion",
        "modernVersions":["2026-07-28"]})"));
    EXPECT_EQ(modern_only.message.find("2025-11-25"), std::string::npos);
    EXPECT_EQ(modern_only.message.find("initialize"), std::string::npos);

    auto const legacy_only = missing_protocol_version(false, true);
    EXPECT_EQ(legacy_only.data, json::parse(R"({"requiredMetaKey":"io.modelcontextprotocol/protocolVersion",
        "handshakeVersions":["2025-11-25","2025-06-18","2025-03-26","2024-11-05"]})"));
    EXPECT_EQ(legacy_only.message.find("2026-07-28"), std::string::npos);
    EXPECT_NE(legacy_only.message.find("initialize"), std::string::npos);
}

TEST(Errors, RejectionsCompareByErrorAndStatus) {
    rejection const a{header_mismatch("x"), 400};
    EXPECT_EQ(a, (rejection{header_mismatch("x"), 400}));
    EXPECT_NE(a, (rejection{header_mismatch("x"), 404}));
    EXPECT_NE(a, (rejection{header_mismatch("y"), 400}));
}

} // namespace
