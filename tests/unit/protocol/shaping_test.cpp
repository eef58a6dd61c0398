// shape_result() per era, version and method (ERA-POLICY "Consequences", DIGEST §4, §5, §11, §12): what a
// modern result gains (resultType, cache hints, serverInfo `_meta`), what a legacy result loses (every
// modern-only field, every field its negotiated version does not define), and, where the official schema of
// the version is at hand (../shared/spec), that the shaped results validate against it.
#include <duet/protocol/meta_keys.hpp>
#include <duet/protocol/method_table.hpp>
#include <duet/protocol/shaping.hpp>
#include <duet/protocol/version.hpp>

#include "support/schema_validator.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::protocol;
using duet::test::schema_check;
using duet::test::schema_mode;
using duet::test::schema_validator;

constexpr std::string_view server_info_key = meta_key::server_info;

json::object obj(std::string_view text) {
    return json::parse(text).as_object();
}

json::object const& duet_info() {
    static json::object const info =
        obj(R"({"name":"duet-test","title":"Duet Test","version":"1.2.3","description":"test server",
                "websiteUrl":"https://example.com/duet","icons":[{"src":"https://example.com/duet.png"}]})");
    return info;
}

json::object shaped(json::object result, era e, version v, method_id m, cache_hints hints = {},
                    json::object const* info = &duet_info()) {
    shape_result(result, {.era = e, .version = v, .method = m, .hints = hints, .server_info = info});
    return result;
}

json::object modern(json::object result, method_id m, cache_hints hints = {}) {
    return shaped(std::move(result), era::modern, version::v2026_07_28, m, hints);
}

json::object legacy(json::object result, version v, method_id m) {
    return shaped(std::move(result), era::legacy, v, m);
}

std::string method_name(method_id m) {
    return std::string(info(m).name);
}

// ---- Fixtures: results as a handler builds them, in the newest shape. ----

json::object rich_tool() {
    return obj(R"({"name":"search","title":"Search","description":"Finds things",
        "icons":[{"src":"https://example.com/search.png","mimeType":"image/png","sizes":["48x48"]}],
        "inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]},
        "outputSchema":{"type":"object","properties":{"hits":{"type":"integer"}}},
        "annotations":{"title":"Search tool","readOnlyHint":true,"openWorldHint":false},
        "_meta":{"com.example/tier":"gold"}})");
}

json::object tools_list_result() {
    json::object r;
    r["tools"] = json::array{rich_tool(), obj(R"({"name":"ids","inputSchema":{"type":"object"},
        "outputSchema":{"type":"array","items":{"type":"string"}}})")};
    r["nextCursor"] = "page-2";
    return r;
}

json::object call_tool_result() {
    return obj(R"({"content":[
        {"type":"text","text":"hello","annotations":{"audience":["user"],"priority":0.5,
                                                   "lastModified":"2025-01-12T15:00:58Z"}},
        {"type":"image","data":"aGk=","mimeType":"image/png"},
        {"type":"audio","data":"aGk=","mimeType":"audio/wav"},
        {"type":"resource_link","uri":"file:///a.txt","name":"a.txt","title":"A file","mimeType":"text/plain",
         "icons":[{"src":"https://example.com/file.png"}]},
        {"type":"resource","resource":{"uri":"file:///b.txt","mimeType":"text/plain","text":"bee"},
         "annotations":{"audience":["user"],"lastModified":"2025-01-12T15:00:58Z"}}],
        "structuredContent":{"hits":3},"isError":false})");
}

json::object prompts_list_result() {
    return obj(R"({"prompts":[{"name":"review","title":"Code review","description":"Reviews code",
        "icons":[{"src":"https://example.com/review.png"}],
        "arguments":[{"name":"code","title":"Code","description":"The code","required":true}]}]})");
}

json::object get_prompt_result() {
    return obj(R"({"description":"A review","messages":[
        {"role":"user","content":{"type":"text","text":"review this"}},
        {"role":"assistant","content":{"type":"audio","data":"aGk=","mimeType":"audio/wav"}},
        {"role":"user","content":{"type":"resource_link","uri":"file:///a.txt","name":"a.txt","title":"A",
                                  "icons":[{"src":"https://example.com/a.png"}],
                                  "annotations":{"priority":0.1,"lastModified":"2025-01-12T15:00:58Z"}}},
        {"role":"user","content":{"type":"image","data":"aGk=","mimeType":"image/png"}}]})");
}

json::object resources_list_result() {
    return obj(R"({"resources":[{"uri":"file:///a.txt","name":"a.txt","title":"A file","description":"The A",
        "mimeType":"text/plain","size":3,"icons":[{"src":"https://example.com/a.png"}],
        "annotations":{"audience":["assistant"],"priority":1,"lastModified":"2025-01-12T15:00:58Z"}}]})");
}

json::object templates_list_result() {
    return obj(R"({"resourceTemplates":[{"uriTemplate":"file:///{path}","name":"files","title":"Files",
        "description":"Any file","mimeType":"text/plain","icons":[{"src":"https://example.com/f.png"}],
        "annotations":{"priority":0.2,"lastModified":"2025-01-12T15:00:58Z"}}]})");
}

json::object read_resource_result() {
    return obj(R"({"contents":[{"uri":"file:///a.txt","mimeType":"text/plain","text":"aaa"},
        {"uri":"file:///b.bin","mimeType":"application/octet-stream","blob":"aGk="}]})");
}

json::object complete_result() {
    return obj(R"({"completion":{"values":["py","python"],"total":2,"hasMore":false}})");
}

json::object discover_result() {
    return obj(R"({"supportedVersions":["2026-07-28"],"instructions":"Use search.",
        "capabilities":{"tools":{"listChanged":true},"resources":{"listChanged":true},"prompts":{},
                        "completions":{},"extensions":{"com.example/ext":{}}}})");
}

json::object listen_result() {
    return obj(R"({"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"}})");
}

json::object input_required_result() {
    return obj(R"({"resultType":"input_required","requestState":"opaque-state",
        "inputRequests":{"who":{"method":"elicitation/create","params":{"message":"Your name?",
            "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},
                               "required":["name"]}}}}})");
}

json::object initialize_result(version v) {
    auto r = obj(R"({"capabilities":{"logging":{},"completions":{},"prompts":{"listChanged":true},
        "resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true},
        "tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}},
        "extensions":{"com.example/ext":{}}},
        "instructions":"Use search."})");
    r["protocolVersion"] = to_string(v);
    r["serverInfo"] = duet_info();
    return r;
}

/// The newest-shape result a handler of `m` builds.
json::object fixture(method_id m) {
    switch (m) {
    case method_id::server_discover:
        return discover_result();
    case method_id::subscriptions_listen:
        return listen_result();
    case method_id::tools_list:
        return tools_list_result();
    case method_id::tools_call:
        return call_tool_result();
    case method_id::prompts_list:
        return prompts_list_result();
    case method_id::prompts_get:
        return get_prompt_result();
    case method_id::resources_list:
        return resources_list_result();
    case method_id::resources_templates_list:
        return templates_list_result();
    case method_id::resources_read:
        return read_resource_result();
    case method_id::completion_complete:
        return complete_result();
    case method_id::initialize:
        return initialize_result(latest_handshake_version);
    default:
        return {};
    }
}

// Every method a modern client can call, and whether its complete result is cacheable (DIGEST §5).
struct modern_method_case {
    char const* name;
    method_id method;
    bool cacheable;
};

void PrintTo(modern_method_case const& c, std::ostream* os) {
    *os << c.name;
}

constexpr modern_method_case modern_methods[] = {
    {"ServerDiscover", method_id::server_discover, true},
    {"SubscriptionsListen", method_id::subscriptions_listen, false},
    {"ToolsList", method_id::tools_list, true},
    {"ToolsCall", method_id::tools_call, false},
    {"PromptsList", method_id::prompts_list, true},
    {"PromptsGet", method_id::prompts_get, false},
    {"ResourcesList", method_id::resources_list, true},
    {"ResourcesTemplatesList", method_id::resources_templates_list, true},
    {"ResourcesRead", method_id::resources_read, true},
    {"CompletionComplete", method_id::completion_complete, false},
};

auto const case_name = [](auto const& p) {
    return std::string(p.param.name);
};

// ==== Modern ====

class ModernMethod : public testing::TestWithParam<modern_method_case> {};

TEST_P(ModernMethod, ResultTypeIsComplete) {
    auto const r = modern(fixture(GetParam().method), GetParam().method);
    ASSERT_TRUE(r.contains("resultType"));
    EXPECT_EQ(r.at("resultType"), "complete");
}

TEST_P(ModernMethod, DefaultCacheHintsExactlyOnCacheableMethods) {
    auto const& c = GetParam();
    ASSERT_EQ(info(c.method).cacheable, c.cacheable) << "method table and DIGEST §5 disagree";
    // Stale hints a handler left behind never survive on a method that has none.
    auto in = fixture(c.method);
    in["ttlMs"] = 5;
    in["cacheScope"] = "public";
    auto const r = modern(std::move(in), c.method);
    if (c.cacheable) {
        ASSERT_TRUE(r.contains("ttlMs") && r.contains("cacheScope")) << json::serialize(r);
        EXPECT_TRUE(r.at("ttlMs").is_int64());
        EXPECT_EQ(r.at("ttlMs"), 0);
        EXPECT_EQ(r.at("cacheScope"), "private");
    } else {
        EXPECT_FALSE(r.contains("ttlMs")) << json::serialize(r);
        EXPECT_FALSE(r.contains("cacheScope")) << json::serialize(r);
    }
}

TEST_P(ModernMethod, StampsServerInfoMetaKeepingOtherKeys) {
    auto in = fixture(GetParam().method);
    in["_meta"].emplace_object()["com.example/trace"] = "t-1";
    if (GetParam().method == method_id::subscriptions_listen)
        in["_meta"].as_object()[meta_key::subscription_id] = "listen-1";
    auto const r = modern(std::move(in), GetParam().method);
    auto const& meta = r.at("_meta").as_object();
    EXPECT_EQ(meta.at(server_info_key), duet_info());
    EXPECT_EQ(meta.at("com.example/trace"), "t-1");
    if (GetParam().method == method_id::subscriptions_listen) {
        EXPECT_EQ(meta.at(meta_key::subscription_id), "listen-1");
    }
}

INSTANTIATE_TEST_SUITE_P(Shaping, ModernMethod, testing::ValuesIn(modern_methods), case_name);

TEST(ShapingModern, UnknownResultTypeBecomesComplete) {
    auto in = tools_list_result();
    in["resultType"] = "task";
    EXPECT_EQ(modern(std::move(in), method_id::tools_list).at("resultType"), "complete");
    auto odd = call_tool_result();
    odd["resultType"] = 7;
    EXPECT_EQ(modern(std::move(odd), method_id::tools_call).at("resultType"), "complete");
}

// The three methods that may end in input_required (DIGEST §4): kept, never cacheable, still stamped.
struct input_required_case {
    char const* name;
    method_id method;
};

void PrintTo(input_required_case const& c, std::ostream* os) {
    *os << c.name;
}

class ModernInputRequired : public testing::TestWithParam<input_required_case> {};

TEST_P(ModernInputRequired, KeptWithoutCacheHints) {
    auto const m = GetParam().method;
    ASSERT_TRUE(info(m).may_require_input);
    auto in = input_required_result();
    in["ttlMs"] = 1000;
    in["cacheScope"] = "public";
    auto const r = modern(std::move(in), m, {.ttl_ms = 60'000, .scope = cache_scope::public_cache});
    EXPECT_EQ(r.at("resultType"), "input_required");
    EXPECT_FALSE(r.contains("ttlMs"));
    EXPECT_FALSE(r.contains("cacheScope"));
    EXPECT_EQ(r.at("requestState"), "opaque-state");
    EXPECT_TRUE(r.at("inputRequests").as_object().contains("who"));
    EXPECT_EQ(r.at("_meta").at(server_info_key), duet_info());
}

INSTANTIATE_TEST_SUITE_P(Shaping, ModernInputRequired,
                         testing::Values(input_required_case{"ToolsCall", method_id::tools_call},
                                         input_required_case{"PromptsGet", method_id::prompts_get},
                                         input_required_case{"ResourcesRead", method_id::resources_read}),
                         case_name);

// Configured hints are used as given, except that a negative TTL is clamped to 0 (SEP-2549: MUST be >= 0).
struct hint_case {
    char const* name;
    cache_hints hints;
    std::int64_t ttl;
    char const* scope;
};

void PrintTo(hint_case const& c, std::ostream* os) {
    *os << c.name;
}

class ModernCacheHints : public testing::TestWithParam<hint_case> {};

TEST_P(ModernCacheHints, UsedOnEveryCacheableMethod) {
    auto const& c = GetParam();
    for (auto const& m : modern_methods) {
        if (!m.cacheable)
            continue;
        auto const r = modern(fixture(m.method), m.method, c.hints);
        ASSERT_TRUE(r.at("ttlMs").is_int64()) << m.name;
        EXPECT_EQ(r.at("ttlMs").as_int64(), c.ttl) << m.name;
        EXPECT_EQ(r.at("cacheScope"), c.scope) << m.name;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Shaping, ModernCacheHints,
    testing::Values(
        hint_case{"Defaults", {}, 0, "private"},
        hint_case{"PublicMinute", {.ttl_ms = 60'000, .scope = cache_scope::public_cache}, 60'000, "public"},
        hint_case{
            "PrivateHour", {.ttl_ms = 3'600'000, .scope = cache_scope::private_cache}, 3'600'000, "private"},
        hint_case{"NegativeClampedToZero", {.ttl_ms = -5, .scope = cache_scope::public_cache}, 0, "public"},
        hint_case{"MinimumClampedToZero", {.ttl_ms = std::numeric_limits<std::int64_t>::min()}, 0, "private"},
        hint_case{"MaximumKept",
                  {.ttl_ms = std::numeric_limits<std::int64_t>::max()},
                  std::numeric_limits<std::int64_t>::max(),
                  "private"}),
    case_name);

TEST(ShapingModern, ConfiguredHintsReplaceHandlerHints) {
    auto in = read_resource_result();
    in["ttlMs"] = -1;
    in["cacheScope"] = "public";
    auto const r = modern(std::move(in), method_id::resources_read, {.ttl_ms = 250});
    EXPECT_EQ(r.at("ttlMs"), 250);
    EXPECT_EQ(r.at("cacheScope"), "private");
}

TEST(ShapingModern, ReplacesHandlerServerInfo) {
    auto in = complete_result();
    in["_meta"] = obj(R"({"io.modelcontextprotocol/serverInfo":{"name":"impostor","version":"0"}})");
    auto const r = modern(std::move(in), method_id::completion_complete);
    EXPECT_EQ(r.at("_meta").at(server_info_key), duet_info());
}

TEST(ShapingModern, NonObjectMetaBecomesObject) {
    auto in = complete_result();
    in["_meta"] = "junk";
    auto const r = modern(std::move(in), method_id::completion_complete);
    ASSERT_TRUE(r.at("_meta").is_object());
    EXPECT_EQ(r.at("_meta").as_object().size(), 1u);
    EXPECT_EQ(r.at("_meta").at(server_info_key), duet_info());
}

TEST(ShapingModern, WithoutServerInfoMetaIsLeftAlone) {
    auto const bare = shaped(complete_result(), era::modern, version::v2026_07_28,
                             method_id::completion_complete, {}, nullptr);
    EXPECT_FALSE(bare.contains("_meta"));
    EXPECT_EQ(bare.at("resultType"), "complete");

    auto in = complete_result();
    in["_meta"] = obj(R"({"com.example/trace":"t-1"})");
    auto const kept =
        shaped(std::move(in), era::modern, version::v2026_07_28, method_id::completion_complete, {}, nullptr);
    EXPECT_EQ(kept.at("_meta"), obj(R"({"com.example/trace":"t-1"})"));
}

// Modern results keep every field of the newest shape: titles, icons, annotations, any outputSchema, any
// structuredContent, audio and resource_link content.
TEST(ShapingModern, KeepsNewestShapeFields) {
    auto const tools = modern(tools_list_result(), method_id::tools_list);
    auto const& tool = tools.at("tools").at(0).as_object();
    for (auto const* key : {"title", "icons", "annotations", "outputSchema", "description", "_meta"})
        EXPECT_TRUE(tool.contains(key)) << key;
    EXPECT_EQ(tools.at("tools").at(1).at("outputSchema").at("type"), "array");
    EXPECT_EQ(tools.at("nextCursor"), "page-2");

    auto in = call_tool_result();
    in["structuredContent"] = json::array{1, 2};
    auto const call = modern(std::move(in), method_id::tools_call);
    EXPECT_EQ(call.at("structuredContent"), (json::array{1, 2}));
    EXPECT_EQ(call.at("content").as_array().size(), 5u);
    EXPECT_EQ(call.at("content").at(3).at("icons").as_array().size(), 1u);
    EXPECT_TRUE(call.at("content").at(0).at("annotations").as_object().contains("lastModified"));

    auto scalar = call_tool_result();
    scalar["structuredContent"] = "plain";
    EXPECT_EQ(modern(std::move(scalar), method_id::tools_call).at("structuredContent"), "plain");

    auto const prompt = modern(get_prompt_result(), method_id::prompts_get);
    EXPECT_EQ(prompt.at("messages").as_array().size(), 4u);
}

TEST(ShapingModern, DiscoverKeepsExtensionsCapability) {
    auto const r = modern(discover_result(), method_id::server_discover);
    EXPECT_TRUE(r.at("capabilities").as_object().contains("extensions"));
    EXPECT_TRUE(r.at("capabilities").as_object().contains("completions"));
    EXPECT_EQ(r.at("supportedVersions"), (json::array{"2026-07-28"}));
}

// ==== Legacy ====

std::string compact(std::string_view version_name) {
    std::string s;
    for (char ch : version_name)
        if (ch != '-')
            s += ch;
    return s;
}

// Every legacy version against every legacy method: the modern-only fields go, other `_meta` keys stay.
struct legacy_method_case {
    std::string name;
    version v;
    method_id method;
};

void PrintTo(legacy_method_case const& c, std::ostream* os) {
    *os << c.name;
}

std::vector<legacy_method_case> legacy_method_cases() {
    struct named {
        char const* name;
        method_id id;
    };
    constexpr named methods[] = {
        {"Initialize", method_id::initialize},
        {"Ping", method_id::ping},
        {"LoggingSetLevel", method_id::logging_set_level},
        {"ResourcesSubscribe", method_id::resources_subscribe},
        {"ToolsList", method_id::tools_list},
        {"ToolsCall", method_id::tools_call},
        {"PromptsList", method_id::prompts_list},
        {"PromptsGet", method_id::prompts_get},
        {"ResourcesList", method_id::resources_list},
        {"ResourcesTemplatesList", method_id::resources_templates_list},
        {"ResourcesRead", method_id::resources_read},
        {"CompletionComplete", method_id::completion_complete},
    };
    std::vector<legacy_method_case> out;
    for (auto v : handshake_versions)
        for (auto const& m : methods)
            out.push_back({std::string(m.name) + "V" + compact(to_string(v)), v, m.id});
    return out;
}

class LegacyMethod : public testing::TestWithParam<legacy_method_case> {};

TEST_P(LegacyMethod, CarriesNoModernField) {
    auto const& c = GetParam();
    ASSERT_TRUE(info(c.method).available_in(c.v));
    auto in = c.method == method_id::initialize ? initialize_result(c.v) : fixture(c.method);
    in["resultType"] = "complete";
    in["ttlMs"] = 60'000;
    in["cacheScope"] = "public";
    in["_meta"] =
        obj(R"({"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"},"com.example/k":1})");
    auto const r =
        shaped(std::move(in), era::legacy, c.v, c.method, {.ttl_ms = 5, .scope = cache_scope::public_cache});
    EXPECT_FALSE(r.contains("resultType"));
    EXPECT_FALSE(r.contains("ttlMs"));
    EXPECT_FALSE(r.contains("cacheScope"));
    ASSERT_TRUE(r.contains("_meta"));
    EXPECT_EQ(r.at("_meta"), obj(R"({"com.example/k":1})"));
}

INSTANTIATE_TEST_SUITE_P(Shaping, LegacyMethod, testing::ValuesIn(legacy_method_cases()), case_name);

TEST(ShapingLegacy, MetaHoldingOnlyServerInfoIsRemoved) {
    for (auto v : handshake_versions) {
        auto in = complete_result();
        in["_meta"] = obj(R"({"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"}})");
        auto const r = legacy(std::move(in), v, method_id::completion_complete);
        EXPECT_FALSE(r.contains("_meta")) << to_string(v);
        EXPECT_EQ(r, complete_result()) << to_string(v);
    }
}

TEST(ShapingLegacy, EmptyResultStaysEmpty) {
    for (auto v : handshake_versions) {
        EXPECT_TRUE(legacy({}, v, method_id::ping).empty());
        EXPECT_TRUE(legacy(obj(R"({"resultType":"complete"})"), v, method_id::logging_set_level).empty());
    }
}

// Per-version presence of tool fields (DIGEST §11).
struct tool_case {
    char const* name;
    version v;
    bool title;
    bool icons;
    bool annotations;
    bool output_schema;
};

void PrintTo(tool_case const& c, std::ostream* os) {
    *os << c.name;
}

class LegacyTool : public testing::TestWithParam<tool_case> {};

TEST_P(LegacyTool, HasOnlyFieldsOfItsVersion) {
    auto const& c = GetParam();
    auto in = tools_list_result();
    in["tools"].as_array()[0].as_object()["execution"] = obj(R"({"taskSupport":"optional"})");
    auto const r = legacy(std::move(in), c.v, method_id::tools_list);
    auto const& tool = r.at("tools").at(0).as_object();
    EXPECT_EQ(tool.contains("title"), c.title);
    EXPECT_EQ(tool.contains("icons"), c.icons);
    EXPECT_EQ(tool.contains("annotations"), c.annotations);
    EXPECT_EQ(tool.contains("outputSchema"), c.output_schema);
    EXPECT_EQ(tool.contains("execution"), c.v == version::v2025_11_25) << "2025-11-25 alone has tasks";
    for (auto const* key : {"name", "description", "inputSchema", "_meta"})
        EXPECT_TRUE(tool.contains(key)) << key;
    EXPECT_EQ(tool.at("inputSchema"), rich_tool().at("inputSchema"));
    // An array outputSchema exists in no legacy version.
    EXPECT_FALSE(r.at("tools").at(1).as_object().contains("outputSchema"));
    EXPECT_EQ(r.at("nextCursor"), "page-2");
}

INSTANTIATE_TEST_SUITE_P(
    Shaping, LegacyTool,
    testing::Values(tool_case{"V20241105", version::v2024_11_05, false, false, false, false},
                    tool_case{"V20250326", version::v2025_03_26, false, false, true, false},
                    tool_case{"V20250618", version::v2025_06_18, true, false, true, true},
                    tool_case{"V20251125", version::v2025_11_25, true, true, true, true}),
    case_name);

// outputSchema: only an object schema with type "object", and only from 2025-06-18; modern keeps any schema.
struct output_schema_case {
    char const* name;
    era e;
    version v;
    char const* schema;
    bool kept;
};

void PrintTo(output_schema_case const& c, std::ostream* os) {
    *os << c.name;
}

class OutputSchema : public testing::TestWithParam<output_schema_case> {};

TEST_P(OutputSchema, KeptOnlyWhereDefined) {
    auto const& c = GetParam();
    json::object tool{{"name", "t"}, {"inputSchema", obj(R"({"type":"object"})")}};
    tool["outputSchema"] = json::parse(c.schema);
    json::object in{{"tools", json::array{tool}}};
    auto const r = shaped(std::move(in), c.e, c.v, method_id::tools_list);
    auto const& out = r.at("tools").at(0).as_object();
    EXPECT_EQ(out.contains("outputSchema"), c.kept);
    if (c.kept) {
        EXPECT_EQ(out.at("outputSchema"), json::parse(c.schema));
    }
}

INSTANTIATE_TEST_SUITE_P(
    Shaping, OutputSchema,
    testing::Values(output_schema_case{"ObjectV20250326", era::legacy, version::v2025_03_26,
                                       R"({"type":"object"})", false},
                    output_schema_case{"ObjectV20250618", era::legacy, version::v2025_06_18,
                                       R"({"type":"object","properties":{"a":{"type":"string"}}})", true},
                    output_schema_case{"ObjectV20251125", era::legacy, version::v2025_11_25,
                                       R"({"type":"object"})", true},
                    output_schema_case{"ArrayV20251125", era::legacy, version::v2025_11_25,
                                       R"({"type":"array","items":{"type":"string"}})", false},
                    output_schema_case{"UntypedV20251125", era::legacy, version::v2025_11_25,
                                       R"({"properties":{"a":{"type":"string"}}})", false},
                    output_schema_case{"TypeListV20250618", era::legacy, version::v2025_06_18,
                                       R"({"type":["object","null"]})", false},
                    output_schema_case{"NotAnObjectV20251125", era::legacy, version::v2025_11_25, R"(true)",
                                       false},
                    output_schema_case{"ArrayModern", era::modern, version::v2026_07_28,
                                       R"({"type":"array","items":{"type":"string"}})", true},
                    output_schema_case{"UntypedModern", era::modern, version::v2026_07_28,
                                       R"({"anyOf":[{"type":"string"}]})", true}),
    case_name);

// structuredContent: only an object, and only from 2025-06-18 (DIGEST §12); modern keeps any JSON value.
struct structured_case {
    char const* name;
    era e;
    version v;
    char const* value;
    bool kept;
};

void PrintTo(structured_case const& c, std::ostream* os) {
    *os << c.name;
}

class StructuredContent : public testing::TestWithParam<structured_case> {};

TEST_P(StructuredContent, KeptOnlyWhereDefined) {
    auto const& c = GetParam();
    json::object in{{"content", json::array{obj(R"({"type":"text","text":"x"})")}}};
    in["structuredContent"] = json::parse(c.value);
    auto const r = shaped(std::move(in), c.e, c.v, method_id::tools_call);
    EXPECT_EQ(r.contains("structuredContent"), c.kept);
    if (c.kept) {
        EXPECT_EQ(r.at("structuredContent"), json::parse(c.value));
    }
    EXPECT_EQ(r.at("content").as_array().size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Shaping, StructuredContent,
    testing::Values(
        structured_case{"ObjectV20241105", era::legacy, version::v2024_11_05, R"({"a":1})", false},
        structured_case{"ObjectV20250326", era::legacy, version::v2025_03_26, R"({"a":1})", false},
        structured_case{"ObjectV20250618", era::legacy, version::v2025_06_18, R"({"a":1})", true},
        structured_case{"ObjectV20251125", era::legacy, version::v2025_11_25, R"({"a":1})", true},
        structured_case{"ArrayV20251125", era::legacy, version::v2025_11_25, R"([1,2])", false},
        structured_case{"StringV20250618", era::legacy, version::v2025_06_18, R"("s")", false},
        structured_case{"NullV20251125", era::legacy, version::v2025_11_25, R"(null)", false},
        structured_case{"ArrayModern", era::modern, version::v2026_07_28, R"([1,2])", true},
        structured_case{"NullModern", era::modern, version::v2026_07_28, R"(null)", true}),
    case_name);

// Content blocks of a tools/call result per version: audio from 2025-03-26, resource_link from 2025-06-18.
struct content_case {
    char const* name;
    version v;
    std::vector<std::string> types;
    bool link_title;
    bool link_icons;
    bool last_modified;
};

void PrintTo(content_case const& c, std::ostream* os) {
    *os << c.name;
}

class LegacyContent : public testing::TestWithParam<content_case> {};

std::vector<std::string> content_types(json::array const& content) {
    std::vector<std::string> out;
    for (auto const& block : content)
        out.emplace_back(block.at("type").as_string());
    return out;
}

TEST_P(LegacyContent, ToolsCallBlocksOfItsVersion) {
    auto const& c = GetParam();
    auto const r = legacy(call_tool_result(), c.v, method_id::tools_call);
    auto const& content = r.at("content").as_array();
    EXPECT_EQ(content_types(content), c.types);
    EXPECT_EQ(content.at(0).at("annotations").as_object().contains("lastModified"), c.last_modified);
    EXPECT_EQ(content.at(0).at("annotations").at("priority"), 0.5);
    for (auto const& block : content) {
        if (block.at("type") != "resource_link")
            continue;
        EXPECT_EQ(block.as_object().contains("title"), c.link_title);
        EXPECT_EQ(block.as_object().contains("icons"), c.link_icons);
        EXPECT_EQ(block.at("uri"), "file:///a.txt");
    }
    EXPECT_EQ(content.back().at("resource").at("text"), "bee");
    EXPECT_EQ(content.back().at("annotations").as_object().contains("lastModified"), c.last_modified);
}

TEST_P(LegacyContent, PromptsGetMessagesOfItsVersion) {
    auto const& c = GetParam();
    auto const r = legacy(get_prompt_result(), c.v, method_id::prompts_get);
    std::vector<std::string> types;
    for (auto const& m : r.at("messages").as_array())
        types.emplace_back(m.at("content").at("type").as_string());
    std::vector<std::string> expected;
    for (auto const* t : {"text", "audio", "resource_link", "image"})
        if (std::find(c.types.begin(), c.types.end(), t) != c.types.end())
            expected.emplace_back(t);
    EXPECT_EQ(types, expected);
    EXPECT_EQ(r.at("description"), "A review");
    for (auto const& m : r.at("messages").as_array()) {
        auto const& block = m.at("content").as_object();
        if (block.at("type") != "resource_link")
            continue;
        EXPECT_EQ(block.contains("title"), c.link_title);
        EXPECT_EQ(block.contains("icons"), c.link_icons);
        EXPECT_EQ(block.at("annotations").as_object().contains("lastModified"), c.last_modified);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Shaping, LegacyContent,
    testing::Values(
        content_case{"V20241105", version::v2024_11_05, {"text", "image", "resource"}, false, false, false},
        content_case{
            "V20250326", version::v2025_03_26, {"text", "image", "audio", "resource"}, false, false, false},
        content_case{"V20250618",
                     version::v2025_06_18,
                     {"text", "image", "audio", "resource_link", "resource"},
                     true,
                     false,
                     true},
        content_case{"V20251125",
                     version::v2025_11_25,
                     {"text", "image", "audio", "resource_link", "resource"},
                     true,
                     true,
                     true}),
    case_name);

// Prompts, resources and templates: title from 2025-06-18, icons from 2025-11-25, annotations.lastModified
// from 2025-06-18.
struct entity_case {
    char const* name;
    version v;
    bool title;
    bool icons;
};

void PrintTo(entity_case const& c, std::ostream* os) {
    *os << c.name;
}

class LegacyEntity : public testing::TestWithParam<entity_case> {};

TEST_P(LegacyEntity, PromptFields) {
    auto const& c = GetParam();
    auto const r = legacy(prompts_list_result(), c.v, method_id::prompts_list);
    auto const& prompt = r.at("prompts").at(0).as_object();
    EXPECT_EQ(prompt.contains("title"), c.title);
    EXPECT_EQ(prompt.contains("icons"), c.icons);
    auto const& arg = prompt.at("arguments").at(0).as_object();
    EXPECT_EQ(arg.contains("title"), c.title);
    EXPECT_EQ(arg.at("required"), true);
    EXPECT_EQ(prompt.at("description"), "Reviews code");
}

TEST_P(LegacyEntity, ResourceFields) {
    auto const& c = GetParam();
    auto const r = legacy(resources_list_result(), c.v, method_id::resources_list);
    auto const& res = r.at("resources").at(0).as_object();
    EXPECT_EQ(res.contains("title"), c.title);
    EXPECT_EQ(res.contains("icons"), c.icons);
    EXPECT_EQ(res.at("annotations").as_object().contains("lastModified"), c.title);
    EXPECT_EQ(res.at("annotations").at("audience"), (json::array{"assistant"}));
    EXPECT_EQ(res.at("size"), 3);
}

TEST_P(LegacyEntity, ResourceTemplateFields) {
    auto const& c = GetParam();
    auto const r = legacy(templates_list_result(), c.v, method_id::resources_templates_list);
    auto const& t = r.at("resourceTemplates").at(0).as_object();
    EXPECT_EQ(t.contains("title"), c.title);
    EXPECT_EQ(t.contains("icons"), c.icons);
    EXPECT_EQ(t.at("annotations").as_object().contains("lastModified"), c.title);
    EXPECT_EQ(t.at("uriTemplate"), "file:///{path}");
}

TEST_P(LegacyEntity, InitializeServerInfo) {
    auto const& c = GetParam();
    auto const r = legacy(initialize_result(c.v), c.v, method_id::initialize);
    auto const& si = r.at("serverInfo").as_object();
    EXPECT_EQ(si.at("name"), "duet-test");
    EXPECT_EQ(si.at("version"), "1.2.3");
    EXPECT_EQ(si.contains("title"), c.title);
    EXPECT_EQ(si.contains("description"), c.icons);
    EXPECT_EQ(si.contains("websiteUrl"), c.icons);
    EXPECT_EQ(si.contains("icons"), c.icons);
    EXPECT_EQ(r.at("protocolVersion").as_string(), to_string(c.v));
    EXPECT_EQ(r.at("instructions"), "Use search.");

    // shape_implementation() is the same rule, for clientInfo too.
    auto impl = duet_info();
    shape_implementation(impl, c.v);
    EXPECT_EQ(impl, si);
}

INSTANTIATE_TEST_SUITE_P(Shaping, LegacyEntity,
                         testing::Values(entity_case{"V20241105", version::v2024_11_05, false, false},
                                         entity_case{"V20250326", version::v2025_03_26, false, false},
                                         entity_case{"V20250618", version::v2025_06_18, true, false},
                                         entity_case{"V20251125", version::v2025_11_25, true, true}),
                         case_name);

TEST(ShapingLegacy, ImplementationUntouchedForModern) {
    auto impl = duet_info();
    shape_implementation(impl, version::v2026_07_28);
    EXPECT_EQ(impl, duet_info());
}

// Capabilities in InitializeResult: completions from 2025-03-26, tasks only in 2025-11-25, extensions never.
struct capability_case {
    char const* name;
    version v;
    bool completions;
    bool tasks;
};

void PrintTo(capability_case const& c, std::ostream* os) {
    *os << c.name;
}

class LegacyCapabilities : public testing::TestWithParam<capability_case> {};

TEST_P(LegacyCapabilities, OnlyThoseOfItsVersion) {
    auto const& c = GetParam();
    auto const r = legacy(initialize_result(c.v), c.v, method_id::initialize);
    auto const& caps = r.at("capabilities").as_object();
    EXPECT_EQ(caps.contains("completions"), c.completions);
    EXPECT_EQ(caps.contains("tasks"), c.tasks);
    EXPECT_FALSE(caps.contains("extensions"));
    for (auto const* key : {"logging", "prompts", "resources", "tools"})
        EXPECT_TRUE(caps.contains(key)) << key;
    EXPECT_EQ(caps.at("resources"), obj(R"({"subscribe":true,"listChanged":true})"));
}

INSTANTIATE_TEST_SUITE_P(Shaping, LegacyCapabilities,
                         testing::Values(capability_case{"V20241105", version::v2024_11_05, false, false},
                                         capability_case{"V20250326", version::v2025_03_26, true, false},
                                         capability_case{"V20250618", version::v2025_06_18, true, false},
                                         capability_case{"V20251125", version::v2025_11_25, true, true}),
                         case_name);

// Results with no per-version delta pass through unchanged apart from the modern-only fields.
TEST(ShapingLegacy, ReadAndCompleteUnchanged) {
    for (auto v : handshake_versions) {
        EXPECT_EQ(legacy(read_resource_result(), v, method_id::resources_read), read_resource_result());
        EXPECT_EQ(legacy(complete_result(), v, method_id::completion_complete), complete_result());
    }
}

// Shaping twice is shaping once, in both eras.
TEST(Shaping, IsIdempotent) {
    for (auto const& m : modern_methods) {
        auto once = modern(fixture(m.method), m.method, {.ttl_ms = 10});
        EXPECT_EQ(modern(once, m.method, {.ttl_ms = 10}), once) << m.name;
    }
    for (auto v : handshake_versions)
        for (auto m :
             {method_id::initialize, method_id::tools_list, method_id::tools_call, method_id::prompts_list,
              method_id::prompts_get, method_id::resources_list, method_id::resources_templates_list}) {
            auto in = m == method_id::initialize ? initialize_result(v) : fixture(m);
            auto once = legacy(std::move(in), v, m);
            EXPECT_EQ(legacy(once, v, m), once) << method_name(m) << " " << to_string(v);
        }
}

// Shapes shaping does not understand pass through untouched, in both eras: it never throws or crashes on
// them.
TEST(ShapingLegacy, ToleratesUnexpectedShapes) {
    auto const odd = obj(R"({"tools":"none","prompts":[1,null,"p"],"resources":{"a":1},
        "content":[7,{"text":"no type"},{"type":5}],"messages":[{"role":"user"},3,{"content":"x"}],
        "capabilities":[],"serverInfo":"duet","structuredContent":{"a":1}})");
    for (auto v : handshake_versions)
        for (auto const& row : method_table()) {
            if (row.kind != message_kind::request || !row.available_in(v))
                continue;
            auto const r = legacy(odd, v, row.id);
            EXPECT_EQ(r.at("content"), odd.at("content")) << row.name;
            EXPECT_EQ(r.at("messages"), odd.at("messages")) << row.name;
            EXPECT_EQ(r.at("tools"), "none") << row.name;
            EXPECT_EQ(r.at("serverInfo"), "duet") << row.name;
        }
    for (auto const& m : modern_methods) {
        auto const r = modern(odd, m.method);
        EXPECT_EQ(r.at("content"), odd.at("content")) << m.name;
        EXPECT_EQ(r.at("structuredContent"), odd.at("structuredContent")) << m.name;
    }
}

TEST(ShapingModern, EmptyResultGetsResultTypeOnly) {
    auto const r = shaped({}, era::modern, version::v2026_07_28, method_id::tools_call, {}, nullptr);
    EXPECT_EQ(r, obj(R"({"resultType":"complete"})"));
}

TEST(ShapingContext, DefaultsAreLegacyLatestHandshakeWithPrivateZeroHints) {
    shape_context const ctx;
    EXPECT_EQ(ctx.era, era::legacy);
    EXPECT_EQ(ctx.version, latest_handshake_version);
    EXPECT_EQ(ctx.server_info, nullptr);
    EXPECT_EQ(ctx.hints, (cache_hints{.ttl_ms = 0, .scope = cache_scope::private_cache}));
    EXPECT_EQ(to_string(cache_scope::public_cache), "public");
    EXPECT_EQ(to_string(cache_scope::private_cache), "private");

    auto r = obj(R"({"resultType":"complete","ttlMs":1,"cacheScope":"public","tools":[]})");
    shape_result(r, ctx);
    EXPECT_EQ(r, obj(R"({"tools":[]})"));
}

// ==== Against the official schemas ====

struct schema_case {
    std::string name;
    era e;
    version v;
    method_id method;
    std::string type;
    bool input_required = false;
};

void PrintTo(schema_case const& c, std::ostream* os) {
    *os << c.name;
}

json::object schema_fixture(schema_case const& c) {
    if (c.input_required)
        return input_required_result();
    return c.method == method_id::initialize ? initialize_result(c.v) : fixture(c.method);
}

std::vector<schema_case> schema_cases() {
    struct row {
        char const* name;
        method_id method;
        char const* type;
    };
    constexpr row shared_rows[] = {
        {"ToolsList", method_id::tools_list, "ListToolsResult"},
        {"ToolsCall", method_id::tools_call, "CallToolResult"},
        {"PromptsList", method_id::prompts_list, "ListPromptsResult"},
        {"PromptsGet", method_id::prompts_get, "GetPromptResult"},
        {"ResourcesList", method_id::resources_list, "ListResourcesResult"},
        {"ResourcesTemplatesList", method_id::resources_templates_list, "ListResourceTemplatesResult"},
        {"ResourcesRead", method_id::resources_read, "ReadResourceResult"},
        {"CompletionComplete", method_id::completion_complete, "CompleteResult"},
    };
    std::vector<schema_case> out;
    for (auto v : {version::v2025_06_18, version::v2025_11_25}) {
        auto const suffix = "V" + compact(to_string(v));
        out.push_back({"Initialize" + suffix, era::legacy, v, method_id::initialize, "InitializeResult"});
        for (auto const& r : shared_rows)
            out.push_back({r.name + suffix, era::legacy, v, r.method, r.type});
    }
    auto const v = version::v2026_07_28;
    out.push_back({"ServerDiscoverModern", era::modern, v, method_id::server_discover, "DiscoverResult"});
    out.push_back({"SubscriptionsListenModern", era::modern, v, method_id::subscriptions_listen,
                   "SubscriptionsListenResult"});
    for (auto const& r : shared_rows)
        out.push_back({std::string(r.name) + "Modern", era::modern, v, r.method, r.type});
    for (auto m : {method_id::tools_call, method_id::prompts_get, method_id::resources_read}) {
        std::string name;
        for (auto const& r : shared_rows)
            if (r.method == m)
                name = r.name;
        out.push_back({name + "InputRequiredModern", era::modern, v, m, "InputRequiredResult", true});
    }
    return out;
}

class OfficialSchema : public testing::TestWithParam<schema_case> {};

// Closed: the shaped result validates even when every field the schema does not declare counts as an error,
// so a legacy result that kept a newer field fails here.
TEST_P(OfficialSchema, ShapedResultValidates) {
    auto& schemas = schema_validator::shared();
    DUET_SKIP_WITHOUT_SCHEMAS(schemas);
    auto const& c = GetParam();
    auto const r = shaped(schema_fixture(c), c.e, c.v, c.method, {.ttl_ms = 30'000});
    auto const type = c.type;
    std::vector<schema_check> const checks{
        {std::string(to_string(c.v)), type, r, schema_mode::closed},
        {std::string(to_string(c.v)), type, r, schema_mode::open},
        {std::string(to_string(c.v)), "ServerResult", r, schema_mode::open},
    };
    auto const verdicts = schemas.validate(checks);
    EXPECT_TRUE(verdicts[0].ok) << "closed " << type << ": " << verdicts[0].errors << "\n"
                                << json::serialize(r);
    EXPECT_TRUE(verdicts[1].ok) << type << ": " << verdicts[1].errors;
    EXPECT_TRUE(verdicts[2].ok) << "ServerResult: " << verdicts[2].errors;
}

INSTANTIATE_TEST_SUITE_P(Shaping, OfficialSchema, testing::ValuesIn(schema_cases()), case_name);

// The schema checks have teeth: the same fixtures unshaped fail them.
TEST(ShapingSchema, UnshapedResultsFailTheSchemas) {
    auto& schemas = schema_validator::shared();
    DUET_SKIP_WITHOUT_SCHEMAS(schemas);
    std::vector<schema_check> const checks{
        // icons on tools exist only from 2025-11-25
        {"2025-06-18", "ListToolsResult", tools_list_result(), schema_mode::closed},
        // extensions and tasks capabilities, serverInfo description
        {"2025-06-18", "InitializeResult", initialize_result(version::v2025_06_18), schema_mode::closed},
        // an array outputSchema
        {"2025-11-25", "ListToolsResult", tools_list_result(), schema_mode::open},
        // no resultType, no cache hints
        {"2026-07-28", "ListToolsResult", tools_list_result(), schema_mode::open},
        {"2026-07-28", "ReadResourceResult", read_resource_result(), schema_mode::open},
        {"2026-07-28", "CallToolResult", call_tool_result(), schema_mode::open},
        // a legacy-shaped result is no modern result
        {"2026-07-28", "DiscoverResult",
         legacy(discover_result(), version::v2025_11_25, method_id::server_discover), schema_mode::open},
    };
    auto const verdicts = schemas.validate(checks);
    ASSERT_EQ(verdicts.size(), checks.size());
    for (std::size_t i = 0; i < checks.size(); ++i)
        EXPECT_TRUE(verdicts[i].rejected()) << i << " " << checks[i].type << " of " << checks[i].version
                                            << ": " << (verdicts[i].ok ? "accepted" : verdicts[i].errors);
}

// A modern input_required result must not pass as the cacheable result of resources/read, and a cacheable one
// must carry both hints: the modern schema pins SEP-2549 too.
TEST(ShapingSchema, ModernCacheHintsAreWhatTheSchemaRequires) {
    auto& schemas = schema_validator::shared();
    DUET_SKIP_WITHOUT_SCHEMAS(schemas);
    auto const read = modern(read_resource_result(), method_id::resources_read,
                             {.ttl_ms = -7, .scope = cache_scope::public_cache});
    auto const pending = modern(input_required_result(), method_id::resources_read);
    std::vector<schema_check> const checks{
        {"2026-07-28", "ReadResourceResult", read, schema_mode::closed},
        {"2026-07-28", "ReadResourceResult", pending, schema_mode::open},
        {"2026-07-28", "InputRequiredResult", pending, schema_mode::closed},
    };
    auto const verdicts = schemas.validate(checks);
    EXPECT_TRUE(verdicts[0].ok) << verdicts[0].errors;
    EXPECT_TRUE(verdicts[1].rejected()) << verdicts[1].errors;
    EXPECT_TRUE(verdicts[2].ok) << verdicts[2].errors;
}

// shape_context::server_info_left_out: a modern result without `_meta` gets no copy of serverInfo and the
// flag says so; with a `_meta` of its own it gets the copy as before and the flag stays down. Either way the
// wire (the copy, or the server's pre-serialized member appended) is the same bytes.
TEST(ShapingServerInfoLeftOut, OnlyWhenTheResultHasNoMeta) {
    auto const tail = [] {
        auto const t = json::serialize(json::object{{"_meta", json::object{{server_info_key, duet_info()}}}});
        return t.substr(1, t.size() - 2);
    }();
    auto const spliced_text = [&](json::object const& r) {
        auto text = json::serialize(r);
        text.pop_back();
        return text + (r.empty() ? "" : ",") + tail + "}";
    };
    for (auto const m : {method_id::tools_call, method_id::tools_list, method_id::server_discover}) {
        auto const in = obj(R"({"content":[{"type":"text","text":"hi"}],"isError":false})");
        bool left_out = false;
        auto lean = in;
        shape_result(lean, {.era = era::modern,
                            .version = version::v2026_07_28,
                            .method = m,
                            .server_info = &duet_info(),
                            .server_info_left_out = &left_out});
        EXPECT_TRUE(left_out);
        EXPECT_FALSE(lean.contains("_meta"));
        EXPECT_EQ(spliced_text(lean), json::serialize(modern(in, m)));
    }
    auto with_meta = obj(R"({"content":[],"_meta":{"com.example/k":1}})");
    bool left_out = false;
    shape_result(with_meta, {.era = era::modern,
                             .version = version::v2026_07_28,
                             .method = method_id::tools_call,
                             .server_info = &duet_info(),
                             .server_info_left_out = &left_out});
    EXPECT_FALSE(left_out);
    EXPECT_EQ(with_meta, modern(obj(R"({"content":[],"_meta":{"com.example/k":1}})"), method_id::tools_call));
    // Legacy results never carry serverInfo.
    auto old = obj(R"({"content":[]})");
    shape_result(old, {.era = era::legacy,
                       .version = version::v2025_11_25,
                       .method = method_id::tools_call,
                       .server_info = &duet_info(),
                       .server_info_left_out = &left_out});
    EXPECT_FALSE(left_out);
    EXPECT_FALSE(old.contains("_meta"));
}

// The top-level members shaping adds or removes are found in one walk, and only those present are erased:
// wherever they stand, the shaped bytes are those of erasing each by name (an absent one is left alone).
std::string shaped_bytes(std::string_view in, era e, method_id m) {
    auto r = obj(in);
    shape_result(
        r,
        {.era = e, .version = e == era::modern ? version::v2026_07_28 : version::v2025_11_25, .method = m});
    return json::serialize(r);
}

TEST(ShapingTopMembers, ModernKeepsResultTypeWhereItStandsAndDropsHintsWhereverTheyStand) {
    EXPECT_EQ(shaped_bytes(R"({"ttlMs":5,"content":[],"cacheScope":"public","resultType":"other","x":1})",
                           era::modern, method_id::tools_call),
              R"({"x":1,"content":[],"resultType":"complete"})");
    EXPECT_EQ(shaped_bytes(R"({"resultType":"complete","content":[]})", era::modern, method_id::tools_call),
              R"({"resultType":"complete","content":[]})");
    EXPECT_EQ(shaped_bytes(R"({"content":[],"_meta":{"k":1}})", era::modern, method_id::tools_call),
              R"({"content":[],"_meta":{"k":1},"resultType":"complete"})");
    EXPECT_EQ(
        shaped_bytes(R"({"cacheScope":"public","tools":[],"ttlMs":9})", era::modern, method_id::tools_list),
        R"({"cacheScope":"private","tools":[],"ttlMs":0,"resultType":"complete"})");
    EXPECT_EQ(shaped_bytes(R"({"resultType":"input_required","ttlMs":1,"inputRequests":{}})", era::modern,
                           method_id::tools_call),
              R"({"resultType":"input_required","inputRequests":{}})");
}

TEST(ShapingTopMembers, LegacyDropsEachModernMemberWhereverItStands) {
    EXPECT_EQ(shaped_bytes(R"({"resultType":"complete","content":[],"ttlMs":1,"x":2,"cacheScope":"public"})",
                           era::legacy, method_id::tools_call),
              R"({"x":2,"content":[]})");
    EXPECT_EQ(shaped_bytes(R"({"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{}},"y":1})",
                           era::legacy, method_id::tools_call),
              R"({"content":[],"y":1})");
    EXPECT_EQ(shaped_bytes(R"({"content":[],"y":1})", era::legacy, method_id::tools_call),
              R"({"content":[],"y":1})");
}

} // namespace
