// The connection's dispatch in process (ERA-POLICY, DIGEST §1, §2, §8, §12, §14): per-era admission and
// errors, result shapes, and pagination that walks every item once in a deterministic order.
#include <duet/server/server.hpp>

#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "unit/server/harness.hpp"
#include "unit/server/test_server.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::test;
using duet::server::server;

TEST(ConnectionDispatch, ModernRequestNeverTouchesSession) {
    server srv(test_options());
    add_test_features(srv);
    harness h(srv);
    // No session from a modern request.
    h.send(modern_request(1, "tools/list"));
    expect_modern_result(h.response(1), true);
    h.send(legacy_request(2, "tools/list"));
    expect_error(h.response(2), -32602);
    // Open one, then interleave.
    h.send(initialize_request(3, "2026-07-28"));
    EXPECT_EQ(result_of(h.response(3)).at("protocolVersion"), "2025-11-25");
    h.send(initialized_notification());
    h.send(modern_request(4, "resources/subscribe", {{"uri", "test://doc"}}));
    expect_error(h.response(4), -32601);
    h.send(modern_request(5, "ping"));
    expect_error(h.response(5), -32601);
    h.send(legacy_request(6, "ping"));
    expect_legacy_result(h.response(6));
    h.send(modern_request(7, "resources/read", {{"uri", "test://doc"}}));
    expect_modern_result(h.response(7), true);
    h.send(legacy_request(8, "resources/read", {{"uri", "test://doc"}}));
    expect_legacy_result(h.response(8));
    // The modern resources/subscribe above subscribed nothing: an update reaches no one.
    srv.notify_resource_updated("test://doc");
    h.send(legacy_request(9, "ping"));
    h.response(9);
    for (auto const& m : h.messages())
        EXPECT_FALSE(is_notification(m, "notifications/resources/updated")) << m;
}

TEST(ConnectionDispatch, PingBeforeInitializeIsAnswered) {
    server srv(test_options());
    harness h(srv);
    h.send(legacy_request("p", "ping"));
    auto const r = h.response("p");
    EXPECT_TRUE(result_of(r).empty()) << r;
}

TEST(ConnectionDispatch, InitializeWithBadParamsIsInvalidParams) {
    server srv(test_options());
    harness h(srv);
    h.send(legacy_request(1, "initialize", {{"protocolVersion", "2025-11-25"}}));
    expect_error(h.response(1), -32602);
    // Still no session.
    h.send(legacy_request(2, "tools/list"));
    expect_error(h.response(2), -32602);
}

TEST(ConnectionDispatch, ResourceNotFoundDiffersByEra) {
    server srv(test_options());
    add_test_features(srv);
    harness h(srv);
    h.send(initialize_request(1, "2025-06-18"));
    h.response(1);
    h.send(legacy_request(2, "resources/read", {{"uri", "test://nothing"}}));
    auto const legacy = h.response(2);
    expect_error(legacy, -32002);
    EXPECT_EQ(error_of(legacy).at("data").at("uri"), "test://nothing");
    h.send(modern_request(3, "resources/read", {{"uri", "test://nothing"}}));
    auto const modern = h.response(3);
    expect_error(modern, -32602);
    EXPECT_EQ(error_of(modern).at("data").at("uri"), "test://nothing");
    // A template match is found in both eras.
    h.send(modern_request(4, "resources/read", {{"uri", "test://items/42"}}));
    EXPECT_EQ(result_of(h.response(4)).at("contents").at(0).at("text"), "item 42");
}

TEST(ConnectionDispatch, UnknownToolIsInvalidParamsInBothEras) {
    server srv(test_options());
    add_test_features(srv);
    harness h(srv);
    h.send(modern_request(1, "tools/call", call_params("nope")));
    expect_error(h.response(1), -32602);
    h.send(initialize_request(2, "2025-11-25"));
    h.response(2);
    h.send(legacy_request(3, "tools/call", call_params("nope")));
    expect_error(h.response(3), -32602);
    h.send(legacy_request(4, "tools/call", {{"name", "echo"}, {"arguments", "not an object"}}));
    expect_error(h.response(4), -32602);
}

TEST(ConnectionDispatch, ArgumentsOfTheWrongTypeAreAToolErrorNotAProtocolError) {
    server srv(test_options());
    add_test_features(srv);
    harness h(srv);
    h.send(modern_request(1, "tools/call", call_params("echo", {{"text", 5}})));
    auto const r = result_of(h.response(1));
    EXPECT_TRUE(is_error_result(r)) << json::value(r);
    EXPECT_NE(first_text(r).find("text"), std::string::npos) << json::value(r);
}

TEST(ConnectionDispatch, ToolsCallReadsNameAndArgumentsWhateverTheirOrderInParams) {
    server srv(test_options());
    add_test_features(srv);
    harness h(srv);
    h.send(modern_request(1, "tools/call", {{"arguments", {{"text", "after"}}}, {"name", "echo"}}));
    EXPECT_EQ(first_text(result_of(h.response(1))), "after");
    h.send(modern_request(2, "tools/call", {{"name", "echo"}, {"arguments", nullptr}}));
    EXPECT_EQ(first_text(result_of(h.response(2))), "(none)");
    h.send(modern_request(3, "tools/call", {{"name", 5}, {"arguments", {{"text", "x"}}}}));
    expect_error(h.response(3), -32602);
    EXPECT_EQ(h.response(3).at("error").at("message"), "Invalid params: \"name\" must be a string");
    h.send(modern_request(4, "tools/call", {{"arguments", {{"text", "x"}}}}));
    EXPECT_EQ(h.response(4).at("error").at("message"), "Invalid params: \"name\" must be a string");
    h.send(modern_request(5, "tools/call", call_params("echo", {{"text", 5}})));
    EXPECT_EQ(first_text(result_of(h.response(5))),
              "Invalid arguments: argument \"text\" must be of type string");
    h.send(modern_request(6, "tools/call", call_params("nope")));
    EXPECT_EQ(h.response(6).at("error").at("data"), json::value({{"name", "nope"}}));
}

TEST(ConnectionDispatch, CacheHintsComeFromTheOptionsAndStayOffLegacy) {
    auto options = test_options();
    options.cache_hints[duet::protocol::method_id::tools_list] = {
        .ttl_ms = 60000, .scope = duet::protocol::cache_scope::public_cache};
    server srv(options);
    add_test_features(srv);
    harness h(srv);
    h.send(modern_request(1, "tools/list"));
    auto const modern = result_of(h.response(1));
    EXPECT_EQ(modern.at("ttlMs"), 60000);
    EXPECT_EQ(modern.at("cacheScope"), "public");
    h.send(modern_request(2, "prompts/list"));
    auto const defaults = result_of(h.response(2));
    EXPECT_EQ(defaults.at("ttlMs"), 0);
    EXPECT_EQ(defaults.at("cacheScope"), "private");
    h.send(initialize_request(3, "2025-11-25"));
    h.response(3);
    h.send(legacy_request(4, "tools/list"));
    expect_legacy_result(h.response(4));
}

// ---- pagination ------------------------------------------------------------------------------------------

struct list_case {
    char const* name;
    char const* method;
    char const* key;
    char const* id_field;
};

void PrintTo(list_case const& c, std::ostream* os) {
    *os << c.name;
}

class ConnectionPagination : public testing::TestWithParam<list_case> {};

// DIGEST §8: with a page size of 2 every list walks all items exactly once, in the same order every time, and
// the last page has no nextCursor.
TEST_P(ConnectionPagination, SmallPagesWalkEveryItemOnceInOrder) {
    auto const& c = GetParam();
    server srv(test_options(2));
    std::vector<std::string> names{"e", "b", "d", "a", "c"};
    for (auto const& n : names) {
        srv.add_tool(plain_tool("tool-" + n), [](json::object const&, duet::server::request_context&) {
            return duet::server::tool_result::text("");
        });
        srv.add_prompt(duet::server::prompt{.name = "prompt-" + n},
                       [](auto const&, auto&) { return duet::server::prompt_result{}; });
        srv.add_resource(duet::server::resource{.uri = "test://r/" + n, .name = n},
                         [](auto const&, auto&) { return duet::server::read_result{}; });
        srv.add_resource_template(
            duet::server::resource_template{.uri_template = "test://t/" + n + "/{x}", .name = n},
            [](auto const&, auto const&, auto&) { return duet::server::read_result{}; });
    }
    harness h(srv);
    auto walk = [&](int first_id, bool modern) {
        std::vector<std::string> seen;
        json::value cursor;
        int pages = 0;
        for (int id = first_id;; ++id) {
            json::object params;
            if (!cursor.is_null())
                params["cursor"] = cursor;
            h.send(modern ? modern_request(id, c.method, params) : legacy_request(id, c.method, params));
            auto const r = result_of(h.response(id));
            auto const& items = r.at(c.key).as_array();
            EXPECT_LE(items.size(), 2u);
            for (auto const& item : items)
                seen.emplace_back(item.at(c.id_field).as_string());
            ++pages;
            if (!r.contains("nextCursor"))
                break;
            cursor = r.at("nextCursor");
            if (pages > 10) {
                ADD_FAILURE() << "pagination does not end";
                break;
            }
        }
        EXPECT_EQ(pages, 3);
        return seen;
    };
    auto const first = walk(100, true);
    ASSERT_EQ(first.size(), names.size());
    EXPECT_EQ(std::set<std::string>(first.begin(), first.end()).size(), names.size()) << "an item came twice";
    EXPECT_TRUE(std::is_sorted(first.begin(), first.end())) << "not in a deterministic (sorted) order";
    EXPECT_EQ(walk(200, true), first);
    h.send(initialize_request(1, "2025-11-25"));
    h.response(1);
    EXPECT_EQ(walk(300, false), first);
}

INSTANTIATE_TEST_SUITE_P(Lists, ConnectionPagination,
                         testing::Values(list_case{"Tools", "tools/list", "tools", "name"},
                                         list_case{"Prompts", "prompts/list", "prompts", "name"},
                                         list_case{"Resources", "resources/list", "resources", "uri"},
                                         list_case{"ResourceTemplates", "resources/templates/list",
                                                   "resourceTemplates", "uriTemplate"}),
                         [](auto const& p) { return std::string(p.param.name); });

TEST(ConnectionPaginationCursor, InvalidCursorIsInvalidParams) {
    server srv(test_options(2));
    add_test_features(srv);
    harness h(srv);
    for (auto const* bad : {"nope", "kzz", "k0", "x61"}) {
        h.send(modern_request(bad, "tools/list", {{"cursor", bad}}));
        expect_error(h.response(bad), -32602);
    }
    h.send(modern_request(1, "tools/list", {{"cursor", 12}}));
    expect_error(h.response(1), -32602);
}

} // namespace
