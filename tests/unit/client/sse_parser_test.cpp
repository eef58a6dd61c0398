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

// The spec takes a retry only when its value is ASCII digits; from_chars alone would take "-0".
TEST(SseParser, RetryIsOnlyAsciiDigits) {
    for (std::string_view bad : {"-0", "+5", "-", "5 ", "  5", "0x10", "1e3", "99999999999999999999999"}) {
        sse_parser p;
        (void)p.feed("retry: 250\n\nretry: " + std::string(bad) + "\n\n");
        ASSERT_TRUE(p.retry()) << bad;
        EXPECT_EQ(p.retry()->count(), 250) << bad;
    }
    sse_parser p;
    (void)p.feed("retry:0\n\n");
    ASSERT_TRUE(p.retry());
    EXPECT_EQ(p.retry()->count(), 0);
}

// A stream may start with a UTF-8 byte order mark, which its decoding drops (WHATWG): the first event is
// read, however the mark is cut. Only one mark, and only at the start, is dropped.
TEST(SseParser, DropsAByteOrderMarkAtTheStart) {
    std::string const stream = "\xEF\xBB\xBF"
                               "data: {\"id\":1}\n\n";
    for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
        sse_parser p;
        auto events = p.feed(std::string_view(stream).substr(0, cut));
        auto more = p.feed(std::string_view(stream).substr(cut));
        events.insert(events.end(), more.begin(), more.end());
        ASSERT_EQ(events.size(), 1u) << "cut at " << cut;
        EXPECT_EQ(events[0].data, "{\"id\":1}");
    }
    sse_parser twice;
    EXPECT_TRUE(twice
                    .feed("\xEF\xBB\xBF\xEF\xBB\xBF"
                          "data: x\n\n")
                    .empty())
        << "a second mark is text";
    sse_parser partial;
    auto const kept = partial.feed("\xEF\xBB"
                                   "data: y\n\ndata: z\n\n");
    ASSERT_EQ(kept.size(), 1u) << "two bytes of a mark are text of the first line";
    EXPECT_EQ(kept[0].data, "z");
}

TEST(SseParser, CommentsAloneDispatchNothing) {
    sse_parser p;
    EXPECT_TRUE(p.feed(": ping\n\n:\n\n").empty());
}

// A server that sends one line, or one event's data, without end: past the bound the parser stops instead of
// holding it, and says so; what came before is delivered.
TEST(SseParser, StopsAtTheBoundOfALineOrAnEventsData) {
    sse_parser lines(32);
    auto const first = lines.feed("data: {\"id\":1}\n\n");
    ASSERT_EQ(first.size(), 1u);
    EXPECT_FALSE(lines.overflowed());
    EXPECT_TRUE(lines.feed("data: " + std::string(64, 'x')).empty());
    EXPECT_TRUE(lines.overflowed());
    EXPECT_TRUE(lines.feed("\n\ndata: {}\n\n").empty()) << "nothing once overflowed";

    sse_parser events(32);
    EXPECT_TRUE(
        events.feed("data: " + std::string(20, 'a') + "\ndata: " + std::string(20, 'b') + "\n").empty());
    EXPECT_TRUE(events.overflowed()) << "two data lines of 20 bytes make an event of 41";

    sse_parser exact(32);
    auto const fits = exact.feed("data: " + std::string(32, 'c') + "\n\n");
    ASSERT_EQ(fits.size(), 1u) << "a message of exactly the bound fits";
    EXPECT_EQ(fits[0].data.size(), 32u);
    EXPECT_FALSE(exact.overflowed());
}

} // namespace
