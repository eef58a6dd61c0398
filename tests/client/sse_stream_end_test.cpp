// A POST answered on an SSE stream (legacy HTTP, src/client/http_transport.cpp read_sse): the answer is
// delivered as its event arrives; the stream's end, which a server often writes apart from the event (Node's
// res.end() after res.write()), is read for up to a second more so that the connection serves the next POST,
// and a stream the server leaves open is closed after that second without delaying the answer.
#include "client/sync_client.hpp"
#include "client/url_process.hpp"

#include <chrono>
#include <cstdio>
#include <string>

namespace {

using namespace duet;
using namespace duet::test::client_side;

struct connections {
    int posted = 0;       ///< TCP connections that had carried a POST
    std::string previous; ///< the previous answer's connection: "none", "open" or "closed"
};

// The fake's one tool is named "posted-P-previous-S" (tests/client/fakes/http_scripted.mjs).
// Waits `d` with the client's io_context running, so that what it reads and its timers go on meanwhile.
void run_for(sync_client& c, std::chrono::milliseconds d) {
    auto const until = std::chrono::steady_clock::now() + d;
    c.pump_until([&] { return std::chrono::steady_clock::now() >= until; });
}

connections listed(sync_client& c) {
    auto tools = c.run(c->async_list_tools());
    EXPECT_TRUE(tools) << tools.error().to_string();
    connections n;
    if (!tools || tools->empty())
        return n;
    std::string const name(tools->at(0).as_object().at("name").as_string());
    char state[16] = {};
    EXPECT_EQ(std::sscanf(name.c_str(), "posted-%d-previous-%15s", &n.posted, state), 2) << name;
    n.previous = state;
    return n;
}

TEST(ClientSseStreamEnd, PostStreamEndingInALaterWriteKeepsItsConnection) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_NODE(node);
    url_process server({node, fake("http_scripted.mjs"), "sse-late-end"});
    ASSERT_FALSE(server.url().empty());
    sync_client c;
    auto r = c.connect(client::http_target{server.url(), {}}, legacy_options());
    ASSERT_TRUE(r) << r.error().to_string();
    auto const first = listed(c);
    // Each later call comes once the last stream ended (30 ms after its answer): on the same connection.
    connections last;
    for (int i = 0; i < 3; ++i) {
        run_for(c, std::chrono::milliseconds(100));
        last = listed(c);
    }
    EXPECT_EQ(last.posted, first.posted) << "a stream read to its end leaves its connection for the next";
}

TEST(ClientSseStreamEnd, PostStreamLeftOpenIsAnsweredAtOnceAndClosedAfterAGrace) {
    auto const node = node_binary();
    DUET_SKIP_WITHOUT_NODE(node);
    url_process server({node, fake("http_scripted.mjs"), "sse-open"});
    ASSERT_FALSE(server.url().empty());
    sync_client c;
    auto r = c.connect(client::http_target{server.url(), {}}, legacy_options());
    ASSERT_TRUE(r) << r.error().to_string();
    auto const started = std::chrono::steady_clock::now();
    auto const first = listed(c);
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(800))
        << "the answer waits for no end of its stream";
    EXPECT_EQ(first.previous, "none");
    // Past the grace the open stream's connection is closed.
    run_for(c, std::chrono::milliseconds(2500));
    EXPECT_EQ(listed(c).previous, "closed");
}

} // namespace
