// bench/answer_check.hpp: the stdio load driver's verdict on every line a server writes back. The benchmark's
// "every answer was a real result" target rests on it, so what it accepts and refuses is pinned here.
#include "answer_check.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using duet::bench::answer_check;
using duet::bench::line_kind;

// Real answers to `tools/call echo {"text":"hello"}`, as the servers the bench drives write them.
constexpr char const* duet_legacy =
    R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}})";
constexpr char const* duet_modern =
    R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}],"resultType":"complete",)"
    R"("_meta":{"io.modelcontextprotocol/serverInfo":{"name":"duet-demo","version":"0.1.0"}}}})";
constexpr char const* sdk1_legacy =
    R"({"result":{"content":[{"type":"text","text":"hello"}]},"jsonrpc":"2.0","id":1})";
constexpr char const* v2_modern =
    R"({"result":{"content":[{"type":"text","text":"hello"}],"resultType":"complete","_meta":)"
    R"({"io.modelcontextprotocol/serverInfo":{"name":"bench-v2-echo","version":"2.4.0"}}},"jsonrpc":"2.0","id":1})";

// A check with requests 1..n in flight.
answer_check in_flight(std::size_t n, bool expect_text = true) {
    answer_check c("hello");
    c.begin(1, expect_text);
    for (std::size_t i = 0; i < n; ++i)
        c.sent();
    return c;
}

// The verdict on one line sent as the answer to request 1 of 1.
struct verdict {
    bool settles;
    bool good;
    std::size_t bad;
};
verdict judge(std::string const& line, bool expect_text = true) {
    auto c = in_flight(1, expect_text);
    auto const o = c.check_line(line);
    return {o.settles, o.good, c.bad()};
}

TEST(AnswerCheck, AcceptsTheAnswersOfEveryServerTheBenchDrives) {
    for (auto const* line : {duet_legacy, duet_modern, sdk1_legacy, v2_modern}) {
        auto c = in_flight(1);
        auto const o = c.check_line(line);
        EXPECT_EQ(o.kind, line_kind::answer) << line;
        EXPECT_TRUE(o.settles) << line;
        EXPECT_TRUE(o.good) << line;
        EXPECT_EQ(o.slot, 0u);
        EXPECT_EQ(c.settled(), 1u);
        EXPECT_EQ(c.bad(), 0u) << line;
    }
}

TEST(AnswerCheck, AcceptsTheEchoProcessAnswerAndAFalseIsError) {
    auto const v = judge(
        R"({"jsonrpc":"2.0","id":1,"result":{"isError":false,"content":[{"type":"text","text":"hello"}]}})");
    EXPECT_TRUE(v.settles);
    EXPECT_TRUE(v.good);
}

TEST(AnswerCheck, ReadsTheTextAsJsonDoesEscapesIncluded) {
    EXPECT_TRUE(
        judge(R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hel\u006co"}]}})").good);
    EXPECT_TRUE(
        judge(R"({"jsonrpc":"\u0032.0","id":1,"result":{"content":[{"text":"hello","type":"text"}]}})").good);
    EXPECT_TRUE(
        judge(R"({"jsonrpc":"2.0","\u0069d":1,"result":{"content":[{"type":"text","text":"hello"}]}})").good);
    EXPECT_TRUE(
        judge(" {\"jsonrpc\" : \"2.0\" , \"id\" : 1 ,\"result\":{\"content\":[{\"text\":\"hello\"}]}}\r")
            .good);
    // Only the exact text: a longer, shorter or differently cased one is another answer.
    EXPECT_FALSE(
        judge(R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello!"}]}})").good);
    EXPECT_FALSE(
        judge(R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hell"}]}})").good);
    EXPECT_FALSE(
        judge(R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Hello"}]}})").good);
    EXPECT_FALSE(
        judge(R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hel\\lo"}]}})").good);
}

TEST(AnswerCheck, CountsErrorResponsesAndToolErrorsAsBadAnswers) {
    for (
        auto const* line : {
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}})",
            R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}],"isError":true}})",
            R"({"jsonrpc":"2.0","id":1,"result":{"isError":"false","content":[{"type":"text","text":"hello"}]}})",
            R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]},"error":{"code":1}})",
        }) {
        auto const v = judge(line);
        EXPECT_TRUE(v.settles) << line; // the request is answered, badly: the run does not wait for it
        EXPECT_FALSE(v.good) << line;
        EXPECT_EQ(v.bad, 1u) << line;
    }
}

TEST(AnswerCheck, CountsAnswersWithoutTheEchoedTextAsBad) {
    for (
        auto const* line : {
            R"({"jsonrpc":"2.0","id":1,"result":{}})",
            R"({"jsonrpc":"2.0","id":1,"result":{"content":[]}})",
            R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text"}]}})",
            R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":5}]}})",
            R"({"jsonrpc":"2.0","id":1,"result":{"content":["hello"]}})",
            R"({"jsonrpc":"2.0","id":1,"result":{"content":{"type":"text","text":"hello"}}})",
            // Only the first block counts, and only its own members.
            R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"},{"type":"text","text":"hello"}]}})",
            R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","x":{"text":"hello"}}]}})",
            R"({"jsonrpc":"2.0","id":1,"result":{"x":{"content":[{"type":"text","text":"hello"}]}}})",
            R"({"jsonrpc":"2.0","id":1,"text":"hello","result":{"content":[]}})",
            R"({"jsonrpc":"2.0","id":1,"result":"hello"})",
            R"({"jsonrpc":"2.0","id":1,"result":null})",
        }) {
        auto const v = judge(line);
        EXPECT_TRUE(v.settles) << line;
        EXPECT_FALSE(v.good) << line;
        EXPECT_EQ(v.bad, 1u) << line;
    }
}

TEST(AnswerCheck, ReadsTheFirstBlockPastNestedArraysAndLaterBlocks) {
    EXPECT_TRUE(judge(R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"annotations":{"audience":["user"]},)"
                      R"("type":"text","text":"hello"},{"type":"text","text":"more"}],"structuredContent":)"
                      R"({"id":7,"result":[1,2],"text":"other"}}})")
                    .good);
    // The same nesting, with the first block's text wrong: the later and deeper "text" members do not stand
    // in.
    EXPECT_FALSE(judge(R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"annotations":{"audience":["user"]},)"
                       R"("type":"text","text":"nope"},{"type":"text","text":"hello"}]}})")
                     .good);
}

TEST(AnswerCheck, WithoutTheEchoAnyResultIsGood) {
    EXPECT_TRUE(judge(R"({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}})", false).good);
    EXPECT_FALSE(judge(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}})", false).good);
}

TEST(AnswerCheck, RefusesAnEnvelopeThatIsNotExactlyJsonRpc20) {
    for (
        auto const* line : {
            R"({"id":1,"result":{"content":[{"type":"text","text":"hello"}]}})",
            R"({"jsonrpc":"1.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}})",
            R"({"jsonrpc":"2.0 ","id":1,"result":{"content":[{"type":"text","text":"hello"}]}})",
            R"({"jsonrpc":2.0,"id":1,"result":{"content":[{"type":"text","text":"hello"}]}})",
            // Duplicate members the verdict reads: which one a reader would believe is not defined.
            R"({"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}})",
            R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]},"result":{}})",
            R"({"jsonrpc":"2.0","id":1,"result":{"isError":false,"isError":true,"content":[{"text":"hello"}]}})",
            R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"text":"hello","text":"hello"}]}})",
            R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"text":"hello"}],"content":[{"text":"hello"}]}})",
        }) {
        auto const v = judge(line);
        EXPECT_TRUE(v.settles) << line;
        EXPECT_FALSE(v.good) << line;
    }
}

TEST(AnswerCheck, SettlesEachRequestOnceAndRefusesIdsNeverSent) {
    answer_check c("hello");
    c.begin(100, true);
    c.sent(); // 100
    c.sent(); // 101
    auto const answer = [](int id) {
        return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
               R"(,"result":{"content":[{"type":"text","text":"hello"}]}})";
    };
    auto o = c.check_line(answer(101));
    EXPECT_TRUE(o.settles);
    EXPECT_TRUE(o.good);
    EXPECT_EQ(o.slot, 1u);
    o = c.check_line(answer(101)); // a second answer to the same request
    EXPECT_EQ(o.kind, line_kind::bad);
    EXPECT_FALSE(o.settles);
    for (int id : {99, 102, 0, -1}) {
        o = c.check_line(answer(id));
        EXPECT_EQ(o.kind, line_kind::bad) << id;
        EXPECT_FALSE(o.settles) << id;
    }
    o = c.check_line(answer(100));
    EXPECT_TRUE(o.good);
    EXPECT_EQ(o.slot, 0u);
    EXPECT_EQ(c.settled(), 2u);
    EXPECT_EQ(c.bad(), 5u);
    EXPECT_EQ(c.first_bad_line(), answer(101));
}

// JSON-RPC 2.0: a response carries the same id as the request. The driver sends integers, so an id of
// another type (a string of its digits, a fraction, an exponent) answers nothing the driver sent.
TEST(AnswerCheck, AnIdOfAnotherTypeThanTheIntegerSentAnswersNothing) {
    for (auto const* line : {
             R"({"jsonrpc":"2.0","id":"1","result":{"content":[{"type":"text","text":"hello"}]}})",
             R"({"jsonrpc":"2.0","id":1.0,"result":{"content":[{"type":"text","text":"hello"}]}})",
             R"({"jsonrpc":"2.0","id":1e0,"result":{"content":[{"type":"text","text":"hello"}]}})",
             R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})",
             R"({"jsonrpc":"2.0","id":[1],"result":{"content":[{"type":"text","text":"hello"}]}})",
             R"({"jsonrpc":"2.0","id":1,"id":1,"result":{"content":[{"type":"text","text":"hello"}]}})",
             R"({"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"hello"}]}})",
         }) {
        auto c = in_flight(1);
        auto const o = c.check_line(line);
        EXPECT_EQ(o.kind, line_kind::bad) << line;
        EXPECT_FALSE(o.settles) << line;
        EXPECT_EQ(c.settled(), 0u) << line;
        EXPECT_EQ(c.bad(), 1u) << line;
    }
}

TEST(AnswerCheck, CountsNotificationsAndRefusesRequestsFromTheServer) {
    auto c = in_flight(1);
    auto o = c.check_line(
        R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}})");
    EXPECT_EQ(o.kind, line_kind::notification);
    EXPECT_EQ(c.notifications(), 1u);
    EXPECT_EQ(c.bad(), 0u);
    // A request of the server's own, even with an id the driver used: the driver answers none.
    o = c.check_line(R"({"jsonrpc":"2.0","id":1,"method":"roots/list"})");
    EXPECT_EQ(o.kind, line_kind::bad);
    EXPECT_FALSE(o.settles);
    // Not notifications: no JSON-RPC version, a method that is not a string.
    EXPECT_EQ(c.check_line(R"({"method":"notifications/message"})").kind, line_kind::bad);
    EXPECT_EQ(c.check_line(R"({"jsonrpc":"2.0","method":7})").kind, line_kind::bad);
    EXPECT_EQ(c.notifications(), 1u);
    EXPECT_EQ(c.bad(), 3u);
    EXPECT_EQ(c.settled(), 0u);
}

TEST(AnswerCheck, CountsLinesThatAreNotOneJsonObjectAsBad) {
    for (auto const* line : {
             "", "hello", "[]",
             R"([{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}])",
             R"({"jsonrpc":"2.0","id":2,"result":{}}{"jsonrpc":"2.0","id":1,"result":{}})",
             R"({"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"hello"}]},"id":1)",
             R"({"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"hello"}]},"id":1} x)",
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"text\":\"hel\xff\"}]}}", // not UTF-8
         }) {
        auto c = in_flight(2);
        auto const o = c.check_line(line);
        EXPECT_FALSE(o.good) << line;
        EXPECT_EQ(c.bad(), 1u) << line;
    }
}

// A line that breaks off after its id still answers that request, badly: the run counts it and goes on
// instead of waiting for an answer that will not come.
TEST(AnswerCheck, ATruncatedAnswerSettlesItsRequestAsBad) {
    auto c = in_flight(1);
    auto const o = c.check_line(R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","te)");
    EXPECT_EQ(o.kind, line_kind::answer);
    EXPECT_TRUE(o.settles);
    EXPECT_FALSE(o.good);
    EXPECT_EQ(c.bad(), 1u);
}

TEST(AnswerCheck, JoinsLinesSplitAcrossReadsAtEveryByte) {
    std::string stream;
    for (int id = 1; id <= 3; ++id)
        stream += R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                  R"(,"result":{"content":[{"type":"text","text":"hel\u006co"}]}})" + "\n";
    stream += R"({"jsonrpc":"2.0","method":"notifications/progress","params":{}})"
              "\n";
    for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
        auto c = in_flight(3);
        std::vector<std::size_t> slots;
        auto const on = [&](std::size_t slot) {
            slots.push_back(slot);
        };
        auto n = c.feed(std::string_view(stream).substr(0, cut), on);
        n += c.feed(std::string_view(stream).substr(cut), on);
        EXPECT_EQ(n, 3u) << cut;
        EXPECT_EQ(slots, (std::vector<std::size_t>{0, 1, 2})) << cut;
        EXPECT_EQ(c.bad(), 0u) << cut;
        EXPECT_EQ(c.notifications(), 1u) << cut;
    }
    // One byte per read.
    auto c = in_flight(3);
    std::size_t n = 0;
    for (std::size_t i = 0; i < stream.size(); ++i)
        n += c.feed(std::string_view(stream).substr(i, 1), [](std::size_t) {});
    EXPECT_EQ(n, 3u);
    EXPECT_EQ(c.settled(), 3u);
    EXPECT_EQ(c.bad(), 0u);
}

// The driver begins a new run (warm-up, then the measured run) once every request is answered; a line the
// server had begun by then belongs to the stream, not to the run.
TEST(AnswerCheck, KeepsAnUnfinishedLineAcrossRuns) {
    auto c = in_flight(1);
    std::string const stream = std::string(duet_legacy) + "\n" +
                               R"({"jsonrpc":"2.0","method":"notifications/message","params":{}})" + "\n";
    auto const cut = std::string(duet_legacy).size() + 10;
    EXPECT_EQ(c.feed(std::string_view(stream).substr(0, cut), [](std::size_t) {}), 1u);
    c.begin(2, true); // the next run
    c.sent();
    EXPECT_EQ(c.settled(), 0u);
    EXPECT_EQ(c.feed(std::string_view(stream).substr(cut), [](std::size_t) {}), 0u);
    EXPECT_EQ(c.notifications(), 1u);
    EXPECT_EQ(c.bad(), 0u);
    // Request 1 belonged to the run before.
    EXPECT_EQ(c.check_line(duet_legacy).kind, line_kind::bad);
}

// The driver judges a line that repeats a good answer's bytes around another id without parsing it: the
// verdict must be the one the parse gives, for every line, shaped like the good one or not.
TEST(AnswerCheck, AVerdictReusedFromAGoodAnswersBytesIsTheParsedOne) {
    for (std::string const good : {duet_legacy, duet_modern, sdk1_legacy, v2_modern}) {
        auto const at = good.find(R"("id":1)") + 5;
        auto const with_id = [&](std::string const& id) {
            return good.substr(0, at) + id + good.substr(at + 1);
        };
        std::vector<std::string> const lines = {
            with_id("2"),
            with_id("19"),
            with_id("20"), // sent
            with_id("1"),
            with_id("21"),
            with_id("0"), // answered already, never sent
            with_id("02"),
            with_id("-2"),
            with_id("-0"),
            with_id("2.0"),
            with_id("2e0"),
            with_id(R"("2")"),
            with_id(" 2"),
            with_id("2 "),
            with_id(""),
            with_id("1234567890123456789"),
            with_id("123456789012345678"),
            with_id("99999999999999999999"),
            with_id("null"),
            good.substr(0, at) + "3" + good.substr(at + 1, good.size() - at - 2), // cut short
            with_id("4") + " ",
            with_id("5") + "x",
            "x" + with_id("6"),
        };
        answer_check reusing("hello", true);
        answer_check parsing("hello", false);
        for (auto* c : {&reusing, &parsing}) {
            c->begin(1, true);
            for (int i = 0; i < 20; ++i)
                c->sent();
            ASSERT_TRUE(c->check_line(good).good);
        }
        for (auto const& line : lines) {
            auto const r = reusing.check_line(line);
            auto const p = parsing.check_line(line);
            EXPECT_EQ(r.kind, p.kind) << line;
            EXPECT_EQ(r.settles, p.settles) << line;
            EXPECT_EQ(r.slot, p.slot) << line;
            EXPECT_EQ(r.good, p.good) << line;
        }
        EXPECT_EQ(reusing.settled(), parsing.settled());
        EXPECT_EQ(reusing.bad(), parsing.bad());
        EXPECT_EQ(parsing.reused(), 0u);
        // Ids 2, 19, 20, 1, 21, 0, 123456789012345678 and " "/4 were read without a parse.
        EXPECT_EQ(reusing.reused(), 7u) << good;
        // 1 (the first good answer), 2, 19, 20 and "4 " well; 3 (cut short) and 5 (bytes after it) badly.
        EXPECT_EQ(reusing.settled(), 7u) << good;
    }
}

} // namespace
