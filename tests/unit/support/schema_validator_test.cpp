// The schema validator itself: official examples pass, broken values fail, bad checks are told apart from
// invalid values, and large batches come back complete and in order.
#include "support/files.hpp"
#include "support/schema_validator.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace {

using duet::test::schema_check;
using duet::test::schema_mode;
using duet::test::schema_validator;
namespace fs = std::filesystem;
namespace json = boost::json;

fs::path examples_dir() {
    return fs::path(DUET_SHARED_DIR) / "spec" / "2026-07-28" / "examples";
}

json::value read_json(fs::path const& file) {
    return json::parse(duet::test::read_file(file.string()));
}

struct example_case {
    char const* name;
    char const* type;
    char const* file; ///< under examples/<type>/
};

void PrintTo(example_case const& c, std::ostream* os) {
    *os << c.name;
}

class OfficialExample : public testing::TestWithParam<example_case> {};

TEST_P(OfficialExample, ValidatesAsItsType) {
    auto& schemas = schema_validator::shared();
    DUET_SKIP_WITHOUT_SCHEMAS(schemas);
    auto const& c = GetParam();
    auto const file = examples_dir() / c.type / c.file;
    ASSERT_TRUE(fs::is_regular_file(file)) << file;
    auto const r = schemas.validate("2026-07-28", c.type, read_json(file));
    EXPECT_TRUE(r.ok) << r.errors;
    EXPECT_FALSE(r.bad_check);
}

INSTANTIATE_TEST_SUITE_P(
    SchemaValidator, OfficialExample,
    testing::Values(example_case{"ListToolsResult", "ListToolsResult", "tools-list-with-cursor-and-ttl.json"},
                    example_case{"DiscoverResult", "DiscoverResult", "server-capabilities-discovery.json"},
                    example_case{"CallToolResultArrayStructured", "CallToolResult",
                                 "result-with-array-structured-content.json"},
                    example_case{"InputRequiredResult", "InputRequiredResult",
                                 "input-required-result-with-request-state-only.json"},
                    example_case{"ReadResourceResult", "ReadResourceResult", "file-resource-contents.json"},
                    example_case{"ToolWithArrayOutputSchema", "Tool", "tool-with-array-output-schema.json"},
                    example_case{"ListToolsResultResponse", "ListToolsResultResponse",
                                 "list-tools-result-response.json"}),
    [](auto const& p) { return std::string(p.param.name); });

// Every official example, each against the type its folder names, in one batch.
TEST(SchemaValidator, EveryOfficialExampleValidatesInOneBatch) {
    auto& schemas = schema_validator::shared();
    DUET_SKIP_WITHOUT_SCHEMAS(schemas);
    std::vector<schema_check> checks;
    std::vector<std::string> files;
    for (auto const& dir : fs::directory_iterator(examples_dir()))
        for (auto const& file : fs::directory_iterator(dir.path()))
            if (file.path().extension() == ".json") {
                checks.push_back({"2026-07-28", dir.path().filename().string(), read_json(file.path())});
                files.push_back(file.path().string());
            }
    ASSERT_GT(checks.size(), 80u);
    auto const verdicts = schemas.validate(checks);
    ASSERT_EQ(verdicts.size(), checks.size());
    for (std::size_t i = 0; i < verdicts.size(); ++i)
        EXPECT_TRUE(verdicts[i].ok) << files[i] << ": " << verdicts[i].errors;
}

TEST(SchemaValidator, BrokenValueFails) {
    auto& schemas = schema_validator::shared();
    DUET_SKIP_WITHOUT_SCHEMAS(schemas);
    auto value = read_json(examples_dir() / "CallToolResult" / "result-with-unstructured-text.json");
    ASSERT_TRUE(schemas.validate("2026-07-28", "CallToolResult", value).ok);

    auto missing = value;
    missing.as_object().erase("resultType"); // required on every modern result
    auto const r1 = schemas.validate("2026-07-28", "CallToolResult", missing);
    EXPECT_TRUE(r1.rejected()) << r1.errors;
    EXPECT_NE(r1.errors.find("resultType"), std::string::npos) << r1.errors;

    auto mistyped = value;
    mistyped.as_object()["content"] = "not an array";
    EXPECT_TRUE(schemas.validate("2026-07-28", "CallToolResult", mistyped).rejected());
}

TEST(SchemaValidator, CacheableResultWithoutHintsFails) {
    auto& schemas = schema_validator::shared();
    DUET_SKIP_WITHOUT_SCHEMAS(schemas);
    auto value = read_json(examples_dir() / "ListToolsResult" / "tools-list-with-cursor-and-ttl.json");
    value.as_object().erase("ttlMs");
    EXPECT_TRUE(schemas.validate("2026-07-28", "ListToolsResult", value).rejected());
}

// 2025-06-18 is draft-07 with `definitions`: it loads, and its own rules apply (structuredContent an object).
TEST(SchemaValidator, Draft07SchemaApplies) {
    auto& schemas = schema_validator::shared();
    DUET_SKIP_WITHOUT_SCHEMAS(schemas);
    auto const object = json::parse(R"({"content":[],"structuredContent":{"a":1}})");
    auto const array = json::parse(R"({"content":[],"structuredContent":[1]})");
    EXPECT_TRUE(schemas.validate("2025-06-18", "CallToolResult", object).ok);
    EXPECT_TRUE(schemas.validate("2025-06-18", "CallToolResult", array).rejected());
    EXPECT_TRUE(
        schemas
            .validate("2026-07-28", "CallToolResult",
                      json::parse(R"({"resultType":"complete","content":[],"structuredContent":[1]})"))
            .ok);
}

// Closed mode rejects fields a version does not define; the open schemas accept them.
TEST(SchemaValidator, ClosedModeRejectsUndefinedFields) {
    auto& schemas = schema_validator::shared();
    DUET_SKIP_WITHOUT_SCHEMAS(schemas);
    auto const tool = json::parse(R"({"name":"t","inputSchema":{"type":"object","additionalProperties":false},
        "icons":[{"src":"https://example.com/i.png"}],"_meta":{"com.example/x":1}})");
    EXPECT_TRUE(schemas.validate("2025-06-18", "Tool", tool).ok);
    EXPECT_TRUE(schemas.validate("2025-06-18", "Tool", tool, schema_mode::closed).rejected());
    EXPECT_TRUE(schemas.validate("2025-11-25", "Tool", tool, schema_mode::closed).ok);
}

TEST(SchemaValidator, UnknownTypeOrVersionIsABadCheck) {
    auto& schemas = schema_validator::shared();
    DUET_SKIP_WITHOUT_SCHEMAS(schemas);
    auto const r1 = schemas.validate("2026-07-28", "NoSuchResult", json::object{});
    EXPECT_TRUE(r1.bad_check);
    EXPECT_FALSE(r1.rejected());
    auto const r2 = schemas.validate("1999-01-01", "Result", json::object{});
    EXPECT_TRUE(r2.bad_check);
    // The process survives a bad check.
    EXPECT_TRUE(schemas.validate("2026-07-28", "Result", json::parse(R"({"resultType":"complete"})")).ok);
}

// A batch far larger than the socket buffers, alternating valid and invalid values, comes back in order.
TEST(SchemaValidator, LargeBatchKeepsOrder) {
    auto& schemas = schema_validator::shared();
    DUET_SKIP_WITHOUT_SCHEMAS(schemas);
    std::string const padding(2048, 'x');
    std::vector<schema_check> checks;
    for (int i = 0; i < 2000; ++i) {
        json::object v{{"content", json::array{json::object{{"type", "text"}, {"text", padding}}}}};
        if (i % 3 != 0)
            v["resultType"] = "complete";
        checks.push_back({"2026-07-28", "CallToolResult", std::move(v)});
    }
    auto const verdicts = schemas.validate(checks);
    ASSERT_EQ(verdicts.size(), checks.size());
    for (std::size_t i = 0; i < verdicts.size(); ++i)
        ASSERT_EQ(verdicts[i].ok, i % 3 != 0) << "check " << i << ": " << verdicts[i].errors;
}

// ../shared may be absent beside a clone: its skips are the ones `make test` lets pass, so they say so.
TEST(SchemaValidator, UnavailableWithoutSharedDirIsAnOptionalSkip) {
    schema_validator v({.shared_dir = "/nonexistent/shared", .source_dir = DUET_SOURCE_DIR});
    EXPECT_FALSE(v.available());
    EXPECT_NE(v.unavailable_reason().find("/nonexistent/shared"), std::string::npos)
        << v.unavailable_reason();
    EXPECT_TRUE(v.unavailable_reason().starts_with(duet::test::optional_skip)) << v.unavailable_reason();
    auto const r = v.validate("2026-07-28", "Result", json::object{});
    EXPECT_TRUE(r.bad_check);
    EXPECT_FALSE(r.rejected());
}

// Node is installed by bootstrap: a test skipped for its absence must fail `make test`, so its reason is
// not marked optional. (Needs ../shared, or the missing schemas would be the reason given.)
TEST(SchemaValidator, UnavailableWithoutNodeIsNotAnOptionalSkip) {
    schema_validator v(
        {.shared_dir = DUET_SHARED_DIR, .source_dir = DUET_SOURCE_DIR, .node = "/nonexistent/node"});
    EXPECT_FALSE(v.available());
    if (std::filesystem::is_directory(std::filesystem::path(DUET_SHARED_DIR) / "spec")) {
        EXPECT_FALSE(v.unavailable_reason().starts_with(duet::test::optional_skip)) << v.unavailable_reason();
        EXPECT_NE(v.unavailable_reason().find("node"), std::string::npos) << v.unavailable_reason();
    }
}

} // namespace
