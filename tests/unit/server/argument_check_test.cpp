// The arguments check read out of a tool's schema once gives the same verdict, word for word, as looking
// the schema up by name on every call did (the per-call form is kept below as the reference).
#include <duet/server/argument_check.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using duet::server::argument_check;

// What tools/call ran on every request before the check was compiled.
std::optional<std::string> per_call_reference(json::object const& schema, json::object const& args) {
    if (auto const* req = schema.if_contains("required"); req && req->is_array())
        for (auto const& r : req->get_array())
            if (r.is_string() && !args.contains(r.get_string()))
                return "missing required argument \"" + std::string(r.get_string()) + "\"";
    auto const* props = schema.if_contains("properties");
    if (!props || !props->is_object())
        return std::nullopt;
    for (auto const& kv : args) {
        auto const* prop = props->get_object().if_contains(kv.key());
        auto const* type = prop && prop->is_object() ? prop->get_object().if_contains("type") : nullptr;
        if (!type || !type->is_string())
            continue;
        std::string_view const t = type->get_string();
        auto const& v = kv.value();
        bool const ok =
            (t == "string" && v.is_string()) || (t == "boolean" && v.is_bool()) ||
            (t == "number" && v.is_number()) ||
            (t == "integer" && (v.is_int64() || v.is_uint64() ||
                                (v.is_double() && std::trunc(v.get_double()) == v.get_double()))) ||
            (t == "object" && v.is_object()) || (t == "array" && v.is_array()) ||
            (t == "null" && v.is_null());
        if (!ok)
            return "argument \"" + std::string(kv.key()) + "\" must be of type " + std::string(t);
    }
    return std::nullopt;
}

TEST(ArgumentCheck, CompiledCheckAgreesWithThePerCallLookupsOnEverySchemaAndArguments) {
    std::vector<std::string> const schemas{
        R"({"type":"object"})",
        R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})",
        R"({"type":"object","required":["a",5,"b"]})",
        R"({"type":"object","required":"a","properties":"nope"})",
        R"({"type":"object","properties":{"z":{"type":"integer"},"a":{"type":"number"},"m":{"type":"boolean"},)"
        R"("o":{"type":"object"},"r":{"type":"array"},"n":{"type":"null"},"s":{"type":"string"}}})",
        R"({"type":"object","properties":{"u":{"type":"uuid"},"t":{"type":["string","null"]},"d":{},"e":5}})",
        R"({"type":"object","properties":{"b":{"type":"string"},"a":{"type":"string"}},"required":["b","a"]})",
    };
    std::vector<std::string> const arguments{
        R"({})",
        R"({"text":"hi"})",
        R"({"text":5})",
        R"({"a":1,"b":2})",
        R"({"b":"x"})",
        R"({"z":1,"a":1.5,"m":true,"o":{},"r":[],"n":null,"s":"s"})",
        R"({"z":1.0,"a":-3})",
        R"({"z":1.5})",
        R"({"z":18446744073709551615,"a":"1"})",
        R"({"m":1,"z":2})",
        R"({"o":[],"r":{}})",
        R"({"n":0})",
        R"({"u":"x","t":3,"d":4,"e":5})",
        R"({"s":null,"a":"x","b":"y"})",
        R"({"extra":1,"z":"no"})",
    };
    int disagreements = 0;
    int refusals = 0;
    for (auto const& s : schemas) {
        auto const schema = json::parse(s).as_object();
        argument_check const compiled(schema);
        for (auto const& a : arguments) {
            auto const args = json::parse(a).as_object();
            auto const expected = per_call_reference(schema, args);
            EXPECT_EQ(compiled.problem(args), expected) << s << " with " << a;
            disagreements += compiled.problem(args) != expected;
            refusals += expected.has_value();
        }
    }
    EXPECT_EQ(disagreements, 0);
    EXPECT_GT(refusals, 10); // the table exercises refusals, not only passes
}

TEST(ArgumentCheck, NamesTheFirstMissingRequiredThenTheFirstMistypedArgumentInArgumentOrder) {
    argument_check const check(json::parse(R"({"type":"object","properties":{"b":{"type":"string"},)"
                                           R"("a":{"type":"integer"}},"required":["b","a"]})")
                                   .as_object());
    EXPECT_EQ(check.problem(json::object{}), "missing required argument \"b\"");
    EXPECT_EQ(check.problem(json::object{{"b", "x"}}), "missing required argument \"a\"");
    EXPECT_EQ(check.problem(json::object{{"b", 1}, {"a", "y"}}), "argument \"b\" must be of type string");
    EXPECT_EQ(check.problem(json::object{{"a", "y"}, {"b", 1}}), "argument \"a\" must be of type integer");
    EXPECT_EQ(check.problem(json::object{{"a", 2.0}, {"b", "x"}}), std::nullopt);
}

TEST(ArgumentCheck, AnUnknownTypeNameRefusesEveryValueByThatName) {
    argument_check const check(json::parse(R"({"properties":{"u":{"type":"uuid"}}})").as_object());
    EXPECT_EQ(check.problem(json::object{{"u", "x"}}), "argument \"u\" must be of type uuid");
    EXPECT_EQ(check.problem(json::object{{"v", "x"}}), std::nullopt);
}

// An integer argument may be written as a double with no fractional part, however large; 1e300 once went
// through a cast to long long, undefined beyond its range.
TEST(ArgumentCheck, AWholeDoubleOfAnySizeIsAnIntegerAndAFractionIsNot) {
    argument_check const check(json::parse(R"({"properties":{"n":{"type":"integer"}}})").as_object());
    EXPECT_EQ(check.problem(json::parse(R"({"n":1e300})").as_object()), std::nullopt);
    EXPECT_EQ(check.problem(json::parse(R"({"n":-4.0})").as_object()), std::nullopt);
    EXPECT_EQ(check.problem(json::parse(R"({"n":18446744073709551615})").as_object()), std::nullopt);
    EXPECT_NE(check.problem(json::parse(R"({"n":2.5})").as_object()), std::nullopt);
    EXPECT_NE(check.problem(json::parse(R"({"n":1e-300})").as_object()), std::nullopt);
}

} // namespace
