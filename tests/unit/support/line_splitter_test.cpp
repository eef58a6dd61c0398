// src/support/line_splitter.hpp: the one line splitter behind both ends of stdio (DIGEST §10: messages are
// delimited by newlines and MUST NOT contain embedded newlines). What each side does with an oversized line
// and with the end of input is the transport's; these pin what the splitter hands them.
#include "support/line_splitter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace {

using duet::support::line_splitter;

// What the splitter handed on, in order: a line as itself, an oversized line as "<oversized>".
struct events {
    std::vector<std::string> seen;
    std::size_t reads = 0;
};

// Feeds `bytes` to `split` in pieces of at most `piece` bytes (and never more than space() offers), as a
// reader would.
void feed(line_splitter& split, std::string_view bytes, std::size_t piece, events& out) {
    while (!bytes.empty()) {
        auto const room = split.space();
        EXPECT_FALSE(room.empty());
        auto const n = std::min({piece, room.size(), bytes.size()});
        std::copy_n(bytes.data(), n, room.data());
        bytes.remove_prefix(n);
        ++out.reads;
        split.commit(
            n, [&](std::string_view line) { out.seen.emplace_back(line); },
            [&] { out.seen.emplace_back("<oversized>"); });
    }
}

std::vector<std::string> split_all(std::string_view bytes, std::size_t max_line = 1024,
                                   std::size_t first_buffer = 16, std::size_t piece = 1 << 20) {
    line_splitter split(max_line, first_buffer);
    events out;
    feed(split, bytes, piece, out);
    return out.seen;
}

using lines = std::vector<std::string>;

TEST(LineSplitter, LinesCutAtEveryPointComeThroughWhole) {
    std::string const stream = "{\"a\":1}\r\n\n{\"b\":\"two words\"}\n\r\n{\"c\":[1,2,3]}\r\n";
    lines const expected{"{\"a\":1}", "{\"b\":\"two words\"}", "{\"c\":[1,2,3]}"};
    for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
        line_splitter split(1024, 8);
        events out;
        feed(split, std::string_view(stream).substr(0, cut), 1 << 20, out);
        feed(split, std::string_view(stream).substr(cut), 1 << 20, out);
        EXPECT_EQ(out.seen, expected) << "cut at " << cut;
        EXPECT_EQ(split.unfinished(), "");
    }
    for (std::size_t piece = 1; piece <= 9; ++piece)
        EXPECT_EQ(split_all(stream, 1024, 4, piece), expected) << "pieces of " << piece;
}

TEST(LineSplitter, OnlyOneTrailingCarriageReturnIsDropped) {
    EXPECT_EQ(split_all("a\rb\r\n"), (lines{"a\rb"}));
    EXPECT_EQ(split_all("x\r\r\n"), (lines{"x\r"}));
    EXPECT_EQ(split_all("\r\r\n"), (lines{"\r"}));
    EXPECT_EQ(split_all("\ry\n"), (lines{"\ry"}));
}

TEST(LineSplitter, BlankLinesAreDropped) {
    EXPECT_EQ(split_all("\n\n\r\n\n"), lines{});
    EXPECT_EQ(split_all("\nz\n\n"), (lines{"z"}));
    EXPECT_EQ(split_all(" \n"), (lines{" "})); // a space is not blank: the parser answers it
}

TEST(LineSplitter, LineLongerThanTheBufferGrowsIt) {
    std::string const big(5000, 'x');
    for (std::size_t piece : {1u, 7u, 4096u, 1u << 20})
        EXPECT_EQ(split_all("a\n" + big + "\r\nb\n", 8192, 16, piece), (lines{"a", big, "b"}))
            << "pieces of " << piece;
}

TEST(LineSplitter, LineOfExactlyTheBoundIsHandedOnAndOneByteMoreIsOversized) {
    std::string const at(100, 'y');
    for (std::size_t first : {16u, 101u, 4096u}) {
        EXPECT_EQ(split_all(at + "\n", 100, first), (lines{at})) << "first buffer " << first;
        EXPECT_EQ(split_all(at + "y\n", 100, first), (lines{"<oversized>"})) << "first buffer " << first;
    }
}

TEST(LineSplitter, CarriageReturnCountsTowardTheBound) {
    std::string const at(100, 'y');
    EXPECT_EQ(split_all(at + "\r\n", 100), (lines{"<oversized>"}));
    EXPECT_EQ(split_all(at.substr(1) + "\r\n", 100), (lines{at.substr(1)}));
}

// The server's behaviour: an oversized line is reported once, in its place among the others, and the next
// line is served; whether it arrived whole in one read or over many.
TEST(LineSplitter, OversizedLineIsReportedOnceInOrderAndSkippedToItsNewline) {
    std::string const huge(1000, 'z');
    std::string const stream = "before\n" + huge + "\nafter\n";
    lines const expected{"before", "<oversized>", "after"};
    for (std::size_t first : {16u, 64u, 1u << 16})
        for (std::size_t piece : {1u, 3u, 50u, 999u, 1u << 20})
            EXPECT_EQ(split_all(stream, 64, first, piece), expected)
                << "first buffer " << first << ", pieces of " << piece;
}

TEST(LineSplitter, OversizedLineIsReportedBeforeItsNewlineArrives) {
    line_splitter split(10, 16);
    events out;
    feed(split, "ok\n0123456789a", 1 << 20, out);
    EXPECT_EQ(out.seen, (lines{"ok", "<oversized>"}));
    feed(split, "bcdef", 1 << 20, out); // still the same line: no second report
    EXPECT_EQ(out.seen, (lines{"ok", "<oversized>"}));
    EXPECT_EQ(split.unfinished(), "");
    feed(split, "gh\nnext\n", 1 << 20, out);
    EXPECT_EQ(out.seen, (lines{"ok", "<oversized>", "next"}));
}

TEST(LineSplitter, TwoOversizedLinesInARowAreReportedTwice) {
    std::string const huge(40, 'q');
    EXPECT_EQ(split_all(huge + "\n" + huge + "\nend\n", 10, 16, 5),
              (lines{"<oversized>", "<oversized>", "end"}));
    EXPECT_EQ(split_all(huge + "\n" + huge + "\nend\n", 10, 4096),
              (lines{"<oversized>", "<oversized>", "end"}));
}

// What each transport does at end of input is its own (the server serves the last line, the client drops
// it); the splitter keeps that line exactly as it came.
TEST(LineSplitter, FinalLineWithoutNewlineStaysUnfinishedAsItCame) {
    line_splitter split(1024, 8);
    events out;
    feed(split, "one\ntwo words\r", 3, out);
    EXPECT_EQ(out.seen, (lines{"one"}));
    EXPECT_EQ(split.unfinished(), "two words\r");

    line_splitter ended(1024, 8);
    events none;
    feed(ended, "one\n", 1 << 20, none);
    EXPECT_EQ(ended.unfinished(), "");
}

TEST(LineSplitter, UnfinishedIsEmptyWhileAnOversizedLineIsSkipped) {
    line_splitter split(8, 16);
    events out;
    feed(split, "0123456789", 4, out);
    EXPECT_EQ(out.seen, (lines{"<oversized>"}));
    EXPECT_EQ(split.unfinished(), "");
    feed(split, "more", 4, out);
    EXPECT_EQ(split.unfinished(), "");
    feed(split, "\nlast", 4, out);
    EXPECT_EQ(split.unfinished(), "last");
}

// The buffer never grows past what the bound needs: a line of max_line bytes fits with its newline's byte
// of room, and the byte after that is the one that makes it oversized.
TEST(LineSplitter, BufferStopsGrowingOneByteOverTheBound) {
    line_splitter split(100, 16);
    events out;
    feed(split, std::string(100, 'w'), 1 << 20, out);
    EXPECT_EQ(split.space().size(), 1u);
    EXPECT_TRUE(out.seen.empty());
    feed(split, "\n", 1, out);
    EXPECT_EQ(out.seen, (lines{std::string(100, 'w')}));
}

// An unfinished line moves to the front once the buffer runs short of room, so reads keep getting at least
// half of it; the lines stay whole across the move.
TEST(LineSplitter, UnfinishedLineMovesToTheFrontWhenRoomRunsShort) {
    line_splitter split(1024, 64);
    events out;
    std::string bytes(30, 'a');
    bytes.append("\n").append(10, 'b');
    feed(split, bytes, 1 << 20, out);
    EXPECT_EQ(split.space().size(), 64u - 10u); // less than half was left: the 10 bytes moved
    feed(split, "c\n", 1 << 20, out);
    EXPECT_EQ(out.seen, (lines{std::string(30, 'a'), std::string(10, 'b') + "c"}));
}

// A first buffer of one byte (the client's when a message may have no bytes at all, or when one more than the
// bound wraps to 0): once that byte holds part of a line there is still room to read the rest into.
TEST(LineSplitter, OneByteFirstBufferAlwaysHasRoomForTheNextRead) {
    for (std::size_t max_line : {std::size_t{8}, static_cast<std::size_t>(-1)}) {
        for (std::size_t first_buffer : {0u, 1u}) {
            line_splitter split(max_line, first_buffer);
            lines seen;
            for (char c : std::string_view("abc\nde\n")) {
                auto const room = split.space();
                ASSERT_FALSE(room.empty()) << "first buffer " << first_buffer << ", at '" << c << "'";
                room[0] = c;
                split.commit(
                    1, [&](std::string_view line) { seen.emplace_back(line); }, [] {});
            }
            EXPECT_EQ(seen, (lines{"abc", "de"}));
        }
    }
}

} // namespace
