// A POST answered on an SSE stream (legacy HTTP, src/client/http_answers.cpp async_read_sse): the answer is
// delivered as its event arrives; the stream's end, which a server often writes apart from the event (Node's
// res.end() after res.write()), is read for up to a second more so that the connection serves the next POST,
// and a stream the server leaves open is closed after that second without delaying the answer.
//
// Nothing here races the clock: the client only acts while the test runs its io_context, the fake tells the
// state of a connection when asked on one of the test's own, and a wait that must outlast the grace ends with
// every handler that is ready run.
#include "client/sync_client.hpp"
#include "client/url_process.hpp"
#include "http/http_client.hpp"

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

// The client's stream_end_grace (src/client/http_transport.hpp) and a wait that outlasts it: a POST stream is
// then read to its end or given up, whatever the load, once the handlers that are ready have run.
constexpr auto grace = std::chrono::seconds(1);
constexpr auto past_the_grace = std::chrono::milliseconds(1500);

// Waits past the grace with the client's io_context running, so that what it reads and its timers go on
// meanwhile; then runs what is ready (a timer that expired while this thread waited for a core).
void run_past_the_grace(sync_client& c) {
    auto const until = std::chrono::steady_clock::now() + past_the_grace;
    c.pump_until([&] { return std::chrono::steady_clock::now() >= until; });
    c.io().poll();
}

// What the fake says of the last answer's connection ("none", "open", "closed"), asked on a connection of the
// test's own: the client's io_context does not run meanwhile, so the client cannot change it while we ask.
std::string previous_connection(url_process const& server) {
    auto const r = test::http::exchange(test::http::endpoint::parse(server.url()),
                                        {.method = "GET", .target = "/state"});
    EXPECT_EQ(r.status, 200u) << r.body;
    return r.body;
}

// The fake's one tool is named "posted-P-previous-S" (tests/client/fakes/http_scripted.mjs).
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
    // Each later call comes once the last stream ended (30 ms after its answer, read within the grace or
    // never): on the same connection.
    connections last;
    for (int i = 0; i < 2; ++i) {
        run_past_the_grace(c);
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
    auto const started = std::chrono::steady_clock::now(); // before the request: before the grace began
    auto const first = listed(c);
    EXPECT_EQ(first.previous, "none");
    // The client has not run since the answer came: an answer that waited for the stream's end (or for the
    // grace) would find the stream's connection closed by now.
    EXPECT_EQ(previous_connection(server), "open") << "the answer waited for the end of its stream";
    // After the grace, and not before, the open stream's connection is closed, with no further call.
    EXPECT_TRUE(
        c.pump_until([&] { return previous_connection(server) == "closed"; }, std::chrono::seconds(10)))
        << "the stream left open was never closed";
    EXPECT_GE(std::chrono::steady_clock::now() - started, grace);
}

} // namespace
