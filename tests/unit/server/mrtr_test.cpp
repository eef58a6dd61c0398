// Multi round-trip requests in process (DIGEST §4, SEP-2322; ERA-POLICY "Results"): a handler asks the client
// the same way in both eras. Modern tools/call, prompts/get and resources/read answer with an input_required
// result (inputRequests by key, a sealed requestState, resultType and serverInfo, no cache hints) and run the
// handler again on the client's retry; answers of earlier rounds and the handler's own state travel inside
// requestState. Missing answers are asked again, unknown keys are ignored, malformed answers and hostile
// states are -32602, undeclared capabilities are never asked (require() gives -32021), and lists never ask.
// Legacy sessions get real server-to-client requests instead.
#include <duet/server/server.hpp>

#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "unit/server/harness.hpp"
#include "unit/server/mrtr_legacy_client.hpp"
#include "unit/server/mrtr_support.hpp"
#include "unit/server/test_server.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::test;
using duet::protocol::client_capability;
using duet::server::input_request;
using duet::server::request_context;
using duet::server::server;
using duet::server::tool_result;

/// greet: one question. survey: three in one round. wizard: two rounds and its own state. needs_sampling:
/// require(). open_link: URL-mode elicitation. Prompt intro and template test://vault/{id} ask too.
void add_mrtr_features(server& srv) {
    using namespace duet::server;
    srv.add_tool(
        plain_tool("greet"),
        [](json::object const&, request_context& ctx) -> boost::asio::awaitable<tool_result> {
            input_request question{"user_name", "elicitation/create", form("What is your name?", "name")};
            auto answer = co_await ctx.async_input(std::move(question));
            if (!answer)
                co_return tool_result::error("no answer: " + outcome(answer, "name"));
            co_return tool_result::text("Hello, " + outcome(answer, "name") + "!");
        });
    srv.add_tool(
        plain_tool("survey"),
        [](json::object const&, request_context& ctx) -> boost::asio::awaitable<tool_result> {
            std::vector<input_request> questions;
            questions.push_back({"user_name", "elicitation/create", form("What is your name?", "name")});
            questions.push_back({"greeting", "sampling/createMessage", sampling_params()});
            questions.push_back({"client_roots", "roots/list", nullptr});
            auto answers = co_await ctx.async_inputs(std::move(questions));
            if (answers.size() != 3)
                co_return tool_result::error("wrong number of answers");
            co_return tool_result::text("name=" + outcome(answers[0], "name") + ";greeting=" +
                                        outcome(answers[1], "") + ";roots=" + outcome(answers[2], ""));
        });
    srv.add_tool(plain_tool("wizard"),
                 [](json::object const&, request_context& ctx) -> boost::asio::awaitable<tool_result> {
                     auto& state = ctx.state();
                     auto const runs =
                         state.contains("runs") ? state.at("runs").to_number<std::int64_t>() : 0;
                     state["runs"] = runs + 1;
                     if (!state.contains("started_by"))
                         state["started_by"] = ctx.request_id().to_json();
                     input_request first{"name", "elicitation/create", form("Step 1: your name?", "name")};
                     auto name = co_await ctx.async_input(std::move(first));
                     if (!name)
                         co_return tool_result::error("no name");
                     state["name_seen"] = outcome(name, "name");
                     input_request second{"color", "elicitation/create",
                                          form("Step 2: your favourite colour?", "color")};
                     auto color = co_await ctx.async_input(std::move(second));
                     if (!color)
                         co_return tool_result::error("no color");
                     co_return tool_result::text(
                         outcome(name, "name") + " likes " + outcome(color, "color") +
                         "; runs=" + std::to_string(state.at("runs").to_number<std::int64_t>()) +
                         "; started_by=" + json::serialize(state.at("started_by")) +
                         "; name_seen=" + json::serialize(state.at("name_seen")));
                 });
    srv.add_tool(plain_tool("needs_sampling"),
                 [](json::object const&, request_context& ctx) -> boost::asio::awaitable<tool_result> {
                     ctx.require(client_capability::sampling);
                     input_request question{"greeting", "sampling/createMessage", sampling_params()};
                     auto answer = co_await ctx.async_input(std::move(question));
                     co_return tool_result::text("sampled: " + outcome(answer, ""));
                 });
    srv.add_tool(plain_tool("open_link"),
                 [](json::object const&, request_context& ctx) -> boost::asio::awaitable<tool_result> {
                     input_request question{"login", "elicitation/create",
                                            json::object{{"mode", "url"},
                                                         {"message", "Sign in, then come back"},
                                                         {"url", "https://example.com/login"}}};
                     auto answer = co_await ctx.async_input(std::move(question));
                     co_return tool_result::text("login: " + outcome(answer, ""));
                 });
    add_asking_prompt_and_template(srv);
    // Cacheable by configuration: a shared cache may keep what it reads, unless the read rested on answers.
    srv.add_resource_template(
        resource_template{
            .uri_template = "test://profile/{id}",
            .name = "profile",
            .hints = duet::protocol::cache_hints{.ttl_ms = 60000,
                                                 .scope = duet::protocol::cache_scope::public_cache}},
        [](std::string const& uri, uri_variables const& vars,
           request_context& ctx) -> boost::asio::awaitable<read_result> {
            read_result r;
            if (vars.at("id") == "me") {
                input_request question{"who", "elicitation/create", form("Who are you?", "name")};
                auto answer = co_await ctx.async_input(std::move(question));
                r.contents.push_back(text_resource_contents(uri, "profile of " + outcome(answer, "name")));
            } else {
                r.contents.push_back(text_resource_contents(uri, "public profile " + vars.at("id")));
            }
            co_return r;
        });
}

class Mrtr : public testing::Test {
protected:
    Mrtr() : srv_(test_options()) {
        add_test_features(srv_);
        add_mrtr_features(srv_);
    }
    server srv_;
};

// ---- modern ----------------------------------------------------------------------------------------------

TEST_F(Mrtr, OneQuestionRoundTrip) {
    harness h(srv_);
    auto const params = call_params("greet");
    h.send(modern_request(1, "tools/call", params, all_caps()));
    auto const first = expect_input_required(h.response(1));
    EXPECT_EQ(
        first.at("inputRequests"),
        (json::object{{"user_name",
                       {{"method", "elicitation/create"}, {"params", form("What is your name?", "name")}}}}));
    h.send(modern_request(2, "tools/call", retry(params, {{"user_name", accepted("name", "Ada")}}, first),
                          all_caps()));
    auto const done = h.response(2);
    expect_modern_result(done, false);
    EXPECT_EQ(first_text(result_of(done)), "Hello, Ada!");
    EXPECT_FALSE(is_error_result(result_of(done)));
    h.expect_schema_valid();
}

// A declined answer is an answer: the handler decides what it means.
TEST_F(Mrtr, DeclinedAnswerReachesTheHandler) {
    harness h(srv_);
    h.send(modern_request(1, "tools/call", call_params("greet"), all_caps()));
    auto const first = expect_input_required(h.response(1));
    h.send(modern_request(2, "tools/call",
                          retry(call_params("greet"), {{"user_name", {{"action", "decline"}}}}, first),
                          all_caps()));
    EXPECT_EQ(first_text(result_of(h.response(2))), "Hello, declined!");
}

TEST_F(Mrtr, SeveralQuestionsInOneRound) {
    harness h(srv_);
    auto const params = call_params("survey");
    h.send(modern_request(1, "tools/call", params, all_caps()));
    auto const first = expect_input_required(h.response(1));
    EXPECT_EQ(keys_of(first), (std::vector<std::string>{"client_roots", "greeting", "user_name"}));
    auto const& asked = first.at("inputRequests").as_object();
    EXPECT_EQ(asked.at("greeting"),
              (json::object{{"method", "sampling/createMessage"}, {"params", sampling_params()}}));
    // A question without params is sent without params.
    EXPECT_EQ(asked.at("client_roots"), (json::object{{"method", "roots/list"}}));
    h.send(modern_request(2, "tools/call",
                          retry(params,
                                {{"user_name", accepted("name", "Ada")},
                                 {"greeting", sampled("Hi there")},
                                 {"client_roots", roots_answer()}},
                                first),
                          all_caps()));
    auto const done = h.response(2);
    expect_modern_result(done, false);
    EXPECT_EQ(first_text(result_of(done)), "name=Ada;greeting=Hi there;roots=2 roots");
    h.expect_schema_valid();
}

// DIGEST §4: a needed answer that is missing is asked again (never an error); answers already given travel in
// requestState, so the next retry only carries the new one.
TEST_F(Mrtr, MissingAnswerIsAskedAgainAndEarlierAnswersAreKept) {
    harness h(srv_);
    auto const params = call_params("survey");
    h.send(modern_request(1, "tools/call", params, all_caps()));
    auto const first = expect_input_required(h.response(1));
    h.send(modern_request(
        2, "tools/call",
        retry(params, {{"user_name", accepted("name", "Ada")}, {"greeting", sampled("Hey")}}, first),
        all_caps()));
    auto const second = expect_input_required(h.response(2));
    EXPECT_EQ(keys_of(second), std::vector<std::string>{"client_roots"});
    EXPECT_NE(second.at("requestState"), first.at("requestState"));
    h.send(modern_request(3, "tools/call", retry(params, {{"client_roots", roots_answer()}}, second),
                          all_caps()));
    EXPECT_EQ(first_text(result_of(h.response(3))), "name=Ada;greeting=Hey;roots=2 roots");
    h.expect_schema_valid();
}

// A retry with the state but no answers, or answers under other keys, is asked the same again.
TEST_F(Mrtr, RetryWithoutTheAnswerIsAskedAgain) {
    harness h(srv_);
    auto const params = call_params("greet");
    h.send(modern_request(1, "tools/call", params, all_caps()));
    auto const first = expect_input_required(h.response(1));
    h.send(modern_request(2, "tools/call", retry(params, {}, first), all_caps()));
    auto const again = expect_input_required(h.response(2));
    EXPECT_EQ(again.at("inputRequests"), first.at("inputRequests"));
    h.send(modern_request(3, "tools/call", retry(params, {{"username", accepted("name", "Ada")}}, again),
                          all_caps()));
    auto const third = expect_input_required(h.response(3));
    EXPECT_EQ(third.at("inputRequests"), first.at("inputRequests"));
    // An empty inputResponses object is no answer either.
    auto empty = retry(params, {}, third);
    empty["inputResponses"] = json::object{};
    h.send(modern_request(4, "tools/call", empty, all_caps()));
    auto const fourth = expect_input_required(h.response(4));
    h.send(modern_request(5, "tools/call", retry(params, {{"user_name", accepted("name", "Bo")}}, fourth),
                          all_caps()));
    EXPECT_EQ(first_text(result_of(h.response(5))), "Hello, Bo!");
}

// An answer offered before it was asked (a client answering ahead, or a round that issued no requestState) is
// taken when the handler asks for it; keys the handler never asks are ignored (DIGEST §4).
TEST_F(Mrtr, AnswersOfferedWithoutStateAreTakenWhenAsked) {
    harness h(srv_);
    auto params = call_params("greet");
    params["inputResponses"] = json::object{{"user_name", accepted("name", "Mallory")},
                                            {"unknown_extra_key", accepted("foo", "bar")}};
    h.send(modern_request(1, "tools/call", params, all_caps()));
    auto const done = h.response(1);
    expect_modern_result(done, false);
    EXPECT_EQ(first_text(result_of(done)), "Hello, Mallory!");
    h.expect_schema_valid();
}

// An offered answer the handler used is sealed with the round's state, so the retry needs only the rest.
TEST_F(Mrtr, OfferedAnswerThatWasUsedTravelsInTheState) {
    harness h(srv_);
    auto params = call_params("survey");
    params["inputResponses"] =
        json::object{{"user_name", accepted("name", "Ada")}, {"bogus", "not a result"}};
    h.send(modern_request(1, "tools/call", params, all_caps()));
    auto const first = expect_input_required(h.response(1));
    EXPECT_EQ(keys_of(first), (std::vector<std::string>{"client_roots", "greeting"}));
    h.send(modern_request(2, "tools/call",
                          retry(call_params("survey"),
                                {{"greeting", sampled("Hi there")}, {"client_roots", roots_answer()}}, first),
                          all_caps()));
    auto const done = h.response(2);
    expect_modern_result(done, false);
    EXPECT_EQ(first_text(result_of(done)), "name=Ada;greeting=Hi there;roots=2 roots");
}

TEST_F(Mrtr, UnknownAnswerKeysAreIgnored) {
    harness h(srv_);
    auto const params = call_params("greet");
    h.send(modern_request(1, "tools/call", params, all_caps()));
    auto const first = expect_input_required(h.response(1));
    h.send(modern_request(2, "tools/call",
                          retry(params,
                                {{"user_name", accepted("name", "Ada")},
                                 {"bogus", "garbage that is not any result"},
                                 {"other", {{"action", "accept"}}}},
                                first),
                          all_caps()));
    auto const done = h.response(2);
    expect_modern_result(done, false);
    EXPECT_EQ(first_text(result_of(done)), "Hello, Ada!");
}

// An answer that is not a result of the method it answers is the client's error: -32602, not a new question.
TEST_F(Mrtr, MalformedAnswerIsInvalidParams) {
    harness h(srv_);
    auto const params = call_params("greet");
    h.send(modern_request(1, "tools/call", params, all_caps()));
    auto const first = expect_input_required(h.response(1));
    json::value const garbage[] = {
        "yes",
        42,
        nullptr,
        json::array{},
        json::object{},
        json::object{{"action", "maybe"}},
        json::object{{"action", 1}},
        json::object{{"action", "accept"}, {"content", "Ada"}},
        sampled("not an elicitation answer"),
    };
    int id = 10;
    for (auto const& g : garbage) {
        h.send(modern_request(id, "tools/call", retry(params, {{"user_name", g}}, first), all_caps()));
        auto const r = h.response(id);
        expect_error(r, -32602);
        EXPECT_NE(json::serialize(r).find("user_name"), std::string::npos)
            << "the error should name the key: " << r;
        ++id;
    }
    // Sampling and roots answers are checked the same way.
    h.send(modern_request(1000, "tools/call", call_params("survey"), all_caps()));
    auto const survey = expect_input_required(h.response(1000));
    h.send(modern_request(1001, "tools/call",
                          retry(call_params("survey"),
                                {{"user_name", accepted("name", "Ada")},
                                 {"greeting", {{"role", "assistant"}, {"content", "hi"}}},
                                 {"client_roots", roots_answer()}},
                                survey),
                          all_caps()));
    expect_error(h.response(1001), -32602);
    h.send(modern_request(1002, "tools/call",
                          retry(call_params("survey"),
                                {{"user_name", accepted("name", "Ada")},
                                 {"greeting", sampled("hi")},
                                 {"client_roots", {{"roots", "none"}}}},
                                survey),
                          all_caps()));
    expect_error(h.response(1002), -32602);
    h.expect_schema_valid();
}

// Several rounds in a row: each retry carries only the newest answer; the handler's own state (its run count
// and what it noted in the first run) survives every round.
TEST_F(Mrtr, SeveralRoundsWithEvolvingStateAndHandlerState) {
    harness h(srv_);
    auto const params = call_params("wizard");
    h.send(modern_request("r1", "tools/call", params, {{"elicitation", json::object{}}}));
    auto const first = expect_input_required(h.response("r1"));
    EXPECT_EQ(keys_of(first), std::vector<std::string>{"name"});
    h.send(modern_request("r2", "tools/call", retry(params, {{"name", accepted("name", "Ada")}}, first),
                          {{"elicitation", json::object{}}}));
    auto const second = expect_input_required(h.response("r2"));
    EXPECT_EQ(keys_of(second), std::vector<std::string>{"color"});
    EXPECT_NE(second.at("requestState"), first.at("requestState"));
    // An attempt to change the first round's answer now is ignored: only what was just asked is taken.
    h.send(modern_request(
        "r3", "tools/call",
        retry(params, {{"color", accepted("color", "blue")}, {"name", accepted("name", "Eve")}}, second),
        {{"elicitation", json::object{}}}));
    auto const done = h.response("r3");
    expect_modern_result(done, false);
    EXPECT_EQ(first_text(result_of(done)), R"(Ada likes blue; runs=3; started_by="r1"; name_seen="Ada")");
    h.expect_schema_valid();
}

// A state is for the one retry after it; replaying an older one starts that round again (it is still valid),
// and never mixes in answers given later.
TEST_F(Mrtr, ReplayingAnEarlierStateResumesThatRound) {
    harness h(srv_);
    auto const params = call_params("wizard");
    h.send(modern_request(1, "tools/call", params, all_caps()));
    auto const first = expect_input_required(h.response(1));
    h.send(modern_request(2, "tools/call", retry(params, {{"name", accepted("name", "Ada")}}, first),
                          all_caps()));
    expect_input_required(h.response(2));
    h.send(modern_request(3, "tools/call", retry(params, {{"name", accepted("name", "Bo")}}, first),
                          all_caps()));
    auto const other = expect_input_required(h.response(3));
    h.send(modern_request(4, "tools/call", retry(params, {{"color", accepted("color", "red")}}, other),
                          all_caps()));
    EXPECT_EQ(first_text(result_of(h.response(4))), R"(Bo likes red; runs=3; started_by=1; name_seen="Bo")");
}

// DIGEST §4: never include an input request the client did not declare on this request; the handler learns
// it cannot ask. Here only sampling is declared (the conformance scenario).
TEST_F(Mrtr, UndeclaredCapabilityIsNeverAsked) {
    harness h(srv_);
    auto const params = call_params("survey");
    json::object const caps{{"sampling", json::object{}}};
    h.send(modern_request(1, "tools/call", params, caps));
    auto const first = expect_input_required(h.response(1));
    EXPECT_EQ(keys_of(first), std::vector<std::string>{"greeting"});
    h.send(modern_request(2, "tools/call", retry(params, {{"greeting", sampled("Yo")}}, first), caps));
    EXPECT_EQ(first_text(result_of(h.response(2))), "name=(not declared);greeting=Yo;roots=(not declared)");

    // Nothing declared: nothing is asked, and the call completes at once.
    h.send(modern_request(3, "tools/call", params));
    auto const none = h.response(3);
    expect_modern_result(none, false);
    EXPECT_EQ(first_text(result_of(none)),
              "name=(not declared);greeting=(not declared);roots=(not declared)");

    // Capabilities of an earlier request count for nothing (DIGEST §2): the retry declares none.
    h.send(modern_request(4, "tools/call", call_params("greet"), {{"elicitation", json::object{}}}));
    auto const greet = expect_input_required(h.response(4));
    h.send(modern_request(5, "tools/call",
                          retry(call_params("greet"), {{"user_name", accepted("name", "Ada")}}, greet)));
    auto const undeclared = result_of(h.response(5));
    EXPECT_TRUE(is_error_result(undeclared)) << json::value(undeclared);
    EXPECT_EQ(first_text(undeclared), "no answer: (not declared)");
    h.expect_schema_valid();
}

// Elicitation modes are capabilities of their own: `elicitation: {}` is form only (DIGEST §3).
TEST_F(Mrtr, UrlElicitationNeedsTheUrlMode) {
    harness h(srv_);
    h.send(modern_request(1, "tools/call", call_params("open_link"), {{"elicitation", json::object{}}}));
    EXPECT_EQ(first_text(result_of(h.response(1))), "login: (not declared)");
    json::object const url{{"elicitation", {{"url", json::object{}}}}};
    h.send(modern_request(2, "tools/call", call_params("open_link"), url));
    auto const first = expect_input_required(h.response(2));
    EXPECT_EQ(first.at("inputRequests").at("login").at("params").at("mode"), "url");
    EXPECT_FALSE(first.at("inputRequests").at("login").at("params").as_object().contains("elicitationId"));
    h.send(modern_request(3, "tools/call",
                          retry(call_params("open_link"), {{"login", {{"action", "accept"}}}}, first), url));
    EXPECT_EQ(first_text(result_of(h.response(3))), "login: accepted");
    h.expect_schema_valid();
}

// ERA-POLICY step 5: a handler that cannot go on without a capability gets -32021 naming it.
TEST_F(Mrtr, RequireGivesMissingRequiredClientCapability) {
    harness h(srv_);
    h.send(modern_request(1, "tools/call", call_params("needs_sampling"), {{"elicitation", json::object{}}}));
    auto const r = h.response(1);
    expect_error(r, -32021);
    EXPECT_EQ(error_of(r).at("data"),
              (json::object{{"requiredCapabilities", {{"sampling", json::object{}}}}}));
    h.send(modern_request(2, "tools/call", call_params("needs_sampling"), {{"sampling", json::object{}}}));
    auto const first = expect_input_required(h.response(2));
    EXPECT_EQ(keys_of(first), std::vector<std::string>{"greeting"});
    h.send(modern_request(3, "tools/call",
                          retry(call_params("needs_sampling"), {{"greeting", sampled("ok")}}, first),
                          {{"sampling", json::object{}}}));
    EXPECT_EQ(first_text(result_of(h.response(3))), "sampled: ok");
    h.expect_schema_valid();
}

TEST_F(Mrtr, PromptsGetAsksToo) {
    harness h(srv_);
    json::object const params{{"name", "intro"}, {"arguments", {{"topic", "rust"}}}};
    h.send(modern_request(1, "prompts/get", params, all_caps()));
    auto const first = expect_input_required(h.response(1));
    EXPECT_EQ(keys_of(first), std::vector<std::string>{"user_context"});
    h.send(modern_request(2, "prompts/get",
                          retry(params, {{"user_context", accepted("context", "beginners")}}, first),
                          all_caps()));
    auto const done = h.response(2);
    expect_modern_result(done, false);
    EXPECT_EQ(result_of(done).at("messages").at(0).at("content").at("text"),
              "Topic rust, context: beginners");
    // The state is bound to the arguments: another topic does not take it.
    h.send(modern_request(3, "prompts/get",
                          retry({{"name", "intro"}, {"arguments", {{"topic", "go"}}}},
                                {{"user_context", accepted("context", "x")}}, first),
                          all_caps()));
    expect_error(h.response(3), -32602);
    h.expect_schema_valid();
}

// resources/read through a template: the round carries no cache hints; the complete read does.
TEST_F(Mrtr, ResourcesReadAsksTooAndOnlyTheCompleteReadIsCacheable) {
    harness h(srv_);
    json::object const params{{"uri", "test://vault/7"}};
    h.send(modern_request(1, "resources/read", params, all_caps()));
    auto const first = expect_input_required(h.response(1));
    EXPECT_EQ(keys_of(first), std::vector<std::string>{"password"});
    h.send(modern_request(2, "resources/read",
                          retry(params, {{"password", accepted("password", "s3cret")}}, first), all_caps()));
    auto const done = h.response(2);
    expect_modern_result(done, true);
    EXPECT_EQ(result_of(done).at("contents").at(0).at("text"), "vault 7 opened with s3cret");
    // Another URI does not take the state.
    h.send(modern_request(
        3, "resources/read",
        retry({{"uri", "test://vault/8"}}, {{"password", accepted("password", "s3cret")}}, first),
        all_caps()));
    expect_error(h.response(3), -32602);
    h.expect_schema_valid();
}

// DIGEST §5: the result of an MRTR retry must not be cached (it may rest on what the user answered), whatever
// the resource's configured hints; a read that asked nothing keeps them.
TEST_F(Mrtr, CompleteResultOfARetryIsNotCacheable) {
    harness h(srv_);
    h.send(modern_request(1, "resources/read", {{"uri", "test://profile/ada"}}, all_caps()));
    auto const plain = result_of(h.response(1));
    EXPECT_EQ(plain.at("ttlMs"), 60000);
    EXPECT_EQ(plain.at("cacheScope"), "public");
    json::object const params{{"uri", "test://profile/me"}};
    h.send(modern_request(2, "resources/read", params, all_caps()));
    auto const first = expect_input_required(h.response(2));
    h.send(modern_request(3, "resources/read", retry(params, {{"who", accepted("name", "Ada")}}, first),
                          all_caps()));
    auto const done = h.response(3);
    expect_modern_result(done, true);
    EXPECT_EQ(result_of(done).at("contents").at(0).at("text"), "profile of Ada");
    EXPECT_EQ(result_of(done).at("ttlMs"), 0) << done;
    EXPECT_EQ(result_of(done).at("cacheScope"), "private") << done;
    h.expect_schema_valid();
}

// DIGEST §4: only tools/call, prompts/get and resources/read may return input_required. Lists (and the other
// methods) ignore input fields and answer complete.
TEST_F(Mrtr, ListsNeverAskAndIgnoreInputFields) {
    harness h(srv_);
    h.send(modern_request(1, "tools/call", call_params("greet"), all_caps()));
    auto const issued = expect_input_required(h.response(1));
    int id = 10;
    for (std::string_view method :
         {"tools/list", "prompts/list", "resources/list", "resources/templates/list"}) {
        for (bool with_state : {false, true}) {
            json::object params{{"inputResponses", {{"user_name", accepted("name", "Ada")}}}};
            params["requestState"] =
                with_state ? issued.at("requestState") : json::value("not a sealed state");
            h.send(modern_request(id, method, params, all_caps()));
            auto const r = h.response(id);
            expect_modern_result(r, true);
            EXPECT_FALSE(result_of(r).contains("inputRequests")) << r;
            EXPECT_FALSE(result_of(r).contains("requestState")) << r;
            ++id;
        }
    }
    h.send(modern_request(id, "server/discover", {{"requestState", "x"}}, all_caps()));
    expect_modern_result(h.response(id), true);
    h.expect_schema_valid();
}

// ---- hostile requestState (DIGEST §4: protect it, reject tampering with an error, conf: -32602)
// ------------

TEST_F(Mrtr, TamperedStateIsRefused) {
    harness h(srv_);
    auto const params = call_params("greet");
    h.send(modern_request(1, "tools/call", params, all_caps()));
    auto const first = expect_input_required(h.response(1));
    std::string const state(first.at("requestState").as_string());
    std::vector<std::string> tampered{state + "-TAMPERED", state.substr(0, state.size() - 1), "", "x",
                                      state + state};
    for (std::size_t i : {std::size_t{0}, state.size() / 2, state.find('.') + 1, state.size() - 1}) {
        auto t = state;
        t[i] = t[i] == 'A' ? 'B' : 'A';
        tampered.push_back(t);
    }
    int id = 10;
    for (auto const& t : tampered) {
        auto p = retry(params, {{"user_name", accepted("name", "Ada")}}, first);
        p["requestState"] = t;
        h.send(modern_request(id, "tools/call", p, all_caps()));
        auto const r = h.response(id);
        expect_error(r, -32602);
        ++id;
    }
    // Not a string at all.
    for (json::value bad :
         {json::value(1), json::value(json::object{}), json::value(nullptr), json::value(true)}) {
        auto p = retry(params, {}, first);
        p["requestState"] = bad;
        h.send(modern_request(id, "tools/call", p, all_caps()));
        expect_error(h.response(id), -32602);
        ++id;
    }
    // inputResponses that is not an object.
    auto p = retry(params, {}, first);
    p["inputResponses"] = json::array{accepted("name", "Ada")};
    h.send(modern_request(id, "tools/call", p, all_caps()));
    expect_error(h.response(id), -32602);
    // The genuine state still works afterwards.
    h.send(modern_request(++id, "tools/call", retry(params, {{"user_name", accepted("name", "Ada")}}, first),
                          all_caps()));
    EXPECT_EQ(first_text(result_of(h.response(id))), "Hello, Ada!");
    h.expect_schema_valid();
}

// The state is bound to the method and the params that identify the request (not to _meta).
TEST_F(Mrtr, StateOfAnotherRequestIsRefused) {
    harness h(srv_);
    h.send(modern_request(1, "tools/call", call_params("greet", {{"text", "a"}}), all_caps()));
    auto const first = expect_input_required(h.response(1));
    auto const answers = json::object{{"user_name", accepted("name", "Ada")}};
    // Other arguments.
    h.send(modern_request(2, "tools/call", retry(call_params("greet", {{"text", "b"}}), answers, first),
                          all_caps()));
    expect_error(h.response(2), -32602);
    // Another tool.
    h.send(modern_request(3, "tools/call", retry(call_params("survey", {{"text", "a"}}), answers, first),
                          all_caps()));
    expect_error(h.response(3), -32602);
    // Another method with params that look the same.
    h.send(modern_request(4, "prompts/get", retry({{"name", "greet"}}, answers, first), all_caps()));
    expect_error(h.response(4), -32602);
    h.send(modern_request(5, "prompts/get", retry({{"name", "intro"}}, answers, first), all_caps()));
    expect_error(h.response(5), -32602);
    // Same params with their members in another order, and another _meta (new progressToken, other
    // clientInfo): accepted.
    json::object reordered{{"arguments", {{"text", "a"}}}, {"name", "greet"}};
    auto p = retry(reordered, answers, first);
    p["_meta"] = modern_meta(all_caps(), {{"progressToken", "p2"}});
    p["_meta"].as_object()[key_client_info] = json::object{{"name", "another-client"}, {"version", "2"}};
    h.send(modern_request(6, "tools/call", p));
    EXPECT_EQ(first_text(result_of(h.response(6))), "Hello, Ada!");
}

TEST(MrtrState, ExpiredStateIsRefused) {
    auto options = test_options();
    options.request_state_ttl = std::chrono::seconds(-1);
    server srv(options);
    add_mrtr_features(srv);
    harness h(srv);
    h.send(modern_request(1, "tools/call", call_params("greet"), all_caps()));
    auto const first = expect_input_required(h.response(1));
    h.send(modern_request(2, "tools/call",
                          retry(call_params("greet"), {{"user_name", accepted("name", "Ada")}}, first),
                          all_caps()));
    auto const r = h.response(2);
    expect_error(r, -32602);
    EXPECT_NE(error_of(r).at("message").as_string().find("expired"), std::string::npos) << r;
}

// server_options::request_state_key: instances behind one endpoint share it, so a retry may land on any of
// them; without it each process has its own random key.
TEST(MrtrState, ConfiguredKeyIsSharedAcrossInstances) {
    auto options = test_options();
    options.request_state_key = "a shared key of at least 16 bytes";
    server a(options);
    server b(options);
    server c(test_options());
    for (auto* s : {&a, &b, &c})
        add_mrtr_features(*s);
    harness ha(a);
    harness hb(b);
    harness hc(c);
    ha.send(modern_request(1, "tools/call", call_params("greet"), all_caps()));
    auto const first = expect_input_required(ha.response(1));
    auto const again = retry(call_params("greet"), {{"user_name", accepted("name", "Ada")}}, first);
    hb.send(modern_request(2, "tools/call", again, all_caps()));
    EXPECT_EQ(first_text(result_of(hb.response(2))), "Hello, Ada!");
    hc.send(modern_request(3, "tools/call", again, all_caps()));
    expect_error(hc.response(3), -32602);
}

TEST(MrtrState, ShortConfiguredKeyIsRefusedAtConstruction) {
    auto options = test_options();
    options.request_state_key = "short";
    EXPECT_THROW(server{options}, std::invalid_argument);
}

// ---- legacy sessions: real server-to-client requests ----------------------------------------------------

class MrtrLegacy : public Mrtr, protected legacy_client_steps {};

TEST_F(MrtrLegacy, OneQuestionIsARealElicitationRequest) {
    harness h(srv_);
    open(h);
    h.send(legacy_request(1, "tools/call", call_params("greet")));
    answer(h, "elicitation/create", accepted("name", "Ada"), 0, form("What is your name?", "name"));
    auto const done = h.response(1);
    expect_legacy_result(done);
    EXPECT_EQ(first_text(result_of(done)), "Hello, Ada!");
    for (auto const& m : h.messages())
        EXPECT_FALSE(json::serialize(m).find("input_required") != std::string::npos) << m;
    h.expect_schema_valid();
}

// Several questions become several requests, one after the other, each with its own id.
TEST_F(MrtrLegacy, SeveralQuestionsAreSeveralRequests) {
    harness h(srv_);
    open(h);
    h.send(legacy_request(1, "tools/call", call_params("survey")));
    auto next =
        answer(h, "elicitation/create", accepted("name", "Ada"), 0, form("What is your name?", "name"));
    next = answer(h, "sampling/createMessage", sampled("Hello"), next, sampling_params());
    answer(h, "roots/list", roots_answer(), next);
    auto const done = h.response(1);
    expect_legacy_result(done);
    EXPECT_EQ(first_text(result_of(done)), "name=Ada;greeting=Hello;roots=2 roots");
    std::vector<json::value> ids;
    for (auto const& m : h.messages())
        if (m.as_object().contains("method") && m.as_object().contains("id"))
            ids.push_back(m.at("id"));
    ASSERT_EQ(ids.size(), 3u);
    EXPECT_NE(ids[0], ids[1]);
    EXPECT_NE(ids[1], ids[2]);
    h.expect_schema_valid();
}

// What the session did not declare at initialize is not asked.
TEST_F(MrtrLegacy, UndeclaredCapabilityIsNotAsked) {
    harness h(srv_);
    open(h, {{"sampling", json::object{}}});
    h.send(legacy_request(1, "tools/call", call_params("survey")));
    answer(h, "sampling/createMessage", sampled("Yo"), 0);
    auto const done = h.response(1);
    EXPECT_EQ(first_text(result_of(done)), "name=(not declared);greeting=Yo;roots=(not declared)");
    for (auto const& m : h.messages()) {
        EXPECT_FALSE(is_server_request(m, "elicitation/create")) << m;
        EXPECT_FALSE(is_server_request(m, "roots/list")) << m;
    }
    h.expect_schema_valid();
}

// The same handler in a session: one run, every question a request; its state is fresh for every call.
TEST_F(MrtrLegacy, SeveralRoundsInOneRunWithFreshState) {
    harness h(srv_);
    open(h);
    for (int call = 1; call <= 2; ++call) {
        auto const from = h.messages().size();
        h.send(legacy_request(call, "tools/call", call_params("wizard")));
        auto next = answer(h, "elicitation/create", accepted("name", "Ada"), from,
                           form("Step 1: your name?", "name"));
        answer(h, "elicitation/create", accepted("color", "green"), next,
               form("Step 2: your favourite colour?", "color"));
        EXPECT_EQ(first_text(result_of(h.response(call))),
                  "Ada likes green; runs=1; started_by=" + std::to_string(call) + R"(; name_seen="Ada")");
    }
    h.expect_schema_valid();
}

// A client error answering the question reaches the handler (it is the client's answer, not the server's
// error).
TEST_F(MrtrLegacy, ClientErrorReachesTheHandler) {
    harness h(srv_);
    open(h);
    h.send(legacy_request(1, "tools/call", call_params("greet")));
    auto const i =
        h.wait_for([](json::value const& m) { return is_server_request(m, "elicitation/create"); });
    ASSERT_TRUE(i);
    h.send(json::object{{"jsonrpc", "2.0"},
                        {"id", h.messages()[*i].at("id")},
                        {"error", {{"code", -32600}, {"message", "user closed the dialog"}}}});
    auto const r = result_of(h.response(1));
    EXPECT_TRUE(is_error_result(r));
    EXPECT_NE(first_text(r).find("user closed the dialog"), std::string::npos) << json::value(r);
}

// Modern requests inside a legacy stdio process are still modern: input_required, no server request.
TEST_F(MrtrLegacy, ModernRequestInsideASessionStillGetsARound) {
    harness h(srv_);
    open(h);
    h.send(modern_request(1, "tools/call", call_params("greet"), all_caps()));
    auto const first = expect_input_required(h.response(1));
    h.send(modern_request(2, "tools/call",
                          retry(call_params("greet"), {{"user_name", accepted("name", "Ada")}}, first),
                          all_caps()));
    EXPECT_EQ(first_text(result_of(h.response(2))), "Hello, Ada!");
    for (auto const& m : h.messages())
        EXPECT_FALSE(is_server_request(m, "elicitation/create")) << m;
    h.expect_schema_valid();
}

} // namespace
