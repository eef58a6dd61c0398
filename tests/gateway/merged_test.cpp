// `duet gateway --merge` (or "gateway": {"merge": true} in the config file), the real binary in front of
// real upstreams: `duet serve --stdio`, the TypeScript v1 SDK's stdio server, `duet serve` over HTTP, and the
// reference servers server-everything and server-filesystem. It pins what one merged endpoint shows and does:
//
//  - every upstream's tools listed as NAME<separator>TOOL ("__", or the file's nameSeparator), a page per
//    upstream followed by cursors to the end, in both eras; a prefixed call reaches its upstream (the
//    gateway's log line per forwarded request names it) and answers its result;
//  - a resource URI two upstreams offer: said on stderr, served by the first;
//  - the file's filters: allow/deny hide tools (a call is "Unknown tool", never forwarded), rename and
//    describe, the same for prompts, and resources.deny hides a URI (reading it is resource-not-found in the
//    request's era);
//  - a list change of one upstream reaches a modern listen and a legacy session's GET stream;
//  - capabilities are the union, instructions joined under a "## NAME" heading each;
//  - the `duet` CLI reaching server-everything and server-filesystem merged behind one endpoint.
//
// Tests needing Node (tests/interop) or its packages skip where they are not installed.
#include "gateway/announcing_upstream.hpp"
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/child_process.hpp"
#include "support/test_certs.hpp"
#include "support/wait.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace gateway_merged_tests {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;
using namespace duet::test::gateway;

std::string const v1_server_script = DUET_SOURCE_DIR "/tests/interop/peers/v1_stdio_server.mjs";
std::string const crashing_script = DUET_SOURCE_DIR "/tests/gateway/crashing_upstream.mjs";
std::string const everything_script =
    DUET_SOURCE_DIR "/tests/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
std::string const filesystem_script =
    DUET_SOURCE_DIR "/tests/interop/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js";

// The demo server's tools (apps/duet/demo_server.cpp).
std::vector<std::string> const demo_tools{"add",      "ask_name",     "countdown", "echo",
                                          "long_job", "touch_readme", "whoami"};

// ---- config files -------------------------------------------------------------------------------

// A config file in a temporary directory of its own.
class merged_config {
public:
    explicit merged_config(json::object servers, json::object gateway_keys = {{"merge", true}}) {
        path_ = (dir_.path() / "gateway.json").string();
        std::ofstream(path_) << json::serialize(
            json::object{{"mcpServers", std::move(servers)}, {"gateway", std::move(gateway_keys)}});
    }
    [[nodiscard]] std::string const& path() const noexcept { return path_; }

private:
    temp_dir dir_;
    std::string path_;
};

// `duet serve --stdio FLAGS...` as a config file's upstream, with its filters (`more`: tools, prompts, ...).
json::object duet_stdio(json::object more = {}, std::vector<std::string> const& flags = {}) {
    json::array args{"serve", "--stdio"};
    for (auto const& f : flags)
        args.emplace_back(f);
    json::object o{{"command", DUET_BINARY}, {"args", std::move(args)}};
    for (auto& kv : more)
        o[kv.key()] = kv.value();
    return o;
}

// A Node script as a config file's upstream.
json::object node_stdio(std::string const& script) {
    return {{"command", pinned_node()}, {"args", json::array{json::value(json::string(script))}}};
}

// ---- reading the gateway's log ------------------------------------------------------------------

// ---- requests -----------------------------------------------------------------------------------

// A request of the era: modern (its `_meta`) or legacy (inside the session `c` opened).
// A client of `ep` in one era: a legacy one has its session open (2025-11-25).
mcp_http client_of(endpoint const& ep, bool modern) {
    mcp_http c(ep);
    if (!modern)
        c.initialize("2025-11-25");
    return c;
}

json::object request_of(bool modern, int id, std::string_view method, json::object params = {}) {
    return modern ? modern_request(id, method, std::move(params))
                  : legacy_request(id, method, std::move(params));
}

struct listing {
    std::vector<json::object> items;
    std::size_t pages = 0;
};

// Every item of a list method, following nextCursor to the end (at most 50 pages).
listing list_all(mcp_http& c, bool modern, std::string_view method, std::string_view key, int& id) {
    listing out;
    std::optional<std::string> cursor;
    for (int page = 0; page < 50; ++page) {
        json::object params;
        if (cursor)
            params["cursor"] = *cursor;
        auto const r = only_message(c.post(request_of(modern, id++, method, std::move(params))));
        auto const result = result_of(r);
        ++out.pages;
        if (auto const* items = result.if_contains(key); items && items->is_array())
            for (auto const& item : items->get_array())
                out.items.push_back(item.as_object());
        else
            ADD_FAILURE() << method << " answered no " << key << ": " << r;
        auto const* next = result.if_contains("nextCursor");
        if (!next || next->is_null())
            return out;
        if (!next->is_string()) {
            ADD_FAILURE() << "nextCursor is not a string: " << r;
            return out;
        }
        cursor = std::string(next->get_string());
    }
    ADD_FAILURE() << method << ": the cursors did not end within 50 pages";
    return out;
}

std::vector<std::string> names_of(std::vector<json::object> const& items, std::string_view key = "name") {
    std::vector<std::string> out;
    for (auto const& item : items)
        if (auto const* n = item.if_contains(key); n && n->is_string())
            out.emplace_back(n->get_string());
    return out;
}

// The item named `name`, or an empty object.
json::object item_named(std::vector<json::object> const& items, std::string_view name) {
    for (auto const& item : items)
        if (auto const* n = item.if_contains("name"); n && *n == json::value(json::string(name)))
            return item;
    return {};
}

std::string error_message(json::value const& response) {
    auto const e = error_of(response);
    auto const* m = e.if_contains("message");
    return m && m->is_string() ? std::string(m->get_string()) : std::string();
}

json::object call(mcp_http& c, bool modern, int id, std::string_view tool, json::object args = {}) {
    return only_message(c.post(request_of(modern, id, "tools/call", call_params(tool, std::move(args)))))
        .as_object();
}

// "Unknown tool: NAME" (-32602), as a merged endpoint answers a name it does not show.
void expect_unknown_tool(json::value const& response, std::string const& name) {
    expect_error(response, -32602);
    EXPECT_EQ(error_message(response), "Unknown tool: " + name) << response;
}

std::string era_name(bool modern) {
    return modern ? "modern" : "legacy";
}

// ---- three upstreams: duet serve (stdio), the v1 SDK's server (stdio), duet serve (HTTP) --------

// `duet serve --port 0`, a child of the test, with the URL it printed.
class http_demo {
public:
    http_demo() : child_({DUET_BINARY, "serve", "--port", "0"}, child_process::input::null) {
        url_ = first_stdout_line(child_);
        if (url_.empty())
            ADD_FAILURE() << "duet serve printed no URL; its stderr:\n" << child_.stderr_text();
    }
    [[nodiscard]] std::string const& url() const noexcept { return url_; }

private:
    child_process child_;
    std::string url_;
};

// The gateway merging "duet" (stdio), "v1" (the v1 SDK's stdio server) and "web" (HTTP).
class three_upstreams {
public:
    three_upstreams() : config_(servers(web_.url())) {
        gw_.emplace(std::vector<std::string>{"--config", config_.path()});
    }
    [[nodiscard]] gateway_process& gw() { return *gw_; }

private:
    static json::object servers(std::string const& url) {
        return {{"duet", duet_stdio()}, {"v1", node_stdio(v1_server_script)}, {"web", {{"url", url}}}};
    }

    http_demo web_; // outlives the gateway
    merged_config config_;
    std::optional<gateway_process> gw_;
};

// What the three upstreams' tools are shown as.
std::set<std::string> three_upstreams_tools() {
    std::set<std::string> out;
    for (auto const& t : demo_tools) {
        out.insert("duet__" + t);
        out.insert("web__" + t);
    }
    out.insert("v1__echo");
    return out;
}

TEST(MergedEndpoint, ListsEveryUpstreamsToolsPrefixedAcrossPagesInBothEras) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    three_upstreams up;
    ASSERT_FALSE(up.gw().url().empty());
    EXPECT_TRUE(up.gw().url().ends_with("/mcp")) << up.gw().url() << "\n" << up.gw().stderr_text();
    for (bool const modern : {true, false}) {
        mcp_http c(up.gw().ep());
        if (!modern)
            expect_legacy_result(only_message(c.initialize("2025-11-25")));
        int id = 1;
        auto const all = list_all(c, modern, "tools/list", "tools", id);
        auto const names = names_of(all.items);
        std::set<std::string> const unique(names.begin(), names.end());
        EXPECT_EQ(unique.size(), names.size()) << era_name(modern) << ": a tool listed twice";
        EXPECT_EQ(unique, three_upstreams_tools()) << era_name(modern);
        EXPECT_GE(all.pages, 3u) << era_name(modern) << ": a page per upstream, joined by cursors";
        c.expect_schema_valid();
    }
}

TEST(MergedEndpoint, APrefixedCallReachesItsUpstreamInBothEras) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    three_upstreams up;
    auto& gw = up.gw();
    ASSERT_FALSE(gw.url().empty());
    std::map<std::string, std::size_t> expected; // calls forwarded to each upstream so far
    for (bool const modern : {true, false}) {
        auto c = client_of(gw.ep(), modern);
        int id = 1;
        for (std::string const name : {"duet", "v1", "web"}) {
            auto const text = "to " + name + " (" + era_name(modern) + ")";
            auto const r = call(c, modern, id++, name + "__echo", {{"text", text}});
            if (modern)
                expect_modern_result(r, /*cacheable=*/false, "duet-gateway");
            else
                expect_legacy_result(r);
            EXPECT_EQ(call_text(r), text) << r;
            EXPECT_TRUE(gw.wait_forwarded("tools/call", name, ++expected[name])) << name << "\n"
                                                                                 << gw.stderr_text();
        }
        // The typed tool's structured result comes back whole.
        auto const sum = call(c, modern, id++, "web__add", {{"a", 2}, {"b", 3}});
        EXPECT_EQ(result_of(sum).at("structuredContent").at("result"), 5) << sum;
        EXPECT_TRUE(gw.wait_forwarded("tools/call", "web", ++expected["web"])) << gw.stderr_text();
        // Each call went to its upstream and to no other.
        for (auto const& [name, count] : expected)
            EXPECT_EQ(gw.forwarded("tools/call", name), count) << name << "\n" << gw.stderr_text();
        c.expect_schema_valid();
    }
}

TEST(MergedEndpoint, ACustomNameSeparatorJoinsTheNames) {
    merged_config config({{"a", duet_stdio()}, {"b", duet_stdio({}, {"--legacy-only"})}},
                         {{"merge", true}, {"nameSeparator", "."}});
    gateway_process gw(std::vector<std::string>{"--config", config.path()});
    ASSERT_FALSE(gw.url().empty());
    mcp_http c(gw.ep());
    int id = 1;
    auto const names = names_of(list_all(c, true, "tools/list", "tools", id).items);
    std::set<std::string> want;
    for (auto const& t : demo_tools) {
        want.insert("a." + t);
        want.insert("b." + t);
    }
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), want);
    auto const r = call(c, true, id++, "b.echo", {{"text", "dotted"}});
    EXPECT_EQ(call_text(r), "dotted") << r;
    EXPECT_TRUE(gw.wait_forwarded("tools/call", "b", 1)) << gw.stderr_text();
    expect_unknown_tool(call(c, true, id++, "b__echo", {{"text", "x"}}), "b__echo");
}

// Two `duet serve --stdio` both offer duet://demo/readme: the gateway says so as it starts, and the first
// serves it.
TEST(MergedEndpoint, AResourceTwoUpstreamsOfferIsSaidAndServedByTheFirst) {
    merged_config config({{"a", duet_stdio()}, {"b", duet_stdio()}});
    gateway_process gw(std::vector<std::string>{"--config", config.path()});
    ASSERT_FALSE(gw.url().empty());
    EXPECT_TRUE(gw.wait_for_log("the resource duet://demo/readme is offered by a and b; a serves it"))
        << gw.stderr_text();
    std::size_t reads = 0;
    for (bool const modern : {true, false}) {
        auto c = client_of(gw.ep(), modern);
        auto const r =
            only_message(c.post(request_of(modern, 1, "resources/read", {{"uri", "duet://demo/readme"}})));
        auto const result = result_of(r);
        auto const* contents = result.if_contains("contents");
        ASSERT_TRUE(contents && contents->is_array() && !contents->get_array().empty()) << r;
        auto const& first = contents->get_array().front().as_object();
        EXPECT_EQ(first.at("uri"), "duet://demo/readme") << r;
        EXPECT_TRUE(first.at("text").as_string().starts_with("# Duet demo")) << r;
        EXPECT_TRUE(gw.wait_forwarded("resources/read", "a", ++reads)) << gw.stderr_text();
        c.expect_schema_valid();
    }
    EXPECT_EQ(gw.forwarded("resources/read", "b"), 0u) << gw.stderr_text();
    // Listed once, by the upstream that serves it; so is the template both offer.
    for (bool const modern : {true, false}) {
        auto c = client_of(gw.ep(), modern);
        int id = 10;
        auto const uris = names_of(list_all(c, modern, "resources/list", "resources", id).items, "uri");
        EXPECT_EQ(std::count(uris.begin(), uris.end(), "duet://demo/readme"), 1) << era_name(modern);
        auto const templates = names_of(
            list_all(c, modern, "resources/templates/list", "resourceTemplates", id).items, "uriTemplate");
        EXPECT_EQ(std::count(templates.begin(), templates.end(), "duet://demo/greeting/{name}"), 1)
            << era_name(modern);
    }
}

// ---- filters ------------------------------------------------------------------------------------

// a shows only echo and add; b hides add and every count*; neither's hidden tools are listed, and a call of
// one is "Unknown tool" that never reaches the upstream.
TEST(MergedEndpoint, AHiddenToolIsUnknownAndNeverForwarded) {
    merged_config config({{"a", duet_stdio({{"tools", {{"allow", json::array{"echo", "add"}}}}})},
                          {"b", duet_stdio({{"tools", {{"deny", json::array{"add", "count*"}}}}})}});
    gateway_process gw(std::vector<std::string>{"--config", config.path()});
    ASSERT_FALSE(gw.url().empty());
    std::size_t forwarded_to_a = 0, forwarded_to_b = 0;
    for (bool const modern : {true, false}) {
        auto c = client_of(gw.ep(), modern);
        int id = 1;
        auto const names = names_of(list_all(c, modern, "tools/list", "tools", id).items);
        EXPECT_EQ(std::set<std::string>(names.begin(), names.end()),
                  (std::set<std::string>{"a__add", "a__echo", "b__ask_name", "b__echo", "b__long_job",
                                         "b__touch_readme", "b__whoami"}))
            << era_name(modern);

        expect_unknown_tool(call(c, modern, id++, "b__add", {{"a", 1}, {"b", 2}}), "b__add");
        expect_unknown_tool(call(c, modern, id++, "b__countdown", {{"n", 1}}), "b__countdown");
        expect_unknown_tool(call(c, modern, id++, "a__whoami"), "a__whoami");
        expect_unknown_tool(call(c, modern, id++, "add", {{"a", 1}, {"b", 2}}), "add"); // no prefix

        // A shown tool of each still goes through; its log line comes after any the hidden calls would have
        // written, so counting once it is there shows the hidden ones were never forwarded.
        EXPECT_EQ(call_text(call(c, modern, id++, "b__echo", {{"text", "shown"}})), "shown");
        EXPECT_EQ(result_of(call(c, modern, id++, "a__add", {{"a", 1}, {"b", 2}}))
                      .at("structuredContent")
                      .at("result"),
                  3);
        ++forwarded_to_a;
        ++forwarded_to_b;
        ASSERT_TRUE(gw.wait_forwarded("tools/call", "b", forwarded_to_b)) << gw.stderr_text();
        ASSERT_TRUE(gw.wait_forwarded("tools/call", "a", forwarded_to_a)) << gw.stderr_text();
        EXPECT_EQ(gw.forwarded("tools/call", "b"), forwarded_to_b) << gw.stderr_text();
        EXPECT_EQ(gw.forwarded("tools/call", "a"), forwarded_to_a) << gw.stderr_text();
        c.expect_schema_valid();
    }
}

TEST(MergedEndpoint, ARenamedToolIsCalledByItsNewNameOnlyAndADescribedOneShowsItsNewDescription) {
    merged_config config(
        {{"a", duet_stdio()},
         {"b",
          duet_stdio({{"tools",
                       {{"rename", {{"echo", "say"}}},
                        {"describe", {{"countdown", "Counts down slowly"}, {"echo", "Says it back"}}}}}})}});
    gateway_process gw(std::vector<std::string>{"--config", config.path()});
    ASSERT_FALSE(gw.url().empty());
    for (bool const modern : {true, false}) {
        auto c = client_of(gw.ep(), modern);
        int id = 1;
        auto const tools = list_all(c, modern, "tools/list", "tools", id).items;
        auto const names = names_of(tools);
        EXPECT_NE(std::find(names.begin(), names.end(), "b__say"), names.end()) << era_name(modern);
        EXPECT_EQ(std::find(names.begin(), names.end(), "b__echo"), names.end()) << era_name(modern);
        EXPECT_NE(std::find(names.begin(), names.end(), "a__echo"), names.end()) << "a's own is kept";
        // describe is keyed by the upstream's name, the rename notwithstanding.
        EXPECT_EQ(item_named(tools, "b__say").at("description"), "Says it back") << era_name(modern);
        EXPECT_EQ(item_named(tools, "b__countdown").at("description"), "Counts down slowly");
        EXPECT_EQ(item_named(tools, "a__countdown").at("description"),
                  "Counts down from n (at most 20), reporting progress every 50 ms");
        // The renamed schema is echo's.
        EXPECT_TRUE(
            item_named(tools, "b__say").at("inputSchema").at("properties").as_object().contains("text"));

        auto const said = call(c, modern, id++, "b__say", {{"text", "renamed"}});
        EXPECT_EQ(call_text(said), "renamed") << said;
        expect_unknown_tool(call(c, modern, id++, "b__echo", {{"text", "old name"}}), "b__echo");
        c.expect_schema_valid();
    }
}

TEST(MergedEndpoint, PromptFiltersHideRenameAndDescribePrompts) {
    merged_config config({{"a", duet_stdio({{"prompts",
                                             {{"deny", json::array{"intro*"}},
                                              {"rename", {{"review", "code_review"}}},
                                              {"describe", {{"review", "A careful review"}}}}}})},
                          {"b", duet_stdio({{"prompts", {{"allow", json::array{"introduce"}}}}})}});
    gateway_process gw(std::vector<std::string>{"--config", config.path()});
    ASSERT_FALSE(gw.url().empty());
    for (bool const modern : {true, false}) {
        auto c = client_of(gw.ep(), modern);
        int id = 1;
        auto const prompts = list_all(c, modern, "prompts/list", "prompts", id).items;
        auto const names = names_of(prompts);
        EXPECT_EQ(std::set<std::string>(names.begin(), names.end()),
                  (std::set<std::string>{"a__code_review", "b__introduce"}))
            << era_name(modern);
        EXPECT_EQ(item_named(prompts, "a__code_review").at("description"), "A careful review");

        auto const got = only_message(
            c.post(request_of(modern, id++, "prompts/get",
                              {{"name", "a__code_review"}, {"arguments", {{"language", "c++"}}}})));
        auto const result = result_of(got);
        EXPECT_EQ(result.at("description"), "Review of a c++ snippet") << got;

        for (std::string const hidden : {"a__review", "a__introduce", "b__review"}) {
            auto const refused = only_message(c.post(
                request_of(modern, id++, "prompts/get", {{"name", hidden}, {"arguments", json::object{}}})));
            expect_error(refused, -32602);
            EXPECT_EQ(error_message(refused), "Unknown prompt: " + hidden) << refused;
        }
        c.expect_schema_valid();
    }
    // Only the one prompt shown was got upstream, once per era.
    EXPECT_TRUE(gw.wait_forwarded("prompts/get", "a", 2)) << gw.stderr_text();
    EXPECT_EQ(gw.forwarded("prompts/get", "a"), 2u) << gw.stderr_text();
    EXPECT_EQ(gw.forwarded("prompts/get", "b"), 0u) << gw.stderr_text();
}

// Both upstreams hide the readme (b every duet:// URI): it is listed by neither, and reading it is
// resource-not-found as the request's era says it: -32002 (legacy), -32602 with data.uri (modern).
TEST(MergedEndpoint, ADeniedResourceIsUnlistedAndReadingItIsNotFoundInTheRequestsEra) {
    merged_config config({{"a", duet_stdio({{"resources", {{"deny", json::array{"duet://demo/readme"}}}}})},
                          {"b", duet_stdio({{"resources", {{"deny", json::array{"duet://*"}}}}})}});
    gateway_process gw(std::vector<std::string>{"--config", config.path()});
    ASSERT_FALSE(gw.url().empty());
    for (bool const modern : {true, false}) {
        auto c = client_of(gw.ep(), modern);
        int id = 1;
        auto const resources = list_all(c, modern, "resources/list", "resources", id).items;
        EXPECT_TRUE(names_of(resources, "uri").empty()) << era_name(modern);
        // a's template is not denied: listed once (b's is), and read from a.
        auto const templates = list_all(c, modern, "resources/templates/list", "resourceTemplates", id).items;
        EXPECT_EQ(names_of(templates, "uriTemplate"),
                  std::vector<std::string>{"duet://demo/greeting/{name}"});
        auto const greeting = only_message(
            c.post(request_of(modern, id++, "resources/read", {{"uri", "duet://demo/greeting/ada"}})));
        EXPECT_EQ(result_of(greeting).at("contents").at(0).at("text"), "Hello, ada!") << greeting;

        auto const r =
            only_message(c.post(request_of(modern, id++, "resources/read", {{"uri", "duet://demo/readme"}})));
        expect_error(r, modern ? -32602 : -32002);
        auto const e = error_of(r);
        EXPECT_EQ(e.at("message"), "Resource not found: duet://demo/readme") << r;
        auto const* data = e.if_contains("data");
        ASSERT_TRUE(data && data->is_object()) << r;
        EXPECT_EQ(data->at("uri"), "duet://demo/readme") << r;
        c.expect_schema_valid();
    }
}

// The first upstream hides the readme; the second lists it, and so it is listed: reading it reaches the
// second, rather than answering not found because the first (which hides it) offers it too.
TEST(MergedEndpoint, AUriTheFirstUpstreamHidesIsReadFromTheOneThatListsIt) {
    merged_config config({{"a", duet_stdio({{"resources", {{"deny", json::array{"duet://demo/readme"}}}}})},
                          {"b", duet_stdio()}});
    gateway_process gw(std::vector<std::string>{"--config", config.path()});
    ASSERT_FALSE(gw.url().empty());
    mcp_http c(gw.ep());
    int id = 1;
    auto const resources = list_all(c, true, "resources/list", "resources", id).items;
    EXPECT_EQ(names_of(resources, "uri"), std::vector<std::string>{"duet://demo/readme"});
    auto const r =
        only_message(c.post(modern_request(id++, "resources/read", {{"uri", "duet://demo/readme"}})));
    auto const result = result_of(r);
    ASSERT_TRUE(result.contains("contents")) << r;
    EXPECT_TRUE(gw.wait_forwarded("resources/read", "b", 1)) << gw.stderr_text();
}

// ---- announcements, capabilities, instructions --------------------------------------------------

TEST(MergedEndpoint, AListChangeOfOneUpstreamReachesModernListensAndLegacyStreams) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    announcing_upstream ann;
    gateway_process gw(std::vector<std::string>{"--merge", "--upstream",
                                                "duet=" + demo_upstream("--legacy-only"), "--upstream",
                                                "ann=" + ann.upstream(false)});
    ASSERT_FALSE(gw.url().empty());
    mcp_http modern(gw.ep());
    auto listen = modern.open(listen_request("L1"));
    ASSERT_EQ(listen->status(), 200u);
    auto const ack = modern.next(*listen);
    ASSERT_TRUE(is_notification(ack, "notifications/subscriptions/acknowledged")) << ack;

    mcp_http legacy(gw.ep());
    legacy.initialize("2025-11-25");
    auto stream = legacy.open_spec(stream_spec(legacy));
    ASSERT_EQ(stream->status(), 200u);

    // The announcing upstream's tools are listed under its prefix.
    int id = 1;
    auto const names = names_of(list_all(modern, true, "tools/list", "tools", id).items);
    EXPECT_NE(std::find(names.begin(), names.end(), "ann__pid"), names.end());

    ann.announce("tools");
    auto const changed = modern.next(*listen);
    EXPECT_TRUE(is_notification(changed, "notifications/tools/list_changed")) << changed;
    EXPECT_EQ(subscription_id_of(changed), "L1") << changed;
    auto const heard = legacy.next(*stream);
    EXPECT_TRUE(is_notification(heard, "notifications/tools/list_changed")) << heard;
    EXPECT_TRUE(subscription_id_of(heard).is_null()) << "a legacy notification is untagged: " << heard;
    modern.expect_schema_valid();
    legacy.expect_schema_valid();
}

// crashing_upstream.mjs offers tools alone and no instructions; the two demo servers offer the rest and
// instructions: the merged endpoint offers the union, and the instructions under a heading per upstream that
// has some.
TEST(MergedEndpoint, CapabilitiesAreTheUnionAndInstructionsAreJoinedUnderHeadings) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    gateway_process gw(std::vector<std::string>{
        "--merge", "--upstream", "tools_only=stdio:" + pinned_node() + " " + crashing_script, "--upstream",
        "a=" + demo_upstream("--legacy-only"), "--upstream", "b=" + demo_upstream("--modern-only")});
    ASSERT_FALSE(gw.url().empty());
    std::string const demo_instructions =
        "Try the echo tool first; add shows typed tools; countdown reports progress.";
    std::string const joined = "## a\n\n" + demo_instructions + "\n\n## b\n\n" + demo_instructions;

    auto expect_union = [](json::object const& caps, json::value const& whole) {
        for (auto const* key : {"tools", "resources", "prompts", "completions", "logging"})
            EXPECT_TRUE(caps.contains(key)) << key << ": " << whole;
        EXPECT_EQ(caps.at("tools").at("listChanged"), true) << whole;
        EXPECT_EQ(caps.at("resources").at("subscribe"), true) << whole;
    };

    mcp_http modern(gw.ep());
    auto const discover = only_message(modern.post(modern_request(1, "server/discover")));
    expect_modern_result(discover, /*cacheable=*/true, "duet-gateway");
    auto const d = result_of(discover);
    expect_union(d.at("capabilities").as_object(), discover);
    EXPECT_EQ(d.at("instructions"), json::value(json::string(joined))) << discover;
    modern.expect_schema_valid();

    mcp_http legacy(gw.ep());
    auto const init = only_message(legacy.initialize("2025-11-25"));
    auto const i = result_of(init);
    EXPECT_EQ(i.at("serverInfo").at("name"), "duet-gateway") << init;
    expect_union(i.at("capabilities").as_object(), init);
    EXPECT_EQ(i.at("instructions"), json::value(json::string(joined))) << init;
    legacy.expect_schema_valid();
}

// ---- the reference servers, merged, reached by the `duet` CLI -----------------------------------

struct cli_outcome {
    int code = -1;
    std::string out;
    std::string err;
};

// `duet ARGS...` to its exit, its whole stdout read.
cli_outcome run_duet(std::vector<std::string> args) {
    std::vector<std::string> argv{DUET_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    child_process child(argv, child_process::input::null);
    cli_outcome o;
    auto const deadline = std::chrono::steady_clock::now() + wait_limit;
    for (;;) {
        pollfd p{child.out(), POLLIN, 0};
        if (::poll(&p, 1, poll_ms_until(deadline)) > 0) {
            char buf[4096];
            auto const n = ::read(child.out(), buf, sizeof buf);
            if (n <= 0)
                break;
            o.out.append(buf, static_cast<std::size_t>(n));
        } else if (std::chrono::steady_clock::now() >= deadline) {
            ADD_FAILURE() << "duet did not end its output in time";
            break;
        }
    }
    o.code = child.wait_exit(wait_limit);
    o.err = child.stderr_text();
    return o;
}

TEST(MergedEndpoint, EverythingAndFilesystemMergedAreReachedByTheDuetCli) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    if (!std::filesystem::exists(everything_script) || !std::filesystem::exists(filesystem_script))
        GTEST_SKIP() << "server-everything or server-filesystem is not installed in tests/interop";
    temp_dir files;
    auto const root = std::filesystem::canonical(files.path()); // as the server reports it
    auto const note = (root / "note.txt").string();
    std::ofstream(note) << "merged behind one endpoint\n";
    gateway_process gw(std::vector<std::string>{
        "--merge", "--upstream", "everything=stdio:" + pinned_node() + " " + everything_script + " stdio",
        "--upstream", "filesystem=stdio:" + pinned_node() + " " + filesystem_script + " " + root.string()});
    ASSERT_FALSE(gw.url().empty()) << gw.stderr_text();

    auto const tools = run_duet({"tools", gw.url(), "--json"});
    ASSERT_EQ(tools.code, 0) << tools.err;
    auto const parsed = json::parse(tools.out);
    std::vector<json::object> items;
    for (auto const& t : parsed.as_array())
        items.push_back(t.as_object());
    auto const listed = names_of(items);
    for (auto const* want : {"everything__echo", "filesystem__read_text_file", "filesystem__list_directory"})
        EXPECT_NE(std::find(listed.begin(), listed.end(), want), listed.end()) << want << "\n" << tools.out;

    auto const echo = run_duet({"call", gw.url(), "everything__echo", "message=through the gateway"});
    EXPECT_EQ(echo.code, 0) << echo.err;
    EXPECT_EQ(echo.out, "Echo: through the gateway\n") << echo.err;

    auto const read = run_duet({"call", gw.url(), "filesystem__read_text_file", "path=" + note});
    EXPECT_EQ(read.code, 0) << read.err;
    EXPECT_EQ(read.out, "merged behind one endpoint\n") << read.err;

    // The filesystem server's own refusal comes back as its tool error: exit 1, the text on stderr.
    auto const outside = run_duet({"call", gw.url(), "filesystem__read_text_file", "path=/etc/hostname"});
    EXPECT_EQ(outside.code, 1) << outside.out << outside.err;
    EXPECT_NE((outside.out + outside.err).find("Access denied"), std::string::npos) << outside.err;

    EXPECT_TRUE(gw.wait_forwarded("tools/call", "everything", 1)) << gw.stderr_text();
    EXPECT_TRUE(gw.wait_forwarded("tools/call", "filesystem", 2)) << gw.stderr_text();
}

} // namespace gateway_merged_tests
