// server::capabilities() is a snapshot computed when a registration changes, not per request (admission and
// event delivery read it for every message): the same snapshot until something is added or removed, a new one
// that reflects the change right after it, old snapshots unchanged, and the right answer when registrations
// race with readers on other threads.
#include <duet/server/server.hpp>

#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "unit/server/harness.hpp"
#include "unit/server/test_server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::test;
using duet::server::prompt;
using duet::server::prompt_result;
using duet::server::read_result;
using duet::server::resource_template;
using duet::server::server;
using duet::server::tool_result;

void add_plain_tool(server& srv, std::string name) {
    srv.add_tool(plain_tool(std::move(name)),
                 [](json::object const&, duet::server::request_context&) { return tool_result::text("ok"); });
}

TEST(CapabilitiesCache, SnapshotFollowsEveryRegistrationChange) {
    server srv(test_options());
    auto const empty = srv.capabilities();
    ASSERT_TRUE(empty);
    EXPECT_FALSE(empty->tools);
    EXPECT_FALSE(empty->prompts);
    EXPECT_FALSE(empty->resources);
    EXPECT_FALSE(empty->completions);
    EXPECT_TRUE(empty->logging);

    add_plain_tool(srv, "t");
    EXPECT_TRUE(srv.capabilities()->tools);
    EXPECT_TRUE(srv.capabilities()->tools_list_changed);
    EXPECT_FALSE(empty->tools) << "a snapshot taken before a change keeps its values";

    srv.add_prompt(prompt{.name = "p",
                          .complete =
                              [](auto const&, auto const&, auto const&) {
                                  return std::vector<std::string>{};
                              }},
                   [](auto const&, auto&) { return prompt_result{}; });
    EXPECT_TRUE(srv.capabilities()->prompts);
    EXPECT_TRUE(srv.capabilities()->completions);

    srv.add_resource_template(resource_template{.uri_template = "test://x/{id}", .name = "x"},
                              [](auto const&, auto const&, auto&) { return read_result{}; });
    EXPECT_TRUE(srv.capabilities()->resources);
    EXPECT_TRUE(srv.capabilities()->resources_subscribe);

    EXPECT_TRUE(srv.remove_prompt("p"));
    EXPECT_FALSE(srv.capabilities()->prompts);
    EXPECT_FALSE(srv.capabilities()->completions);
    EXPECT_TRUE(srv.remove_resource_template("test://x/{id}"));
    EXPECT_FALSE(srv.capabilities()->resources);
    EXPECT_TRUE(srv.remove_tool("t"));
    EXPECT_FALSE(srv.capabilities()->tools);
    // Removing what is not there changes nothing.
    auto const before = srv.capabilities();
    EXPECT_FALSE(srv.remove_tool("t"));
    EXPECT_EQ(srv.capabilities(), before);
}

// The point of the cache: reading twice without a change yields the very same snapshot.
TEST(CapabilitiesCache, ReadsWithoutAChangeShareOneSnapshot) {
    server srv(test_options());
    add_test_features(srv);
    auto const a = srv.capabilities();
    auto const b = srv.capabilities();
    EXPECT_EQ(a, b);
    add_plain_tool(srv, "another");
    EXPECT_NE(srv.capabilities(), a);
}

// Admission reads the cached capabilities: a method whose capability appears at runtime is served from then
// on, and refused (-32601) again once it goes.
TEST(CapabilitiesCache, AdmissionFollowsRuntimeRegistrations) {
    server srv(test_options());
    add_plain_tool(srv, "echo");
    harness h(srv);
    h.send(modern_request(1, "prompts/list"));
    expect_error(h.response(1), -32601);
    srv.add_prompt(prompt{.name = "late"}, [](auto const&, auto&) { return prompt_result{}; });
    h.send(modern_request(2, "prompts/list"));
    auto const listed = h.response(2);
    expect_modern_result(listed, true);
    EXPECT_EQ(result_of(listed).at("prompts").as_array().size(), 1u);
    EXPECT_TRUE(srv.remove_prompt("late"));
    h.send(modern_request(3, "prompts/list"));
    expect_error(h.response(3), -32601);
    // A legacy session's initialize advertises what is registered now.
    srv.add_prompt(prompt{.name = "later"}, [](auto const&, auto&) { return prompt_result{}; });
    h.send(initialize_request("init", "2025-11-25"));
    EXPECT_TRUE(result_of(h.response("init")).at("capabilities").as_object().contains("prompts"));
    h.expect_schema_valid();
}

// Registrations from several threads race with readers; every snapshot read is whole, and the last one
// matches what is registered at the end (run under the sanitizers too).
TEST(CapabilitiesCache, ConcurrentChangesAndReadsAgree) {
    server srv(test_options());
    constexpr int writers = 3;
    constexpr int rounds = 200;
    std::atomic<bool> stop{false};
    std::atomic<int> reading{0};
    std::vector<std::thread> readers;
    for (int i = 0; i < 2; ++i)
        readers.emplace_back([&] {
            ++reading;
            while (!stop.load()) {
                auto const c = srv.capabilities();
                // A whole snapshot: the list_changed flag always goes with its capability.
                EXPECT_EQ(c->tools, c->tools_list_changed);
                EXPECT_EQ(c->prompts, c->prompts_list_changed);
            }
        });
    // Writers start only once both readers are reading: on a loaded machine the writers could otherwise
    // finish before a reader ever ran, and the race this test is about would not happen.
    while (reading.load() < 2)
        std::this_thread::yield();
    std::vector<std::thread> changers;
    for (int w = 0; w < writers; ++w)
        changers.emplace_back([&srv, w] {
            for (int i = 0; i < rounds; ++i) {
                auto const name = "tool-" + std::to_string(w) + "-" + std::to_string(i);
                add_plain_tool(srv, name);
                if (i % 2 == 0)
                    srv.remove_tool(name);
                srv.add_prompt(prompt{.name = "p" + std::to_string(w)},
                               [](auto const&, auto&) { return prompt_result{}; });
                srv.remove_prompt("p" + std::to_string(w));
            }
        });
    for (auto& t : changers)
        t.join();
    stop = true;
    for (auto& t : readers)
        t.join();
    EXPECT_TRUE(srv.capabilities()->tools); // the odd-numbered tools remain
    EXPECT_FALSE(srv.capabilities()->prompts);
    for (int w = 0; w < writers; ++w)
        for (int i = 1; i < rounds; i += 2)
            srv.remove_tool("tool-" + std::to_string(w) + "-" + std::to_string(i));
    EXPECT_FALSE(srv.capabilities()->tools);
}

} // namespace
