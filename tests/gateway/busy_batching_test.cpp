// The gateway's serving thread in Linux's batch class while many requests are in flight (gateway_options::
// batch_when_busy, src/support/busy_batching.hpp): on with one serving thread, off with --no-busy-batching or
// with several threads, and back to the normal class once the calls are answered. Ten `gather` calls wait in
// the upstream for an eleventh, which the test sends once it has looked: the gateway has ten in flight for as
// long as the test looks, however slowly the ten arrive, and they are answered together.
#include "gateway/announcing_upstream.hpp"
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/batch_class.hpp"

#include <gtest/gtest.h>

#include <sched.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;
using namespace duet::test::gateway;

constexpr int held_calls = 10;

// Whether any thread of `pid` is in the batch class (field 41 of /proc/PID/task/TID/stat).
bool any_thread_batched(pid_t pid) {
    for (auto const& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
        std::ifstream in(task.path() / "stat");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto const paren = text.rfind(')');
        if (paren == std::string::npos)
            continue;
        std::istringstream fields(text.substr(paren + 2));
        std::string field;
        for (int n = 3; n <= 41 && fields >> field; ++n)
            if (n == 41 && std::stoi(field) == SCHED_BATCH)
                return true;
    }
    return false;
}

// A modern tools/call of `gather` that waits in the upstream for 11 calls, having noted "gather held" as it
// began, and answers "PID together" when the eleventh comes. Its wait before answering "alone" instead only
// bounds a test whose eleventh call never comes.
json::object held_gather(int id) {
    json::object params =
        call_params("gather", json::object{{"count", held_calls + 1}, {"wait_ms", 30000}, {"tag", "held"}});
    return modern_request(id, "tools/call", std::move(params));
}

struct observed {
    bool batched_while_held = false;
    bool batched_after = true;
    int answered = 0;
};

// Ten held calls through a gateway started with `extra`; whether it was batched while they waited and after.
observed hold_ten(std::vector<std::string> extra) {
    announcing_upstream up;
    extra.insert(extra.end(), {"--era", "modern", "--pool-size", "1"});
    gateway_process gw(up.upstream(true), std::move(extra));
    EXPECT_TRUE(up.wait_for("started")); // the control child
    observed seen;
    std::vector<std::unique_ptr<mcp_http>> clients;
    for (int i = 0; i < held_calls; ++i)
        clients.push_back(std::make_unique<mcp_http>(gw.ep()));
    std::vector<std::string> answers(held_calls);
    std::vector<std::thread> threads;
    for (int i = 0; i < held_calls; ++i)
        threads.emplace_back([&, i] {
            auto const r = clients[i]->post(held_gather(i + 1));
            for (auto const& m : r.messages())
                if (auto const* result = m.as_object().if_contains("result"))
                    answers[i] = first_text(result->as_object());
        });
    EXPECT_TRUE(up.wait_for("gather held", held_calls)) << up.log_text();
    seen.batched_while_held = any_thread_batched(gw.pid());
    auto const releasing = mcp_http(gw.ep()).post(held_gather(0));
    EXPECT_EQ(releasing.status, 200u) << releasing.body;
    for (auto& t : threads)
        t.join();
    for (auto const& a : answers)
        seen.answered += a.ends_with(" together") ? 1 : 0;
    // The answers went out as the count fell: the class is back by the time the last one arrived.
    seen.batched_after = any_thread_batched(gw.pid());
    return seen;
}

TEST(GatewayBusyBatching, OneServingThreadIsBatchWhileTenCallsWaitAndNormalAfter) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    DUET_SKIP_WITHOUT_BATCH_CLASS();
    auto const seen = hold_ten({"--threads", "1"});
    EXPECT_TRUE(seen.batched_while_held);
    EXPECT_EQ(seen.answered, held_calls);
    EXPECT_FALSE(seen.batched_after);
}

TEST(GatewayBusyBatching, NoBusyBatchingKeepsTheNormalClass) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    DUET_SKIP_WITHOUT_BATCH_CLASS();
    auto const seen = hold_ten({"--threads", "1", "--no-busy-batching"});
    EXPECT_FALSE(seen.batched_while_held);
    EXPECT_EQ(seen.answered, held_calls);
}

TEST(GatewayBusyBatching, SeveralServingThreadsAreNeverBatched) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    DUET_SKIP_WITHOUT_BATCH_CLASS();
    auto const seen = hold_ten({"--threads", "2"});
    EXPECT_FALSE(seen.batched_while_held);
    EXPECT_EQ(seen.answered, held_calls);
}

} // namespace
