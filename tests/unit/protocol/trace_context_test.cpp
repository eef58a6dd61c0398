#include <duet/protocol/trace_context.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <string>

namespace trace_context_test {

using duet::protocol::child_of;
using duet::protocol::http_facts;
using duet::protocol::parse_traceparent;
using duet::protocol::trace_of;

constexpr char const* valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceContext, AValidTraceparentIsKeptAsIs) {
    EXPECT_EQ(parse_traceparent(valid), valid);
}

TEST(TraceContext, EveryMalformedTraceparentIsIgnored) {
    char const* const bad[] = {
        "",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",          // no flags
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",       // uppercase
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",       // trace id all zeros
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",       // parent id all zeros
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",       // version ff is invalid
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", // version 00 has no more
        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",       // separator
        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",       // not hex
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",      // later version, no '-' after
    };
    for (auto const* text : bad)
        EXPECT_FALSE(parse_traceparent(text)) << text;
}

TEST(TraceContext, ALaterVersionIsReadByItsFirstFourFieldsAndPassedOnAs00) {
    EXPECT_EQ(parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes-next"),
              valid);
}

TEST(TraceContext, MetaWinsOverHeadersAndAnInvalidMetaFallsBackToThem) {
    http_facts http;
    http.traceparent = "00-11111111111111111111111111111111-2222222222222222-00";
    http.tracestate = "vendor=header";
    auto const with_meta = boost::json::parse(
        R"({"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"a=1"}})");
    auto t = trace_of(with_meta, &http);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->traceparent, valid);
    EXPECT_EQ(t->tracestate, "a=1");
    EXPECT_EQ(t->trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
    EXPECT_EQ(t->parent_id(), "00f067aa0ba902b7");
    EXPECT_TRUE(t->sampled());

    auto const bad_meta = boost::json::parse(R"({"_meta":{"traceparent":"nonsense","tracestate":"a=1"}})");
    t = trace_of(bad_meta, &http);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->traceparent, http.traceparent);
    EXPECT_EQ(t->tracestate, "vendor=header");
    EXPECT_FALSE(t->sampled());

    EXPECT_FALSE(trace_of(bad_meta, nullptr)) << "stdio: nothing else to fall back on";
    EXPECT_FALSE(trace_of(boost::json::parse("{}"), nullptr));
    EXPECT_FALSE(trace_of(boost::json::parse(R"({"_meta":[]})"), nullptr));
    http.traceparent = "00-bad";
    EXPECT_FALSE(trace_of(boost::json::parse("{}"), &http));
}

TEST(TraceContext, AnOverlongOrControlCharacterTracestateIsDropped) {
    http_facts http;
    http.traceparent = valid;
    http.tracestate = std::string(513, 'a');
    auto t = trace_of(boost::json::parse("{}"), &http);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->tracestate, "");
    http.tracestate = "a=1\nb=2";
    EXPECT_EQ(trace_of(boost::json::parse("{}"), &http)->tracestate, "");
    http.tracestate = std::string(512, 'a');
    EXPECT_EQ(trace_of(boost::json::parse("{}"), &http)->tracestate.size(), 512u);
}

TEST(TraceContext, TheNextHopKeepsTheTraceAndFlagsUnderItsOwnParent) {
    duet::protocol::trace_context const parent{valid, "a=1"};
    auto const next = child_of(parent, "b7ad6b7169203331");
    EXPECT_EQ(next.traceparent, "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01");
    EXPECT_EQ(next.tracestate, "a=1");
}

} // namespace trace_context_test
