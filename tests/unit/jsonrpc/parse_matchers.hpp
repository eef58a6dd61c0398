// File: tests/unit/jsonrpc/parse_matchers.hpp
//
// Shared by the jsonrpc unit tests: readable printing of parse outcomes and gmock matchers that name the
// exact outcome expected of a frame element, so no test asserts a bare failure (STYLE §6 rule 12).
//
//     EXPECT_THAT(parse_one(R"({"jsonrpc":"2.0","id":1})"), FailsWith(parse_errc::bad_method,
//     request_id{1})); EXPECT_THAT(parse_one(R"({"jsonrpc":"2.0","result":1})"),
//     FailsSilently(parse_errc::bad_response)); EXPECT_THAT(parse_one(R"({"jsonrpc":"2.0","method":"m"})"),
//     Holds<notification>());
#pragma once

#include <duet/jsonrpc/codec.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace duet::jsonrpc {

// Found by ADL, so gtest prints ids and outcomes as wire text instead of bytes.
inline void PrintTo(request_id const& id, std::ostream* os) {
    *os << id.to_string();
}

inline void PrintTo(message const& m, std::ostream* os) {
    *os << serialize(m);
}

inline void PrintTo(parsed const& p, std::ostream* os) {
    if (p) {
        *os << "message " << serialize(*p);
        return;
    }
    *os << "failure " << make_error_code(p.error().reason).message() << ", reply ";
    if (p.error().reply)
        *os << serialize(message{*p.error().reply});
    else
        *os << "none";
}

} // namespace duet::jsonrpc

namespace duet::jsonrpc::test {

/// The one element of a frame that must not be a batch; a batch yields a failure no matcher accepts.
inline parsed parse_one(std::string_view bytes, parse_limits const& limits = {}) {
    auto f = parse_frame(bytes, limits);
    if (auto* p = std::get_if<parsed>(&f.content))
        return std::move(*p);
    ADD_FAILURE() << "expected a single element, got a batch: " << bytes;
    return parse_failure{parse_errc::unknown_shape, std::nullopt};
}

/// The element failed for `reason`, and the peer is owed exactly to_error_object(reason) echoing `reply_id`
/// (std::nullopt: `"id": null`).
MATCHER_P2(FailsWith, reason, reply_id, "fails with " + make_error_code(reason).message()) {
    if (arg) {
        *result_listener << "it parsed";
        return false;
    }
    auto const& f = arg.error();
    if (f.reason != reason) {
        *result_listener << "the reason is " << make_error_code(f.reason).message();
        return false;
    }
    if (!f.reply) {
        *result_listener << "no reply is owed";
        return false;
    }
    std::optional<request_id> const want_id = reply_id;
    if (f.reply->id != want_id) {
        *result_listener << "the reply's id is " << (f.reply->id ? f.reply->id->to_string() : "null");
        return false;
    }
    if (f.reply->error != to_error_object(reason)) {
        *result_listener << "the reply's error is " << f.reply->error.code << " " << f.reply->error.message;
        return false;
    }
    return true;
}

/// The element failed for `reason` and must not be answered (a malformed response).
MATCHER_P(FailsSilently, reason, "fails silently with " + make_error_code(reason).message()) {
    if (arg) {
        *result_listener << "it parsed";
        return false;
    }
    if (arg.error().reason != reason) {
        *result_listener << "the reason is " << make_error_code(arg.error().reason).message();
        return false;
    }
    if (arg.error().reply) {
        *result_listener << "a reply is owed";
        return false;
    }
    return true;
}

/// The element parsed into a message of kind T.
template<class T>
::testing::Matcher<parsed const&> Holds() {
    return ::testing::Truly([](parsed const& p) { return p && std::holds_alternative<T>(*p); });
}

} // namespace duet::jsonrpc::test
