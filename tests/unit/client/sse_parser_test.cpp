// Tests for duet/client/detail/sse_parser.hpp: the text/event-stream rules a Streamable HTTP client needs
// (events split at any byte boundary, multi-line data, comments, CRLF and CR line ends, last event id
// persisting, `retry` honoured only when it is a number).
#include <duet/client/detail/sse_parser.hpp>

#include <gtest/gtest.h>

namespace {

using duet::client::detail::sse_parser;

TEST(SseParser, SplitsEventsAtAnyByteBoundary) {
    std::string const stream =
        "id: 1\nevent: message\ndata: {\"a\":1}\n\n: keep-alive\n\ndata: x\ndata: y\n\n";
    for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
        sse_parser p;
        auto events = p.feed(std::string_view(stream).substr(0, cut));
        auto more = p.feed(std::string_view(stream).substr(cut));
        events.insert(events.end(), more.begin(), more.end());
        ASSERT_EQ(events.size(), 2u) << "cut at " << cut;
        EXPECT_EQ(events[0].data, "{\"a\":1}");
        EXPECT_EQ(events[0].id, "1");
        EXPECT_EQ(events[0].event, "message");
        EXPECT_EQ(events[1].data, "x\ny");
        EXPECT_EQ(events[1].id, "1") << "the last event id persists";
    }
}

TEST(SseParser, AcceptsCrLfAndCrLineEnds) {
    sse_parser p;
    auto const a = p.feed("data: one\r\n\r\ndata: two\r\rdata: three\n\n");
    ASSERT_EQ(a.size(), 3u);
    EXPECT_EQ(a[0].data, "one");
    EXPECT_EQ(a[1].data, "two");
    EXPECT_EQ(a[2].data, "three");
}

TEST(SseParser, PrimingEventCarriesIdAndRetryWithoutData) {
    sse_parser p;
    auto const events = p.feed("id: event-1\nretry: 500\ndata: \n\n");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_TRUE(events[0].data.empty());
    EXPECT_EQ(p.last_event_id(), "event-1");
    ASSERT_TRUE(p.retry());
    EXPECT_EQ(p.retry()->count(), 500);
}

TEST(SseParser, IgnoresNonNumericRetry) {
    sse_parser p;
    (void)p.feed("retry: 300\n\nretry: soon\n\nretry: -1\n\n");
    ASSERT_TRUE(p.retry());
    EXPECT_EQ(p.retry()->count(), 300);
}

TEST(SseParser, CommentsAloneDispatchNothing) {
    sse_parser p;
    EXPECT_TRUE(p.feed(": ping\n\n:\n\n").empty());
}

} // namespace
