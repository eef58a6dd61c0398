// `x-mcp-header` bindings read from a tool's inputSchema, and every constraint the spec puts on them.
//
// Requirement tags: DIGEST §9 "`x-mcp-header` constraints" and "Required request headers"
// (`Mcp-Param-{Name}`), MCP 2026-07-28
// https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http; token grammar:
// RFC 9110 §5.6.2 https://www.rfc-editor.org/rfc/rfc9110#section-5.6.2
#include <duet/protocol/param_headers.hpp>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace duet::protocol {

// Found by ADL, so failures show bindings rather than bytes.
static void PrintTo(param_header const& h, std::ostream* os) {
    *os << h.header << " <- arguments";
    for (auto const& p : h.path)
        *os << '.' << p;
    *os << " as "
        << (h.type == param_type::string    ? "string"
            : h.type == param_type::integer ? "integer"
                                            : "boolean");
}

} // namespace duet::protocol

namespace {

using namespace duet::protocol;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

boost::json::object schema(char const* json) {
    return boost::json::parse(json).as_object();
}

// The bindings of a schema that must be valid; empty (plus a failure) when it is not.
std::vector<param_header> bindings(char const* json) {
    auto r = collect_param_headers(schema(json));
    if (!r) {
        ADD_FAILURE() << "rejected: " << r.error().message << "\nschema: " << json;
        return {};
    }
    return *r;
}

// ---------------------------------------------------------------------------------------------------------------
// Valid bindings.

// DIGEST §9: a string, integer or boolean property carries its binding.
TEST(ParamHeaders, BindsStringIntegerAndBooleanProperties) {
    EXPECT_THAT(bindings(R"({"type":"object","properties":{
                    "region":{"type":"string","x-mcp-header":"Region"},
                    "count":{"type":"integer","x-mcp-header":"Count"},
                    "dry":{"type":"boolean","x-mcp-header":"Dry-Run"}}})"),
                ElementsAre(param_header{"Region", {"region"}, param_type::string},
                            param_header{"Count", {"count"}, param_type::integer},
                            param_header{"Dry-Run", {"dry"}, param_type::boolean}));
}

// DIGEST §9: reachable through a chain of `properties`; the path names each property on the way down.
TEST(ParamHeaders, FollowsNestedPropertiesChain) {
    EXPECT_THAT(bindings(R"({"type":"object","properties":{
                    "target":{"type":"object","properties":{
                        "location":{"type":"object","properties":{
                            "zone":{"type":"string","x-mcp-header":"Zone"}}}}},
                    "id":{"type":"integer","x-mcp-header":"Id"}}})"),
                ElementsAre(param_header{"Zone", {"target", "location", "zone"}, param_type::string},
                            param_header{"Id", {"id"}, param_type::integer}));
}

// param_headers.hpp: "the part after Mcp-Param-, as declared": case is kept.
TEST(ParamHeaders, KeepsDeclaredNameAndCase) {
    EXPECT_THAT(bindings(R"({"properties":{"a":{"type":"string","x-mcp-header":"tEnAnT"}}})"),
                ElementsAre(param_header{"tEnAnT", {"a"}, param_type::string}));
}

// RFC 9110 tchar: every token character is accepted.
TEST(ParamHeaders, AcceptsEveryTokenCharacter) {
    EXPECT_THAT(bindings(R"({"properties":{"a":{"type":"string","x-mcp-header":"!#$%&'*+-.^_`|~09AZaz"}}})"),
                ElementsAre(param_header{"!#$%&'*+-.^_`|~09AZaz", {"a"}, param_type::string}));
}

// A schema without annotations binds nothing, and that is not an error.
TEST(ParamHeaders, SchemaWithoutAnnotationsBindsNothing) {
    EXPECT_THAT(bindings("{}"), IsEmpty());
    EXPECT_THAT(bindings(R"({"type":"object","properties":{"q":{"type":"string"},
                    "opts":{"type":"object","properties":{"n":{"type":"integer"}}}},"required":["q"]})"),
                IsEmpty());
}

// Annotation-free keywords beside the chain (items, anyOf, $defs without annotations) are fine.
TEST(ParamHeaders, UnannotatedCompositionBesideBindingsIsAccepted) {
    EXPECT_THAT(bindings(R"({"$defs":{"t":{"type":"string"}},"properties":{
                    "tags":{"type":"array","items":{"type":"string"}},
                    "mode":{"anyOf":[{"const":"a"},{"const":"b"}]},
                    "region":{"type":"string","x-mcp-header":"Region","enum":["eu","us"]}}})"),
                ElementsAre(param_header{"Region", {"region"}, param_type::string}));
}

// A property literally named "x-mcp-header" is a property, not an annotation.
TEST(ParamHeaders, PropertyNamedLikeTheAnnotationIsJustAProperty) {
    EXPECT_THAT(bindings(R"({"properties":{"x-mcp-header":{"type":"string","x-mcp-header":"Meta"}}})"),
                ElementsAre(param_header{"Meta", {"x-mcp-header"}, param_type::string}));
}

// ---------------------------------------------------------------------------------------------------------------
// DIGEST §9 constraints: each violation rejects the whole schema, and the message names the rule broken.

struct violation_case {
    std::string name;
    std::string json;
    std::string message_mentions;

    friend void PrintTo(violation_case const& row, std::ostream* os) { *os << row.name; }
};

class ParamHeadersViolation : public ::testing::TestWithParam<violation_case> {};

TEST_P(ParamHeadersViolation, IsRejectedNamingTheRule) {
    auto const& c = GetParam();
    auto r = collect_param_headers(schema(c.json.c_str()));
    ASSERT_FALSE(r) << "accepted: " << c.json;
    EXPECT_THAT(r.error().message, HasSubstr(c.message_mentions));
}

using V = violation_case;
constexpr char const* token = "non-empty HTTP token";
constexpr char const* twice = "declared twice";
constexpr char const* kind = "string, integer or boolean";
constexpr char const* unreachable = "not reachable through properties";

INSTANTIATE_TEST_SUITE_P(
    ParamHeaders, ParamHeadersViolation,
    ::testing::Values(
        // name: non-empty RFC 9110 token
        V{"EmptyName", R"({"properties":{"a":{"type":"string","x-mcp-header":""}}})", token},
        V{"NameWithSpace", R"({"properties":{"a":{"type":"string","x-mcp-header":"My Region"}}})", token},
        V{"NameWithColon", R"({"properties":{"a":{"type":"string","x-mcp-header":"Region:"}}})", token},
        V{"NameWithSlash", R"({"properties":{"a":{"type":"string","x-mcp-header":"a/b"}}})", token},
        V{"NameWithNonAscii", R"({"properties":{"a":{"type":"string","x-mcp-header":"R\u00e9gion"}}})",
          token},
        V{"NameNotString", R"({"properties":{"a":{"type":"string","x-mcp-header":5}}})", token},
        V{"NameNull", R"({"properties":{"a":{"type":"string","x-mcp-header":null}}})", token},
        // unique ignoring case
        V{"DuplicateName", R"({"properties":{"a":{"type":"string","x-mcp-header":"Region"},
                                             "b":{"type":"string","x-mcp-header":"Region"}}})",
          twice},
        V{"DuplicateIgnoringCase", R"({"properties":{"a":{"type":"string","x-mcp-header":"Region"},
                                                     "b":{"type":"integer","x-mcp-header":"REGION"}}})",
          twice},
        V{"DuplicateAcrossNesting", R"({"properties":{"a":{"type":"string","x-mcp-header":"Zone"},
              "o":{"type":"object","properties":{"z":{"type":"string","x-mcp-header":"zone"}}}}})",
          twice},
        // type: string, integer or boolean only
        V{"OnNumber", R"({"properties":{"a":{"type":"number","x-mcp-header":"Ratio"}}})", kind},
        V{"OnObject", R"({"properties":{"a":{"type":"object","x-mcp-header":"Obj","properties":{}}}})", kind},
        V{"OnArray", R"({"properties":{"a":{"type":"array","x-mcp-header":"List"}}})", kind},
        V{"OnNull", R"({"properties":{"a":{"type":"null","x-mcp-header":"Nothing"}}})", kind},
        V{"WithoutType", R"({"properties":{"a":{"x-mcp-header":"Any"}}})", kind},
        // reachable only through a chain of properties
        V{"OnSchemaRoot", R"({"type":"object","x-mcp-header":"Root","properties":{}})", "root"},
        V{"UnderItems",
          R"({"properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"I"}}}})",
          unreachable},
        V{"UnderPrefixItems",
          R"({"properties":{"a":{"type":"array","prefixItems":[{"type":"string","x-mcp-header":"I"}]}}})",
          unreachable},
        V{"UnderAnyOf", R"({"properties":{"a":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}}})",
          unreachable},
        V{"UnderOneOf", R"({"oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]})",
          unreachable},
        V{"UnderAllOf", R"({"allOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]})",
          unreachable},
        V{"UnderNot", R"({"properties":{"a":{"type":"string","not":{"x-mcp-header":"N"}}}})", unreachable},
        V{"UnderIfThenElse", R"({"if":{"properties":{"a":{"const":1}}},
                                 "then":{"properties":{"b":{"type":"string","x-mcp-header":"B"}}}})",
          unreachable},
        V{"UnderDefs",
          R"({"$defs":{"r":{"type":"string","x-mcp-header":"R"}},"properties":{"a":{"$ref":"#/$defs/r"}}})",
          unreachable},
        V{"UnderNestedDefs", R"({"properties":{"o":{"type":"object",
              "$defs":{"r":{"type":"string","x-mcp-header":"R"}},"properties":{}}}})",
          unreachable},
        V{"UnderAdditionalProperties", R"({"additionalProperties":{"type":"string","x-mcp-header":"Extra"}})",
          unreachable},
        V{"UnderPatternProperties", R"({"patternProperties":{"^x":{"type":"string","x-mcp-header":"P"}}})",
          unreachable},
        V{"PropertiesNotAnObject", R"({"properties":[{"type":"string","x-mcp-header":"P"}]})", unreachable},
        V{"PropertyNotAnObject", R"({"properties":{"a":[{"type":"string","x-mcp-header":"P"}]}})",
          unreachable}),
    [](auto const& row) { return row.param.name; });

// param_headers.hpp: result::value() throws at the edges (server registration), carrying the message.
TEST(ParamHeaders, ValueOfViolationThrowsInvalidArgument) {
    auto r = collect_param_headers(schema(R"({"properties":{"a":{"type":"number","x-mcp-header":"N"}}})"));
    try {
        (void)r.value();
        ADD_FAILURE() << "value() did not throw";
    } catch (std::invalid_argument const& e) {
        EXPECT_THAT(e.what(), HasSubstr(kind));
    }
}

} // namespace
