// File: tests/stdio/checks.hpp
//
// Assertions on result shapes per era (ERA-POLICY "Consequences"), shared by the stdio and in-process tests.
//
//     expect_modern_result(response, /*cacheable=*/true);   // resultType complete, serverInfo, ttlMs,
//     cacheScope expect_legacy_result(response);                       // none of resultType, ttlMs,
//     cacheScope, serverInfo
#pragma once

#include "stdio/messages.hpp"

#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace duet::test {

/// The result object of a successful response; an empty object (and a test failure) otherwise.
inline boost::json::object result_of(boost::json::value const& response) {
    auto const* o = response.if_object();
    auto const* r = o ? o->if_contains("result") : nullptr;
    if (!r || !r->is_object()) {
        ADD_FAILURE() << "expected a successful response, got " << response;
        return {};
    }
    return r->get_object();
}

/// The error object of an error response; an empty object (and a test failure) otherwise.
inline boost::json::object error_of(boost::json::value const& response) {
    auto const* o = response.if_object();
    auto const* e = o ? o->if_contains("error") : nullptr;
    if (!e || !e->is_object()) {
        ADD_FAILURE() << "expected an error response, got " << response;
        return {};
    }
    return e->get_object();
}

inline void expect_error(boost::json::value const& response, std::int64_t code) {
    auto const e = error_of(response);
    auto const* c = e.if_contains("code");
    EXPECT_TRUE(c && c->is_int64() && c->get_int64() == code)
        << "want error " << code << ", got " << response;
}

/// A modern result: resultType "complete", the serverInfo `_meta` key naming `server`, and cache hints
/// exactly when cacheable.
inline void expect_modern_result(boost::json::value const& response, bool cacheable,
                                 std::string_view server = "duet-demo") {
    auto const r = result_of(response);
    EXPECT_EQ(r.if_contains("resultType") ? r.at("resultType") : boost::json::value{}, "complete")
        << response;
    auto const* meta = r.if_contains("_meta");
    ASSERT_TRUE(meta && meta->is_object()) << "no _meta: " << response;
    auto const* info = meta->get_object().if_contains(key_server_info);
    ASSERT_TRUE(info && info->is_object()) << "no serverInfo: " << response;
    EXPECT_EQ(info->get_object().at("name"), boost::json::value(boost::json::string(server))) << response;
    if (cacheable) {
        auto const* ttl = r.if_contains("ttlMs");
        EXPECT_TRUE(ttl && ttl->is_int64() && ttl->get_int64() >= 0) << response;
        auto const* scope = r.if_contains("cacheScope");
        EXPECT_TRUE(scope && (*scope == "private" || *scope == "public")) << response;
    } else {
        EXPECT_FALSE(r.contains("ttlMs")) << response;
        EXPECT_FALSE(r.contains("cacheScope")) << response;
    }
}

/// A legacy result: nothing modern about it.
inline void expect_legacy_result(boost::json::value const& response) {
    auto const r = result_of(response);
    EXPECT_FALSE(r.contains("resultType")) << response;
    EXPECT_FALSE(r.contains("ttlMs")) << response;
    EXPECT_FALSE(r.contains("cacheScope")) << response;
    if (auto const* meta = r.if_contains("_meta"); meta && meta->is_object()) {
        EXPECT_FALSE(meta->get_object().contains(key_server_info)) << response;
    }
}

/// The text of the first content block of a CallToolResult.
inline std::string first_text(boost::json::object const& call_result) {
    auto const* content = call_result.if_contains("content");
    if (!content || !content->is_array() || content->get_array().empty())
        return {};
    auto const* text = content->get_array().front().get_object().if_contains("text");
    return text && text->is_string() ? std::string(text->get_string()) : std::string{};
}

/// The text of the first content block of a tools/call response's result.
inline std::string call_text(boost::json::value const& response) {
    return first_text(result_of(response));
}

inline bool is_error_result(boost::json::object const& call_result) {
    auto const* e = call_result.if_contains("isError");
    return e && e->is_bool() && e->get_bool();
}

} // namespace duet::test
