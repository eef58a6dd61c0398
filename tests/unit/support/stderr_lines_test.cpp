// A child's stderr as bounded log lines (src/support/stderr_lines.hpp): whole lines however the reads cut
// them, a line over the bound cut once (its rest skipped), a flood thinned to so many lines a window with the
// rest counted, and the last unfinished line at the end.
#include "support/stderr_lines.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using duet::support::stderr_lines;
using namespace std::chrono_literals;

struct collected_lines {
    std::vector<std::string> lines;
    auto sink() {
        return [this](std::string_view l) {
            lines.emplace_back(l);
        };
    }
};

TEST(StderrLines, LinesComeWholeWithoutTheirLineEndsHoweverTheReadsCutThem) {
    stderr_lines split({});
    collected_lines got;
    auto const t = stderr_lines::clock::now();
    split.feed("first li", t, got.sink());
    split.feed("ne\r\n\nsecond\nthi", t, got.sink());
    EXPECT_EQ(got.lines, (std::vector<std::string>{"first line", "second"}));
    split.finish(t, got.sink());
    EXPECT_EQ(got.lines, (std::vector<std::string>{"first line", "second", "thi"}));
}

TEST(StderrLines, ALineOverTheBoundIsCutOnceAndItsRestSkipped) {
    stderr_lines split({.max_line = 8, .lines_per_window = 100, .window = 1s});
    collected_lines got;
    auto const t = stderr_lines::clock::now();
    split.feed("0123456789abc", t, got.sink()); // cut as soon as it is too long, newline or not
    ASSERT_EQ(got.lines.size(), 1u);
    EXPECT_EQ(got.lines[0], "01234567" + std::string(stderr_lines::cut_mark));
    split.feed(std::string(100000, 'z'), t, got.sink());
    split.feed("zz\nnext\n", t, got.sink());
    EXPECT_EQ(got.lines.size(), 2u);
    EXPECT_EQ(got.lines.back(), "next");
    split.feed("12345678\n", t, got.sink());
    EXPECT_EQ(got.lines.back(), "12345678") << "a line of exactly the bound is whole";
}

TEST(StderrLines, PastTheWindowsLinesTheRestAreDroppedAndCounted) {
    stderr_lines split({.max_line = 64, .lines_per_window = 3, .window = 1s});
    collected_lines got;
    auto const t = stderr_lines::clock::now();
    for (int i = 0; i < 10; ++i)
        split.feed("line " + std::to_string(i) + "\n", t, got.sink());
    EXPECT_EQ(got.lines, (std::vector<std::string>{"line 0", "line 1", "line 2"}));
    split.feed("later\n", t + 1500ms, got.sink());
    ASSERT_EQ(got.lines.size(), 5u);
    EXPECT_EQ(got.lines[3], "[7 more lines dropped: over 3 lines in 1000 ms]");
    EXPECT_EQ(got.lines[4], "later");
    split.feed("a\nb\nc\n", t + 1600ms, got.sink());
    split.finish(t + 1700ms, got.sink());
    EXPECT_EQ(got.lines.back(), "[1 more lines dropped: over 3 lines in 1000 ms]")
        << "counted at the end too";
}

} // namespace
