// A POST answered on an SSE stream (legacy HTTP, src/client/http_transport.cpp read_sse): the answer is
// delivered as its event arrives; the stream's end, which a server often writes apart from the event (Node's
// res.end() after res.write()), is read for up to a second more so that the connection serves the next POST,
// and a stream the server leaves open is closed after that second without delaying the answer.
#include "client/sync_client.hpp"
#include "client/url_process.hpp"

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace {

using namespace duet;
using namespace duet::test::client_side;

struct connections {
    int accepted = 0;
    int open = 0;
};

// The fake's one tool is named "accepted-A-open-O" (tests/client/fakes/http_scripted.mjs).
connections listed(sync_client& c) {
    auto tools = c.run(c->async_list_tools());
    EXPECT_TRUE(tools) << tools.error().to_string();
    connections n;
    if (!tools || tools->empty())
        return n;
    std::string const name(tools->at(0).as_object().at("name").as_string());
    EXPECT_EQ(std::sscanf(name.c_str(), "accepted-%d-open-%d", &n.accepted, &n.open), 2) << name;
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
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        last = listed(c);
    }
    EXPECT_EQ(last.accepted, first.accepted) << "a stream read to its end leaves its connection for the next";
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
    // Past the grace the open stream's connection is closed (the next call goes on one kept from the
    // handshake).
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    auto const later = listed(c);
    EXPECT_EQ(later.open, first.open - 1)
        << "the first stream's connection is closed, the second call on a kept one";
}

} // namespace
