// The transport's stream buffers on their own (src/transport/http): event ids and their parsing, and the
// bounded queue of a modern response stream, which drops a stream its client does not drain. The session
// streams' event logs are pinned in tests/unit/store.
#include "transport/http/event_ids.hpp"
#include "transport/http/stream_queue.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

namespace {

using namespace duet::transport::http;

TEST(EventIds, FormatAndParseAreInverse) {
    EXPECT_EQ(format_event_id(0, 0), "0-0");
    EXPECT_EQ(format_event_id(12, 345), "12-345");
    auto const p = parse_event_id("12-345");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->stream, 12u);
    EXPECT_EQ(p->seq, 345u);
}

TEST(EventIds, AnythingElseIsNotAnId) {
    for (std::string_view bad : {"", "7", "-", "1-", "-1", "1--2", "a-1", "1-b", "1-2-3", " 1-2", "1-2 ",
                                 "+1-2", "99999999999999999999-1"})
        EXPECT_FALSE(parse_event_id(bad)) << bad;
}

// Only the text format_event_id writes is an id: a number with leading zeros is another spelling of it.
TEST(EventIds, LeadingZerosAreNotAnId) {
    for (std::string_view bad : {"01-2", "1-02", "00-0", "0-00", "007-7"})
        EXPECT_FALSE(parse_event_id(bad)) << bad;
    auto const zero = parse_event_id("0-0");
    ASSERT_TRUE(zero);
    EXPECT_EQ(zero->stream, 0u);
    EXPECT_EQ(zero->seq, 0u);
}

boost::asio::awaitable<void> pop_once(std::shared_ptr<stream_queue> q, stream_queue::outcome& got,
                                      std::string& line) {
    got = co_await q->pop(line, std::chrono::milliseconds(0));
}

TEST(StreamQueue, ABacklogBeyondTheBoundDropsTheStream) {
    boost::asio::io_context io;
    auto q = std::make_shared<stream_queue>(io.get_executor(), 2);
    q->push("a");
    q->push("b");
    stream_queue::outcome got{};
    std::string line;
    boost::asio::co_spawn(io, pop_once(q, got, line), boost::asio::detached);
    io.run();
    EXPECT_EQ(got, stream_queue::outcome::line);
    EXPECT_EQ(line, "a");
    q->push("c"); // "b" and "c" wait: the bound
    q->push("d"); // one too many
    io.restart();
    boost::asio::co_spawn(io, pop_once(q, got, line), boost::asio::detached);
    io.run();
    EXPECT_EQ(got, stream_queue::outcome::overflowed);
}

TEST(StreamQueue, AnInterruptionIsReportedOnceThenTheLinesFollow) {
    boost::asio::io_context io;
    auto q = std::make_shared<stream_queue>(io.get_executor());
    q->push("a");
    q->interrupt();
    stream_queue::outcome got{};
    std::string line;
    for (auto const want :
         {stream_queue::outcome::interrupted, stream_queue::outcome::line, stream_queue::outcome::idle}) {
        io.restart();
        boost::asio::co_spawn(io, pop_once(q, got, line), boost::asio::detached);
        io.run();
        EXPECT_EQ(got, want);
    }
    q->close();
    io.restart();
    boost::asio::co_spawn(io, pop_once(q, got, line), boost::asio::detached);
    io.run();
    EXPECT_EQ(got, stream_queue::outcome::closed);
}

TEST(StreamQueue, AReaderThatStaysBehindGetsEveryLineInOrder) {
    // The producer stays ahead the whole time, so the queue never empties: lines come out in order, none
    // lost, none twice, and the lines already taken are let go of on the way (the bound counts only waiting
    // ones).
    boost::asio::io_context io;
    auto q = std::make_shared<stream_queue>(io.get_executor(), 8);
    int pushed = 0;
    int taken = 0;
    std::string line;
    for (; pushed < 3; ++pushed)
        q->push(std::to_string(pushed));
    for (int round = 0; round < 1000; ++round) {
        q->push(std::to_string(pushed++));
        ASSERT_EQ(q->try_pop(line), stream_queue::outcome::line);
        ASSERT_EQ(line, std::to_string(taken++));
    }
    for (; taken < pushed; ++taken) {
        ASSERT_EQ(q->try_pop(line), stream_queue::outcome::line);
        EXPECT_EQ(line, std::to_string(taken));
    }
    EXPECT_EQ(q->try_pop(line), stream_queue::outcome::idle);
    for (int i = 0; i < 8; ++i)
        q->push("x");
    EXPECT_EQ(q->try_pop(line), stream_queue::outcome::line); // 7 wait: within the bound again
    q->push("y");
    q->push("z");
    EXPECT_EQ(q->try_pop(line), stream_queue::outcome::overflowed);
}

} // namespace
