// File: tests/unit/server/mrtr_support.hpp
//
// What the multi round-trip tests (DIGEST §4) share, in process and over HTTP: the questions test handlers
// ask (a form elicitation, a sampling request, roots), well-formed answers to them, what a handler makes of
// an answer, and the checks every InputRequiredResult must pass, plus the retry a client builds from one.
//
//     auto const first = expect_input_required(response);                   // resultType, no cache hints...
//     send(modern_request(2, "prompts/get", retry(params, {{"key", accepted("name", "Ada")}}, first), caps));
#pragma once

#include <duet/server/content.hpp>
#include <duet/server/definitions.hpp>
#include <duet/server/request_context.hpp>
#include <duet/server/server.hpp>

#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace duet::test {

inline boost::json::object form(std::string_view message, std::string_view field) {
    return boost::json::object{{"message", message},
                               {"requestedSchema",
                                {{"type", "object"},
                                 {"properties", {{field, {{"type", "string"}}}}},
                                 {"required", boost::json::array{field}}}}};
}

inline boost::json::object sampling_params() {
    return boost::json::object{
        {"messages",
         boost::json::array{{{"role", "user"}, {"content", {{"type", "text"}, {"text", "Say hi"}}}}}},
        {"maxTokens", 50}};
}

inline boost::json::object accepted(std::string_view field, std::string_view value) {
    return boost::json::object{{"action", "accept"}, {"content", {{field, value}}}};
}

inline boost::json::object sampled(std::string_view text) {
    return boost::json::object{
        {"role", "assistant"}, {"content", {{"type", "text"}, {"text", text}}}, {"model", "test-model"}};
}

inline boost::json::object roots_answer() {
    return boost::json::object{{"roots", boost::json::array{{{"uri", "file:///work"}, {"name", "work"}},
                                                            {{"uri", "file:///home"}, {"name", "home"}}}}};
}

// What a handler makes of one answer: the value, "declined", or why there is none.
inline std::string outcome(server::peer_result const& r, std::string_view field) {
    if (!r)
        return r.error().local == server::peer_errc::capability_missing ? "(not declared)"
                                                                        : "(" + r.error().to_string() + ")";
    auto const* o = r->if_object();
    if (auto const* action = o ? o->if_contains("action") : nullptr) {
        if (*action != "accept")
            return "declined";
        auto const* content = o->if_contains("content");
        auto const* v = content && content->is_object() ? content->get_object().if_contains(field) : nullptr;
        return v && v->is_string() ? std::string(v->get_string()) : std::string("accepted");
    }
    if (auto const* roots = o ? o->if_contains("roots") : nullptr)
        return std::to_string(roots->as_array().size()) + " roots";
    if (auto const* content = o ? o->if_contains("content") : nullptr)
        return std::string(content->at("text").as_string());
    return "?";
}

/// A prompt (intro) and a resource template (test://vault/{id}) that each ask one question before answering:
/// the non-tool requests of the multi round-trip tests, in process and over HTTP.
inline void add_asking_prompt_and_template(server::server& srv) {
    using namespace duet::server;
    srv.add_prompt(
        prompt{.name = "intro", .arguments = {prompt_argument{.name = "topic"}}},
        [](prompt_arguments const& args, request_context& ctx) -> boost::asio::awaitable<prompt_result> {
            input_request question{"user_context", "elicitation/create",
                                   form("What should the intro know?", "context")};
            auto answer = co_await ctx.async_input(std::move(question));
            prompt_result r;
            auto const topic = args.contains("topic") ? args.at("topic") : std::string("-");
            r.add("user", text_content("Topic " + topic + ", context: " + outcome(answer, "context")));
            co_return r;
        });
    srv.add_resource_template(
        resource_template{.uri_template = "test://vault/{id}", .name = "vault"},
        [](std::string const& uri, uri_variables const& vars,
           request_context& ctx) -> boost::asio::awaitable<read_result> {
            input_request question{"password", "elicitation/create", form("Vault password?", "password")};
            auto answer = co_await ctx.async_input(std::move(question));
            read_result r;
            r.contents.push_back(text_resource_contents(uri, "vault " + vars.at("id") + " opened with " +
                                                                 outcome(answer, "password")));
            co_return r;
        });
}

/// Every capability an input request may need (elicitation in form mode, sampling, roots).
inline boost::json::object all_caps() {
    return boost::json::object{{"elicitation", boost::json::object{}},
                               {"sampling", boost::json::object{}},
                               {"roots", boost::json::object{}}};
}

/// The result of an input_required response, checked for the shape every such result must have: resultType,
/// inputRequests (a non-empty object of {method, params}), requestState, serverInfo, and no cache hints or
/// complete-result fields.
inline boost::json::object expect_input_required(boost::json::value const& response) {
    auto const r = result_of(response);
    EXPECT_EQ(r.if_contains("resultType") ? r.at("resultType") : boost::json::value{}, "input_required")
        << response;
    auto const* requests = r.if_contains("inputRequests");
    EXPECT_TRUE(requests && requests->is_object() && !requests->get_object().empty()) << response;
    if (requests && requests->is_object())
        for (auto const& kv : requests->get_object()) {
            auto const* q = kv.value().if_object();
            if (!q) {
                ADD_FAILURE() << "an InputRequest that is not an object: " << response;
                continue;
            }
            auto const* m = q->if_contains("method");
            EXPECT_TRUE(m && m->is_string()) << response;
            EXPECT_FALSE(q->contains("id")) << "an InputRequest carries no id: " << response;
            EXPECT_FALSE(q->contains("jsonrpc")) << response;
        }
    auto const* state = r.if_contains("requestState");
    EXPECT_TRUE(state && state->is_string() && !state->get_string().empty()) << response;
    EXPECT_FALSE(r.contains("ttlMs")) << response;
    EXPECT_FALSE(r.contains("cacheScope")) << response;
    for (auto const* field : {"content", "isError", "structuredContent", "messages", "contents"})
        EXPECT_FALSE(r.contains(field)) << field << " in " << response;
    auto const* meta = r.if_contains("_meta");
    EXPECT_TRUE(meta && meta->is_object() && meta->get_object().contains(key_server_info)) << response;
    return r;
}

/// A legacy input request's params without the key hint Duet adds to its `_meta` (dev.duet/inputKey, from
/// 2025-11-25): what the handler asked, as it asked it.
inline boost::json::value without_input_key(boost::json::value params) {
    auto* p = params.if_object();
    auto* meta = p ? p->if_contains("_meta") : nullptr;
    if (!meta || !meta->is_object())
        return params;
    meta->get_object().erase("dev.duet/inputKey");
    if (meta->get_object().empty())
        p->erase("_meta");
    if (p->empty())
        return nullptr;
    return params;
}

inline std::vector<std::string> keys_of(boost::json::object const& input_required) {
    std::vector<std::string> keys;
    for (auto const& kv : input_required.at("inputRequests").as_object())
        keys.emplace_back(kv.key());
    std::sort(keys.begin(), keys.end());
    return keys;
}

/// The same params again with the answers and the echoed state (DIGEST §4: same method and params, new id).
inline boost::json::object retry(boost::json::object params, boost::json::object answers,
                                 boost::json::object const& input_required) {
    if (!answers.empty())
        params["inputResponses"] = std::move(answers);
    params["requestState"] = input_required.at("requestState");
    return params;
}

} // namespace duet::test
