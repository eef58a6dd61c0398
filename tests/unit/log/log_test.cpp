// The process log's two formats, its levels, and the escaping that keeps a JSON line one line.
#include <duet/log/log.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <string>

namespace log_test {

using namespace duet;

// Restores the process-wide defaults a test changed.
struct defaults_after {
    ~defaults_after() { log::configure(log::format::text, log::level::info); }
};

TEST(Log, JsonLinesCarryEveryFieldGivenAndNoOther) {
    std::string line;
    log::append(line,
                {.severity = log::level::warning,
                 .component = "duet gateway",
                 .name = "forwarded",
                 .message = "tools/call forwarded",
                 .method = "tools/call",
                 .era = "modern",
                 .upstream = "files",
                 .outcome = "ok",
                 .latency_ms = 1.23456,
                 .trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"},
                log::format::json);
    auto const v = boost::json::parse(line).as_object();
    EXPECT_EQ(v.at("level"), "warning");
    EXPECT_EQ(v.at("component"), "duet gateway");
    EXPECT_EQ(v.at("event"), "forwarded");
    EXPECT_EQ(v.at("message"), "tools/call forwarded");
    EXPECT_EQ(v.at("method"), "tools/call");
    EXPECT_EQ(v.at("era"), "modern");
    EXPECT_EQ(v.at("upstream"), "files");
    EXPECT_EQ(v.at("outcome"), "ok");
    EXPECT_DOUBLE_EQ(v.at("latency_ms").as_double(), 1.235);
    EXPECT_EQ(v.at("trace_id"), "4bf92f3577b34da6a3ce929d0e0e4736");
    auto const ts = std::string(v.at("ts").as_string());
    EXPECT_EQ(ts.size(), 24u) << ts; // 2026-12-05T10:45:01.123Z
    EXPECT_EQ(ts.back(), 'Z');
    EXPECT_FALSE(v.contains("session"));

    std::string bare;
    log::append(bare, {.name = "started"}, log::format::json);
    auto const b = boost::json::parse(bare).as_object();
    EXPECT_EQ(b.size(), 4u) << bare; // ts, level, component, event
    EXPECT_EQ(b.at("level"), "info");
}

TEST(Log, AMessageWithQuotesNewlinesAndControlsStaysOneJsonLine) {
    std::string line;
    log::append(line, {.name = "x", .message = "say \"hi\"\\\nthen\ttab \x01 end"}, log::format::json);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_EQ(boost::json::parse(line).at("message"), "say \"hi\"\\\nthen\ttab \x01 end");
}

TEST(Log, TextLinesAreTheComponentAndTheMessage) {
    std::string line;
    log::append(line, {.component = "duet http", .name = "http", .message = "drain deadline reached"},
                log::format::text);
    EXPECT_EQ(line, "duet http: drain deadline reached");
    line.clear();
    log::append(line, {.name = "started"}, log::format::text);
    EXPECT_EQ(line, "duet: started");
}

TEST(Log, LevelsFilterFromTheThresholdUp) {
    defaults_after restore;
    EXPECT_FALSE(log::enabled(log::level::debug));
    EXPECT_TRUE(log::enabled(log::level::info));
    log::configure(log::format::json, log::level::warning);
    EXPECT_FALSE(log::enabled(log::level::info));
    EXPECT_TRUE(log::enabled(log::level::warning));
    EXPECT_TRUE(log::enabled(log::level::error));
    EXPECT_EQ(log::current_format(), log::format::json);
    log::configure(log::format::text, log::level::debug);
    EXPECT_TRUE(log::enabled(log::level::debug));
}

TEST(Log, LevelsAndFormatsAreParsedByName) {
    EXPECT_EQ(log::parse_level("debug"), log::level::debug);
    EXPECT_EQ(log::parse_level("warn"), log::level::warning);
    EXPECT_EQ(log::parse_level("error"), log::level::error);
    EXPECT_FALSE(log::parse_level("verbose"));
    EXPECT_FALSE(log::parse_level("INFO"));
    EXPECT_EQ(log::parse_format("json"), log::format::json);
    EXPECT_FALSE(log::parse_format("yaml"));
}

} // namespace log_test
