// Tests for duet/protocol/capabilities.hpp: what a server advertises, written per version, and what a client
// declared on one request.
//
// Requirements: DIGEST §1 (a gated method needs its server capability), §3 (modern ServerCapabilities:
// `extensions` is new), §11 (2024-11-05 has no `completions`), §2 and schema ClientCapabilities
// (`elicitation:
// {}` is form mode only; -32021 `requiredCapabilities` is an object).
#include <duet/protocol/capabilities.hpp>
#include <duet/protocol/server_changes.hpp>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace {

using namespace duet::protocol;
namespace json = boost::json;

server_capabilities everything() {
    server_capabilities caps;
    caps.tools = caps.tools_list_changed = true;
    caps.resources = caps.resources_subscribe = caps.resources_list_changed = true;
    caps.prompts = caps.prompts_list_changed = true;
    caps.completions = caps.logging = true;
    caps.experimental = json::object{{"x-demo", json::object{}}};
    caps.extensions = json::object{{"io.modelcontextprotocol/tasks", json::object{}}};
    return caps;
}

// ---- server capabilities: to_json per version -------------------------------------------------------------

struct to_json_row {
    std::string_view name;
    version v;
    std::string_view expected;
};

void PrintTo(to_json_row const& row, std::ostream* os) {
    *os << row.name;
}

class ServerCapabilitiesJson : public ::testing::TestWithParam<to_json_row> {};

// DIGEST §11 and §3: each version writes only what it defines.
TEST_P(ServerCapabilitiesJson, WritesWhatTheVersionDefines) {
    EXPECT_EQ(json::value(everything().to_json(GetParam().v)), json::parse(GetParam().expected));
}

constexpr std::string_view legacy_without_completions =
    R"({"experimental":{"x-demo":{}},"logging":{},"prompts":{"listChanged":true},
        "resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}})";
constexpr std::string_view legacy_with_completions =
    R"({"experimental":{"x-demo":{}},"logging":{},"completions":{},"prompts":{"listChanged":true},
        "resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}})";
constexpr std::string_view modern_full =
    R"({"experimental":{"x-demo":{}},"logging":{},"completions":{},"prompts":{"listChanged":true},
        "resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true},
        "extensions":{"io.modelcontextprotocol/tasks":{}}})";

INSTANTIATE_TEST_SUITE_P(
    Capabilities, ServerCapabilitiesJson,
    ::testing::Values(to_json_row{"V20241105HasNoCompletionsOrExtensions", version::v2024_11_05,
                                  legacy_without_completions},
                      to_json_row{"V20250326AddsCompletions", version::v2025_03_26, legacy_with_completions},
                      to_json_row{"V20250618HasNoExtensions", version::v2025_06_18, legacy_with_completions},
                      to_json_row{"V20251125HasNoExtensions", version::v2025_11_25, legacy_with_completions},
                      to_json_row{"V20260728AddsExtensions", version::v2026_07_28, modern_full}),
    [](auto const& p) { return std::string(p.param.name); });

TEST(Capabilities, NothingAdvertisedIsAnEmptyObject) {
    for (auto const& row : version_registry)
        EXPECT_TRUE(server_capabilities{}.to_json(row.id).empty()) << row.name;
}

// DIGEST §3: listChanged and subscribe appear only when true; the capability object is `{}` otherwise.
TEST(Capabilities, SubFlagsAppearOnlyWhenSet) {
    server_capabilities caps;
    caps.tools = caps.prompts = caps.resources = true;
    EXPECT_EQ(json::value(caps.to_json(version::v2026_07_28)),
              json::parse(R"({"prompts":{},"resources":{},"tools":{}})"));
    caps.resources_subscribe = true;
    EXPECT_EQ(json::value(caps.to_json(version::v2025_11_25)),
              json::parse(R"({"prompts":{},"resources":{"subscribe":true},"tools":{}})"));
}

// ---- server capabilities: advertises() --------------------------------------------------------------------

// DIGEST §1: methods gated by a capability the server does not advertise are -32601; `none` gates nothing.
TEST(Capabilities, AdvertisesFollowsEachFlag) {
    server_capabilities caps;
    EXPECT_TRUE(caps.advertises(capability::none));
    for (auto c : {capability::tools, capability::resources, capability::resources_subscribe,
                   capability::prompts, capability::completions, capability::logging})
        EXPECT_FALSE(caps.advertises(c)) << static_cast<int>(c);

    caps.tools = true;
    EXPECT_TRUE(caps.advertises(capability::tools));
    caps.prompts = true;
    EXPECT_TRUE(caps.advertises(capability::prompts));
    caps.completions = true;
    EXPECT_TRUE(caps.advertises(capability::completions));
    caps.logging = true;
    EXPECT_TRUE(caps.advertises(capability::logging));
    caps.resources = true;
    EXPECT_TRUE(caps.advertises(capability::resources));
    EXPECT_FALSE(caps.advertises(capability::resources_subscribe));
}

// resources/subscribe needs `resources.subscribe`, which only exists inside `resources`.
TEST(Capabilities, ResourcesSubscribeNeedsResourcesToo) {
    server_capabilities caps;
    caps.resources_subscribe = true;
    EXPECT_FALSE(caps.advertises(capability::resources_subscribe));
    caps.resources = true;
    EXPECT_TRUE(caps.advertises(capability::resources_subscribe));
}

// ---- client capabilities: declares() and requirement() ----------------------------------------------------

struct declares_row {
    std::string_view name;
    std::string_view client_caps;
    bool roots, sampling, sampling_tools, elicitation_form, elicitation_url;
};

void PrintTo(declares_row const& row, std::ostream* os) {
    *os << row.name << ' ' << row.client_caps;
}

class ClientCapabilitiesDeclare : public ::testing::TestWithParam<declares_row> {};

// Schema ClientCapabilities: each capability is an object; `elicitation: {}` means form mode only.
TEST_P(ClientCapabilitiesDeclare, DeclaresExactlyWhatTheObjectSays) {
    auto const& row = GetParam();
    auto const caps = json::parse(row.client_caps).as_object();
    EXPECT_EQ(declares(caps, client_capability::roots), row.roots);
    EXPECT_EQ(declares(caps, client_capability::sampling), row.sampling);
    EXPECT_EQ(declares(caps, client_capability::sampling_tools), row.sampling_tools);
    EXPECT_EQ(declares(caps, client_capability::elicitation_form), row.elicitation_form);
    EXPECT_EQ(declares(caps, client_capability::elicitation_url), row.elicitation_url);
}

INSTANTIATE_TEST_SUITE_P(
    Capabilities, ClientCapabilitiesDeclare,
    ::testing::Values(
        declares_row{"EmptyDeclaresNothing", "{}", false, false, false, false, false},
        declares_row{"Roots", R"({"roots":{}})", true, false, false, false, false},
        declares_row{"RootsListChanged", R"({"roots":{"listChanged":true}})", true, false, false, false,
                     false},
        declares_row{"RootsNotAnObject", R"({"roots":true})", false, false, false, false, false},
        declares_row{"Sampling", R"({"sampling":{}})", false, true, false, false, false},
        declares_row{"SamplingWithTools", R"({"sampling":{"tools":{}}})", false, true, true, false, false},
        declares_row{"SamplingToolsNotAnObject", R"({"sampling":{"tools":true}})", false, true, false, false,
                     false},
        declares_row{"SamplingNotAnObject", R"({"sampling":null})", false, false, false, false, false},
        declares_row{"EmptyElicitationIsFormOnly", R"({"elicitation":{}})", false, false, false, true, false},
        declares_row{"ElicitationForm", R"({"elicitation":{"form":{}}})", false, false, false, true, false},
        declares_row{"ElicitationUrlOnly", R"({"elicitation":{"url":{}}})", false, false, false, false, true},
        declares_row{"ElicitationFormAndUrl", R"({"elicitation":{"form":{},"url":{}}})", false, false, false,
                     true, true},
        declares_row{"ElicitationNotAnObject", R"({"elicitation":"form"})", false, false, false, false,
                     false},
        declares_row{"Everything",
                     R"({"roots":{},"sampling":{"tools":{}},"elicitation":{"form":{},"url":{}}})", true, true,
                     true, true, true},
        declares_row{"UnknownKeysDeclareNothing", R"({"experimental":{"roots":{}},"extensions":{}})", false,
                     false, false, false, false}),
    [](auto const& p) { return std::string(p.param.name); });

// DIGEST §2 (conf): -32021's requiredCapabilities is the smallest ClientCapabilities object naming the need.
TEST(Capabilities, RequirementIsTheSmallestDeclaringObject) {
    struct row {
        client_capability c;
        std::string_view expected;
    };
    for (auto const& [c, expected] : {
             row{client_capability::roots, R"({"roots":{}})"},
             row{client_capability::sampling, R"({"sampling":{}})"},
             row{client_capability::sampling_tools, R"({"sampling":{"tools":{}}})"},
             row{client_capability::elicitation_form, R"({"elicitation":{}})"},
             row{client_capability::elicitation_url, R"({"elicitation":{"url":{}}})"},
         }) {
        auto const req = requirement(c);
        EXPECT_EQ(json::value(req), json::parse(expected));
        EXPECT_TRUE(declares(req, c)) << expected;
    }
}

// A server-to-client request is sent only to a client that declared what it needs: elicitation by its mode
// (no mode is form), sampling, roots; anything else needs nothing.
TEST(Capabilities, CapabilityNeededByEachServerToClientRequest) {
    struct row {
        std::string_view method;
        std::string_view params;
        std::optional<client_capability> expected;
    };
    for (auto const& [method, params, expected] : {
             row{"elicitation/create", R"({"message":"m"})", client_capability::elicitation_form},
             row{"elicitation/create", R"({"mode":"form"})", client_capability::elicitation_form},
             row{"elicitation/create", R"({"mode":"url","url":"https://x"})",
                 client_capability::elicitation_url},
             row{"elicitation/create", R"({"mode":7})", client_capability::elicitation_form},
             row{"elicitation/create", "null", client_capability::elicitation_form},
             row{"sampling/createMessage", "{}", client_capability::sampling},
             row{"roots/list", "{}", client_capability::roots},
             row{"ping", "{}", std::nullopt},
             row{"tools/list", "{}", std::nullopt},
         }) {
        EXPECT_EQ(capability_needed(method, json::parse(params)), expected) << method << " " << params;
    }
}

json::object parsed(char const* text) {
    return json::parse(text).as_object();
}

TEST(ServerCapabilitiesFromJson, EveryAdvertisedCapabilityIsKept) {
    auto const c =
        server_capabilities::from_json(parsed(R"({"tools":{"listChanged":true},"resources":{"subscribe":true},
        "prompts":{},"logging":{},"completions":{},"experimental":{"x":{}},"extensions":{"e":{}}})"));
    EXPECT_TRUE(c.tools && c.tools_list_changed);
    EXPECT_TRUE(c.resources && c.resources_subscribe && !c.resources_list_changed);
    EXPECT_TRUE(c.prompts && !c.prompts_list_changed);
    EXPECT_TRUE(c.logging && c.completions);
    EXPECT_EQ(c.experimental, parsed(R"({"x":{}})"));
    EXPECT_EQ(c.extensions, parsed(R"({"e":{}})"));
}

TEST(ServerCapabilitiesFromJson, MalformedMembersAdvertiseNothing) {
    auto const c = server_capabilities::from_json(
        parsed(R"({"tools":true,"resources":{"subscribe":"yes"},"logging":null})"));
    EXPECT_FALSE(c.tools);
    EXPECT_TRUE(c.resources);
    EXPECT_FALSE(c.resources_subscribe);
    EXPECT_FALSE(c.logging);
}

// Each change row's flag, written by to_json, is read back by from_json, and no other flag with it.
TEST(ServerCapabilitiesFromJson, ReadsBackEveryChangeFlagToJsonWrites) {
    for (auto const& row : change_table()) {
        server_capabilities written;
        written.*row.offered = true;
        written.*row.advertised = true;
        auto const read = server_capabilities::from_json(written.to_json(version::v2026_07_28));
        EXPECT_TRUE(read.*row.offered) << row.capability_key;
        EXPECT_TRUE(read.*row.advertised) << row.capability_key << '.' << row.capability_flag;
        for (auto const& other : change_table()) {
            if (other.advertised != row.advertised) {
                EXPECT_FALSE(read.*other.advertised) << other.capability_key << '.' << other.capability_flag;
            }
        }
    }
}

// Tasks in either era's spelling; the extension is taken out of the passed-through extensions.
TEST(ServerCapabilitiesFromJson, ReadsTasksInEitherErasSpelling) {
    auto const legacy = server_capabilities::from_json(
        parsed(R"({"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}})"));
    EXPECT_TRUE(legacy.tasks);
    auto const modern = server_capabilities::from_json(
        parsed(R"({"extensions":{"io.modelcontextprotocol/tasks":{},"other":{}}})"));
    EXPECT_TRUE(modern.tasks);
    EXPECT_EQ(modern.extensions, parsed(R"({"other":{}})"));
    EXPECT_FALSE(server_capabilities::from_json(parsed(R"({"tasks":{"list":{}}})")).tasks);
}

} // namespace
