// src/jsonrpc/value_parse.hpp: the frame's JSON text parsed with the check for non-finite numbers noted on
// the way (it was a second walk over the parsed tree). It must give what boost::json::parse gives (value,
// error and storage) and the verdict of that walk, kept here as the reference; and parse_frame's outcome for
// a text with an infinite number and a later error is that error, as when the check came after the parse.
//
// Requirement tag: DUET-JSONRPC-LIMITS, include/duet/jsonrpc/codec.hpp (`parse_frame`); JSONRPC-5.1 -32700
// and -32600 https://www.jsonrpc.org/specification#error_object
#include <duet/jsonrpc/codec.hpp>

#include "jsonrpc/value_parse.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using duet::jsonrpc::detail::parse_value;

// The walk parse_frame made over the tree before the check moved into the parse.
bool reference_all_finite(json::value const& v) {
    switch (v.kind()) {
    case json::kind::double_:
        return std::isfinite(v.get_double());
    case json::kind::array:
        for (auto const& e : v.get_array())
            if (!reference_all_finite(e))
                return false;
        return true;
    case json::kind::object:
        for (auto const& kv : v.get_object())
            if (!reference_all_finite(kv.value()))
                return false;
        return true;
    default:
        return true;
    }
}

std::vector<std::string> texts() {
    std::vector<std::string> t{
        R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}})",
        R"({"jsonrpc":"2.0","id":"s","result":{"content":[{"type":"text","text":"a\nb\u00e9\ud83d\ude00"}]}})",
        R"([{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":2,"method":"b","params":[1,2.5,-0,true,null]}])",
        R"({"k":1,"k":2,"k":{"k":3}})",
        R"({"i":-9223372036854775808,"u":18446744073709551615,"big":18446744073709551616,"e":1.5e308})",
        R"({"x":8601e981})",
        R"({"x":-1e400})",
        R"([1,[2,[3,[1e999]]]])",
        R"({"tiny":1e-400,"neg":-4.9e-324})",
        "  {\"a\" : [ 1 , 2 ] }  \r\n",
        "\"" + std::string(10000, 's') + "\"",
        "{\"" + std::string(5000, 'k') + "\":\"" + std::string(5000, 'v') + "\\n\"}",
        "[\"" + std::string(3000, 'e') + "\\u0041" + std::string(3000, 'f') + "\"]",
        // Errors: syntax, extra data, empty, comments and trailing commas (not allowed), bad UTF-8, depth.
        "{",
        "{\"a\":1}}",
        "{\"a\":1} x",
        "",
        "   ",
        "[1,]",
        "/* c */ {}",
        "{\"a\":\"\xff\"}",
        "nul",
        "[1e999,",
        "[1e999] 2",
        std::string(70, '[') + std::string(70, ']'),
        "[1e999," + std::string(70, '[') + std::string(70, ']') + "]",
    };
    return t;
}

TEST(ValueParse, GivesWhatBoostJsonParseGivesAndTheWalksVerdict) {
    for (auto const& text : texts()) {
        for (std::size_t depth : {std::size_t(3), std::size_t(64)}) {
            json::parse_options options;
            options.max_depth = depth;
            json::monotonic_resource pool;
            json::storage_ptr sp(&pool);
            auto const got = parse_value(text, sp, options);
            boost::system::error_code ec;
            auto const want = json::parse(text, ec, json::storage_ptr(), options);
            EXPECT_EQ(got.ec, ec) << text.substr(0, 80) << " depth " << depth;
            if (ec)
                continue;
            EXPECT_EQ(json::serialize(got.value), json::serialize(want)) << text.substr(0, 80);
            EXPECT_EQ(got.value, want) << text.substr(0, 80);
            EXPECT_EQ(got.all_finite, reference_all_finite(want)) << text.substr(0, 80);
            // The tree is built in the storage given, not copied there from elsewhere.
            EXPECT_EQ(got.value.storage().get(), &pool) << text.substr(0, 80);
            if (auto const* o = got.value.if_object(); o && !o->empty()) {
                EXPECT_EQ(o->begin()->value().storage().get(), &pool) << text.substr(0, 80);
            }
        }
    }
}

duet::jsonrpc::parse_errc reason_of(std::string const& text) {
    auto const f = duet::jsonrpc::parse_frame(text);
    auto const& p = std::get<duet::jsonrpc::parsed>(f.content);
    EXPECT_FALSE(p.has_value()) << text.substr(0, 80);
    return p ? duet::jsonrpc::parse_errc{} : p.error().reason;
}

// An infinite number is refused only once the text has parsed: a syntax error or too deep a nesting after it
// is what the frame fails as (-32700 and -32600 differ on the wire).
TEST(ValueParse, InfiniteNumberYieldsToALaterParseFailure) {
    using duet::jsonrpc::parse_errc;
    EXPECT_EQ(reason_of(R"({"jsonrpc":"2.0","id":1,"method":"m","params":[1e999]})"), parse_errc::bad_json);
    EXPECT_EQ(reason_of(R"({"jsonrpc":"2.0","id":1,"method":"m","params":[1e999,)" + std::string(70, '[') +
                        std::string(70, ']') + "]}"),
              parse_errc::too_deep);
    EXPECT_EQ(reason_of(R"({"jsonrpc":"2.0","id":1,"method":"m","params":[1e999]} x)"), parse_errc::bad_json);
}

} // namespace
