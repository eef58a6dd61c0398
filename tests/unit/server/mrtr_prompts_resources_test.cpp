// Prompts and resources ask the client for input the way tools do (DIGEST §4, SEP-2322): a coroutine
// prompts/get or resources/read handler calls request_context::async_input(s) and, in a modern request, its
// run ends in an InputRequiredResult (several questions in one round, several rounds with the handler's own
// state sealed in requestState) and runs again on the retry; in a legacy session each question is a real
// server-to-client request. Missing answers and unknown keys are asked again, garbage answers are -32602,
// undeclared capabilities are never asked (require() gives -32021 naming them), a hostile requestState is a
// JSON-RPC error and never a new question, input_required results carry no cache hints (the complete result
// of a retry is not cacheable either), and plain handlers run on the blocking pool, off the I/O thread.
#include <duet/server/server.hpp>

#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "unit/server/harness.hpp"
#include "unit/server/mrtr_legacy_client.hpp"
#include "unit/server/mrtr_support.hpp"
#include "unit/server/test_server.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::test;
using duet::protocol::client_capability;
using duet::server::input_request;
using duet::server::prompt;
using duet::server::prompt_argument;
using duet::server::prompt_arguments;
using duet::server::prompt_result;
using duet::server::read_result;
using duet::server::request_context;
using duet::server::resource;
using duet::server::resource_template;
using duet::server::server;
using duet::server::text_content;
using duet::server::text_resource_contents;
using duet::server::uri_variables;

using prompt_awaitable = boost::asio::awaitable<prompt_result>;
using read_awaitable = boost::asio::awaitable<read_result>;

/// The threads plain and coroutine handlers ran on, for the test that pins where each kind runs.
struct thread_log {
    std::mutex mutex;
    std::vector<std::thread::id> prompt_threads;
    std::vector<std::thread::id> read_threads;
};

/// Tool: ask (one question). Prompts: plan (three questions in one round), onboarding (two rounds and its own
/// state), needs_roots (require()), where_plain / where_co (record their thread). Resources: test://secret
/// (one question, configured as publicly cacheable), test://needs-sampling (require()), test://where-plain
/// (records its thread). Templates: test://report/{id} (two questions in one round), test://setup/{id} (two
/// rounds and its own state).
void add_asking_features(server& srv, std::shared_ptr<thread_log> threads = std::make_shared<thread_log>()) {
    srv.add_tool(
        plain_tool("ask"),
        [](json::object const&, request_context& ctx) -> boost::asio::awaitable<duet::server::tool_result> {
            input_request question{"name", "elicitation/create", form("Your name?", "name")};
            auto answer = co_await ctx.async_input(std::move(question));
            co_return duet::server::tool_result::text(outcome(answer, "name"));
        });
    srv.add_prompt(
        prompt{.name = "plan", .arguments = {prompt_argument{.name = "project", .required = true}}},
        [](prompt_arguments const& args, request_context& ctx) -> prompt_awaitable {
            std::vector<input_request> questions;
            questions.push_back({"goal", "elicitation/create", form("What is the goal?", "goal")});
            questions.push_back({"draft", "sampling/createMessage", sampling_params()});
            questions.push_back({"where", "roots/list", nullptr});
            auto answers = co_await ctx.async_inputs(std::move(questions));
            prompt_result r;
            r.description = "Plan for " + args.at("project");
            r.add("user", text_content("goal=" + outcome(answers.at(0), "goal") + ";draft=" +
                                       outcome(answers.at(1), "") + ";where=" + outcome(answers.at(2), "")));
            co_return r;
        });
    srv.add_prompt(
        prompt{.name = "onboarding"}, [](prompt_arguments const&, request_context& ctx) -> prompt_awaitable {
            auto& state = ctx.state();
            auto const runs = state.contains("runs") ? state.at("runs").to_number<std::int64_t>() : 0;
            state["runs"] = runs + 1;
            input_request first{"name", "elicitation/create", form("Your name?", "name")};
            auto name = co_await ctx.async_input(std::move(first));
            if (!state.contains("name_seen"))
                state["name_seen"] = outcome(name, "name");
            input_request second{"team", "elicitation/create", form("Your team?", "team")};
            auto team = co_await ctx.async_input(std::move(second));
            prompt_result r;
            r.add("user", text_content(outcome(name, "name") + " joins " + outcome(team, "team") +
                                       "; runs=" + json::serialize(state.at("runs")) +
                                       "; name_seen=" + json::serialize(state.at("name_seen"))));
            co_return r;
        });
    srv.add_prompt(prompt{.name = "needs_roots"},
                   [](prompt_arguments const&, request_context& ctx) -> prompt_awaitable {
                       ctx.require(client_capability::roots);
                       input_request question{"where", "roots/list", nullptr};
                       auto answer = co_await ctx.async_input(std::move(question));
                       prompt_result r;
                       r.add("user", text_content("roots: " + outcome(answer, "")));
                       co_return r;
                   });
    srv.add_prompt(prompt{.name = "where_plain"}, [threads](prompt_arguments const&, request_context&) {
        std::lock_guard lock(threads->mutex);
        threads->prompt_threads.push_back(std::this_thread::get_id());
        prompt_result r;
        r.add("user", text_content("plain"));
        return r;
    });
    srv.add_prompt(prompt{.name = "where_co"},
                   [threads](prompt_arguments const&, request_context&) -> prompt_awaitable {
                       {
                           std::lock_guard lock(threads->mutex);
                           threads->prompt_threads.push_back(std::this_thread::get_id());
                       }
                       prompt_result r;
                       r.add("user", text_content("coroutine"));
                       co_return r;
                   });

    srv.add_resource(
        resource{.uri = "test://secret",
                 .name = "secret",
                 .hints = duet::protocol::cache_hints{.ttl_ms = 60000,
                                                      .scope = duet::protocol::cache_scope::public_cache}},
        [](std::string const& uri, request_context& ctx) -> read_awaitable {
            input_request question{"password", "elicitation/create", form("Password?", "password")};
            auto answer = co_await ctx.async_input(std::move(question));
            read_result r;
            r.contents.push_back(
                text_resource_contents(uri, "secret opened with " + outcome(answer, "password")));
            co_return r;
        });
    srv.add_resource(resource{.uri = "test://needs-sampling", .name = "needs-sampling"},
                     [](std::string const& uri, request_context& ctx) -> read_awaitable {
                         ctx.require(client_capability::sampling);
                         input_request question{"summary", "sampling/createMessage", sampling_params()};
                         auto answer = co_await ctx.async_input(std::move(question));
                         read_result r;
                         r.contents.push_back(text_resource_contents(uri, "summary: " + outcome(answer, "")));
                         co_return r;
                     });
    srv.add_resource(resource{.uri = "test://where-plain", .name = "where-plain"},
                     [threads](std::string const& uri, request_context&) {
                         {
                             std::lock_guard lock(threads->mutex);
                             threads->read_threads.push_back(std::this_thread::get_id());
                         }
                         read_result r;
                         r.contents.push_back(text_resource_contents(uri, "plain"));
                         return r;
                     });

    srv.add_resource_template(
        resource_template{.uri_template = "test://report/{id}", .name = "report"},
        [](std::string const& uri, uri_variables const& vars, request_context& ctx) -> read_awaitable {
            std::vector<input_request> questions;
            questions.push_back({"period", "elicitation/create", form("Which period?", "period")});
            questions.push_back({"summary", "sampling/createMessage", sampling_params()});
            auto answers = co_await ctx.async_inputs(std::move(questions));
            read_result r;
            r.contents.push_back(text_resource_contents(uri, "report " + vars.at("id") + " for " +
                                                                 outcome(answers.at(0), "period") + ": " +
                                                                 outcome(answers.at(1), "")));
            co_return r;
        });
    srv.add_resource_template(
        resource_template{.uri_template = "test://setup/{id}", .name = "setup"},
        [](std::string const& uri, uri_variables const& vars, request_context& ctx) -> read_awaitable {
            auto& state = ctx.state();
            auto const runs = state.contains("runs") ? state.at("runs").to_number<std::int64_t>() : 0;
            state["runs"] = runs + 1;
            input_request first{"host", "elicitation/create", form("Which host?", "host")};
            auto host = co_await ctx.async_input(std::move(first));
            input_request second{"port", "elicitation/create", form("Which port?", "port")};
            auto port = co_await ctx.async_input(std::move(second));
            read_result r;
            r.contents.push_back(text_resource_contents(
                uri, "setup " + vars.at("id") + " at " + outcome(host, "host") + ":" + outcome(port, "port") +
                         "; runs=" + json::serialize(state.at("runs"))));
            co_return r;
        });
}

/// The text of a GetPromptResult's first message, or of a ReadResourceResult's first contents.
std::string text_of(json::value const& response) {
    auto const r = result_of(response);
    if (auto const* m = r.if_contains("messages"); m && m->is_array() && !m->get_array().empty())
        return std::string(m->get_array().front().at("content").at("text").as_string());
    if (auto const* c = r.if_contains("contents"); c && c->is_array() && !c->get_array().empty())
        return std::string(c->get_array().front().at("text").as_string());
    ADD_FAILURE() << "neither messages nor contents: " << response;
    return {};
}

json::object plan_params(std::string_view project = "duet") {
    return json::object{{"name", "plan"}, {"arguments", {{"project", project}}}};
}

json::object uri_params(std::string_view uri) {
    return json::object{{"uri", uri}};
}

class MrtrPromptsResources : public testing::Test {
protected:
    MrtrPromptsResources() : srv_(test_options()) {
        add_test_features(srv_);
        add_asking_features(srv_, threads_);
    }
    std::shared_ptr<thread_log> threads_ = std::make_shared<thread_log>();
    server srv_;
};

// ---- modern: rounds -------------------------------------------------------------------------------------

TEST_F(MrtrPromptsResources, PromptAsksSeveralInputsInOneRound) {
    harness h(srv_);
    auto const params = plan_params();
    h.send(modern_request(1, "prompts/get", params, all_caps()));
    auto const first = expect_input_required(h.response(1));
    EXPECT_EQ(keys_of(first), (std::vector<std::string>{"draft", "goal", "where"}));
    auto const& asked = first.at("inputRequests").as_object();
    EXPECT_EQ(asked.at("goal"), (json::object{{"method", "elicitation/create"},
                                              {"params", form("What is the goal?", "goal")}}));
    EXPECT_EQ(asked.at("draft"),
              (json::object{{"method", "sampling/createMessage"}, {"params", sampling_params()}}));
    EXPECT_EQ(asked.at("where"), (json::object{{"method", "roots/list"}}));
    h.send(modern_request(
        2, "prompts/get",
        retry(params,
              {{"goal", accepted("goal", "ship")}, {"draft", sampled("Draft")}, {"where", roots_answer()}},
              first),
        all_caps()));
    auto const done = h.response(2);
    expect_modern_result(done, false);
    EXPECT_EQ(text_of(done), "goal=ship;draft=Draft;where=2 roots");
    EXPECT_EQ(result_of(done).at("description"), "Plan for duet");
    h.expect_schema_valid();
}

TEST_F(MrtrPromptsResources, ResourceTemplateAsksSeveralInputsInOneRound) {
    harness h(srv_);
    auto const params = uri_params("test://report/42");
    h.send(modern_request(1, "resources/read", params, all_caps()));
    auto const first = expect_input_required(h.response(1));
    EXPECT_EQ(keys_of(first), (std::vector<std::string>{"period", "summary"}));
    h.send(modern_request(
        2, "resources/read",
        retry(params, {{"period", accepted("period", "Q3")}, {"summary", sampled("fine")}}, first),
        all_caps()));
    auto const done = h.response(2);
    expect_modern_result(done, true);
    EXPECT_EQ(text_of(done), "report 42 for Q3: fine");
    h.expect_schema_valid();
}

// Several rounds in a row: each round's state differs, the handler's own state survives them all, and each
// retry carries only the newest answer.
TEST_F(MrtrPromptsResources, PromptSeveralRoundsWithEvolvingState) {
    harness h(srv_);
    json::object const params{{"name", "onboarding"}};
    json::object const caps{{"elicitation", json::object{}}};
    h.send(modern_request(1, "prompts/get", params, caps));
    auto const first = expect_input_required(h.response(1));
    EXPECT_EQ(keys_of(first), std::vector<std::string>{"name"});
    h.send(modern_request(2, "prompts/get", retry(params, {{"name", accepted("name", "Ada")}}, first), caps));
    auto const second = expect_input_required(h.response(2));
    EXPECT_EQ(keys_of(second), std::vector<std::string>{"team"});
    EXPECT_NE(second.at("requestState"), first.at("requestState"));
    h.send(
        modern_request(3, "prompts/get", retry(params, {{"team", accepted("team", "core")}}, second), caps));
    auto const done = h.response(3);
    expect_modern_result(done, false);
    EXPECT_EQ(text_of(done), R"(Ada joins core; runs=3; name_seen="Ada")");
    h.expect_schema_valid();
}

TEST_F(MrtrPromptsResources, ResourceSeveralRoundsWithEvolvingState) {
    harness h(srv_);
    auto const params = uri_params("test://setup/db");
    h.send(modern_request(1, "resources/read", params, all_caps()));
    auto const first = expect_input_required(h.response(1));
    EXPECT_EQ(keys_of(first), std::vector<std::string>{"host"});
    h.send(modern_request(2, "resources/read", retry(params, {{"host", accepted("host", "db1")}}, first),
                          all_caps()));
    auto const second = expect_input_required(h.response(2));
    EXPECT_EQ(keys_of(second), std::vector<std::string>{"port"});
    EXPECT_NE(second.at("requestState"), first.at("requestState"));
    h.send(modern_request(3, "resources/read", retry(params, {{"port", accepted("port", "5432")}}, second),
                          all_caps()));
    auto const done = h.response(3);
    expect_modern_result(done, true);
    EXPECT_EQ(text_of(done), "setup db at db1:5432; runs=3");
    h.expect_schema_valid();
}

// DIGEST §4: a needed answer that is missing is asked again, never an error; unknown keys are ignored.
TEST_F(MrtrPromptsResources, PromptMissingAndUnknownAnswersAreAskedAgain) {
    harness h(srv_);
    auto const params = plan_params();
    h.send(modern_request(1, "prompts/get", params, all_caps()));
    auto const first = expect_input_required(h.response(1));
    // One of three answered, plus a key nobody asked: the other two are asked again.
    h.send(modern_request(2, "prompts/get",
                          retry(params, {{"goal", accepted("goal", "ship")}, {"bogus", "anything"}}, first),
                          all_caps()));
    auto const second = expect_input_required(h.response(2));
    EXPECT_EQ(keys_of(second), (std::vector<std::string>{"draft", "where"}));
    // No inputResponses at all, then an empty object, then answers under the wrong keys: the same again.
    h.send(modern_request(3, "prompts/get", retry(params, {}, second), all_caps()));
    auto const third = expect_input_required(h.response(3));
    EXPECT_EQ(third.at("inputRequests"), second.at("inputRequests"));
    auto empty = retry(params, {}, third);
    empty["inputResponses"] = json::object{};
    h.send(modern_request(4, "prompts/get", empty, all_caps()));
    auto const fourth = expect_input_required(h.response(4));
    EXPECT_EQ(fourth.at("inputRequests"), second.at("inputRequests"));
    h.send(modern_request(5, "prompts/get",
                          retry(params, {{"Draft", sampled("x")}, {"roots", roots_answer()}}, fourth),
                          all_caps()));
    auto const fifth = expect_input_required(h.response(5));
    EXPECT_EQ(fifth.at("inputRequests"), second.at("inputRequests"));
    h.send(modern_request(6, "prompts/get",
                          retry(params, {{"draft", sampled("D")}, {"where", roots_answer()}}, fifth),
                          all_caps()));
    EXPECT_EQ(text_of(h.response(6)), "goal=ship;draft=D;where=2 roots");
    h.expect_schema_valid();
}

TEST_F(MrtrPromptsResources, ResourceMissingAndUnknownAnswersAreAskedAgain) {
    harness h(srv_);
    auto const params = uri_params("test://secret");
    h.send(modern_request(1, "resources/read", params, all_caps()));
    auto const first = expect_input_required(h.response(1));
    h.send(modern_request(2, "resources/read", retry(params, {{"pass", accepted("password", "x")}}, first),
                          all_caps()));
    auto const second = expect_input_required(h.response(2));
    EXPECT_EQ(second.at("inputRequests"), first.at("inputRequests"));
    h.send(modern_request(3, "resources/read", retry(params, {}, second), all_caps()));
    auto const third = expect_input_required(h.response(3));
    EXPECT_EQ(third.at("inputRequests"), first.at("inputRequests"));
    h.send(modern_request(4, "resources/read",
                          retry(params, {{"password", accepted("password", "pw")}}, third), all_caps()));
    EXPECT_EQ(text_of(h.response(4)), "secret opened with pw");
    h.expect_schema_valid();
}

// An answer that is not a result of the method it answers is the client's error: -32602 naming the key.
TEST_F(MrtrPromptsResources, GarbageAnswersAreInvalidParams) {
    harness h(srv_);
    struct target {
        std::string_view method;
        json::object params;
        std::string key;
        json::object good_rest; ///< well-formed answers to the round's other questions
    };
    std::vector<target> const targets{
        {"prompts/get", plan_params(), "goal", {{"draft", sampled("d")}, {"where", roots_answer()}}},
        {"prompts/get", plan_params(), "draft", {{"goal", accepted("goal", "g")}, {"where", roots_answer()}}},
        {"prompts/get", plan_params(), "where", {{"goal", accepted("goal", "g")}, {"draft", sampled("d")}}},
        {"resources/read", uri_params("test://secret"), "password", {}},
        {"resources/read", uri_params("test://report/1"), "summary", {{"period", accepted("period", "Q1")}}},
    };
    json::value const garbage[] = {"yes",
                                   42,
                                   nullptr,
                                   json::array{},
                                   json::object{},
                                   json::object{{"action", "maybe"}},
                                   json::object{{"roots", "none"}}};
    int id = 1;
    for (auto const& t : targets) {
        h.send(modern_request(id, t.method, t.params, all_caps()));
        auto const first = expect_input_required(h.response(id));
        ++id;
        for (auto const& g : garbage) {
            auto answers = t.good_rest;
            answers[t.key] = g;
            h.send(modern_request(id, t.method, retry(t.params, answers, first), all_caps()));
            auto const r = h.response(id);
            expect_error(r, -32602);
            EXPECT_NE(json::serialize(r).find(t.key), std::string::npos)
                << "the error should name the key: " << r;
            ++id;
        }
    }
    h.expect_schema_valid();
}

// ---- modern: capabilities ---------------------------------------------------------------------------------

// DIGEST §4: never include an input request the client did not declare on this request.
TEST_F(MrtrPromptsResources, UndeclaredCapabilitiesAreNeverAsked) {
    harness h(srv_);
    json::object const elicitation{{"elicitation", json::object{}}};
    auto const params = plan_params();
    h.send(modern_request(1, "prompts/get", params, elicitation));
    auto const first = expect_input_required(h.response(1));
    EXPECT_EQ(keys_of(first), std::vector<std::string>{"goal"});
    h.send(modern_request(2, "prompts/get", retry(params, {{"goal", accepted("goal", "ship")}}, first),
                          elicitation));
    EXPECT_EQ(text_of(h.response(2)), "goal=ship;draft=(not declared);where=(not declared)");
    // Nothing declared: nothing asked, the answer is complete at once.
    h.send(modern_request(3, "prompts/get", params));
    auto const none = h.response(3);
    expect_modern_result(none, false);
    EXPECT_EQ(text_of(none), "goal=(not declared);draft=(not declared);where=(not declared)");
    h.send(
        modern_request(4, "resources/read", uri_params("test://report/9"), {{"sampling", json::object{}}}));
    auto const report = expect_input_required(h.response(4));
    EXPECT_EQ(keys_of(report), std::vector<std::string>{"summary"});
    h.send(modern_request(5, "resources/read", uri_params("test://report/9")));
    EXPECT_EQ(text_of(h.response(5)), "report 9 for (not declared): (not declared)");
    h.expect_schema_valid();
}

// ERA-POLICY step 5: a handler that cannot go on without a capability gets -32021 naming it; declared, it
// asks.
TEST_F(MrtrPromptsResources, RequireGivesMissingRequiredClientCapability) {
    harness h(srv_);
    h.send(modern_request(1, "prompts/get", {{"name", "needs_roots"}}, {{"elicitation", json::object{}}}));
    auto const prompt_error = h.response(1);
    expect_error(prompt_error, -32021);
    EXPECT_EQ(error_of(prompt_error).at("data"),
              (json::object{{"requiredCapabilities", {{"roots", json::object{}}}}}));
    h.send(modern_request(2, "resources/read", uri_params("test://needs-sampling"),
                          {{"roots", json::object{}}}));
    auto const read_error = h.response(2);
    expect_error(read_error, -32021);
    EXPECT_EQ(error_of(read_error).at("data"),
              (json::object{{"requiredCapabilities", {{"sampling", json::object{}}}}}));

    h.send(modern_request(3, "prompts/get", {{"name", "needs_roots"}}, {{"roots", json::object{}}}));
    auto const asked = expect_input_required(h.response(3));
    EXPECT_EQ(keys_of(asked), std::vector<std::string>{"where"});
    h.send(modern_request(4, "prompts/get",
                          retry({{"name", "needs_roots"}}, {{"where", roots_answer()}}, asked),
                          {{"roots", json::object{}}}));
    EXPECT_EQ(text_of(h.response(4)), "roots: 2 roots");
    // The retry must declare it again: capabilities of an earlier request count for nothing (DIGEST §2).
    h.send(modern_request(5, "resources/read", uri_params("test://needs-sampling"),
                          {{"sampling", json::object{}}}));
    auto const sampling = expect_input_required(h.response(5));
    h.send(modern_request(6, "resources/read",
                          retry(uri_params("test://needs-sampling"), {{"summary", sampled("s")}}, sampling)));
    expect_error(h.response(6), -32021);
    h.expect_schema_valid();
}

// ---- modern: hostile requestState (DIGEST §4: an error, never a new question) -----------------------------

/// Sends a retry with `state` in place of the genuine one and expects -32602, not a result of any kind.
void expect_refused(harness& h, int id, std::string_view method, json::object params, json::value state,
                    json::object answers) {
    params["inputResponses"] = std::move(answers);
    params["requestState"] = std::move(state);
    h.send(modern_request(id, method, params, all_caps()));
    auto const r = h.response(id);
    expect_error(r, -32602);
    EXPECT_FALSE(r.as_object().contains("result")) << r;
}

TEST_F(MrtrPromptsResources, TamperedStateIsAnErrorNeverAPrompt) {
    harness h(srv_);
    struct target {
        std::string_view method;
        json::object params;
        json::object answers;
    };
    std::vector<target> const targets{
        {"prompts/get", {{"name", "onboarding"}}, {{"name", accepted("name", "Ada")}}},
        {"resources/read", uri_params("test://secret"), {{"password", accepted("password", "pw")}}},
        {"resources/read", uri_params("test://setup/db"), {{"host", accepted("host", "h")}}},
    };
    int id = 1;
    for (auto const& t : targets) {
        h.send(modern_request(id, t.method, t.params, all_caps()));
        auto const first = expect_input_required(h.response(id));
        ++id;
        std::string const state(first.at("requestState").as_string());
        std::vector<json::value> bad{json::value(state + "x"),
                                     json::value(state.substr(0, state.size() - 1)),
                                     json::value(""),
                                     json::value("not a state"),
                                     json::value(state + state),
                                     json::value(7),
                                     json::value(json::object{}),
                                     json::value(true)};
        for (std::size_t i : {std::size_t{0}, state.size() / 2, state.size() - 1}) {
            auto flipped = state;
            flipped[i] = flipped[i] == 'A' ? 'B' : 'A';
            bad.emplace_back(flipped);
        }
        for (auto const& b : bad)
            expect_refused(h, id++, t.method, t.params, b, t.answers);
        // The genuine state still completes its round afterwards.
        h.send(modern_request(id, t.method, retry(t.params, t.answers, first), all_caps()));
        auto const after = h.response(id++);
        EXPECT_TRUE(after.as_object().contains("result")) << after;
    }
    h.expect_schema_valid();
}

// The state is bound to its method and the params that identify the request: another prompt, other
// arguments, another URI, another method are refused.
TEST_F(MrtrPromptsResources, StateOfAnotherRequestIsAnError) {
    harness h(srv_);
    h.send(modern_request(1, "prompts/get", plan_params("duet"), all_caps()));
    auto const plan = expect_input_required(h.response(1));
    h.send(modern_request(2, "resources/read", uri_params("test://report/1"), all_caps()));
    auto const report = expect_input_required(h.response(2));
    h.send(modern_request(3, "tools/call", call_params("ask"), all_caps()));
    auto const tool = expect_input_required(h.response(3));
    json::object const answers{{"goal", accepted("goal", "g")}, {"period", accepted("period", "p")}};
    int id = 10;
    auto const& plan_state = plan.at("requestState");
    auto const& report_state = report.at("requestState");
    expect_refused(h, id++, "prompts/get", plan_params("other"), plan_state, answers);
    expect_refused(h, id++, "prompts/get", {{"name", "onboarding"}}, plan_state, answers);
    expect_refused(h, id++, "resources/read", uri_params("test://report/1"), plan_state, answers);
    expect_refused(h, id++, "resources/read", uri_params("test://report/2"), report_state, answers);
    expect_refused(h, id++, "resources/read", uri_params("test://secret"), report_state, answers);
    expect_refused(h, id++, "prompts/get", plan_params("duet"), report_state, answers);
    expect_refused(h, id++, "prompts/get", plan_params("duet"), tool.at("requestState"), answers);
    expect_refused(h, id++, "resources/read", uri_params("test://report/1"), tool.at("requestState"),
                   answers);
    h.expect_schema_valid();
}

TEST(MrtrPromptsResourcesState, ExpiredStateIsAnError) {
    auto options = test_options();
    options.request_state_ttl = std::chrono::seconds(-1);
    server srv(options);
    add_asking_features(srv);
    harness h(srv);
    h.send(modern_request(1, "prompts/get", plan_params(), all_caps()));
    auto const plan = expect_input_required(h.response(1));
    h.send(modern_request(2, "resources/read", uri_params("test://secret"), all_caps()));
    auto const secret = expect_input_required(h.response(2));
    expect_refused(h, 3, "prompts/get", plan_params(), plan.at("requestState"),
                   {{"goal", accepted("goal", "g")}});
    expect_refused(h, 4, "resources/read", uri_params("test://secret"), secret.at("requestState"),
                   {{"password", accepted("password", "pw")}});
    for (int id : {3, 4}) {
        // The responses were taken above; their messages name the reason.
        bool found = false;
        for (auto const& m : h.messages())
            if (is_response_to(m, id)) {
                found = true;
                EXPECT_NE(error_of(m).at("message").as_string().find("expired"), std::string::npos) << m;
            }
        EXPECT_TRUE(found);
    }
    h.expect_schema_valid();
}

// ---- modern: cache hints (DIGEST §5) ----------------------------------------------------------------------

// test://secret is configured as publicly cacheable for 60 s: its input_required round carries no hints, and
// the complete result of the retry is not cacheable (it rests on the user's answer).
TEST_F(MrtrPromptsResources, InputRequiredCarriesNoCacheHintsAndTheRetryIsNotCacheable) {
    harness h(srv_);
    auto const params = uri_params("test://secret");
    h.send(modern_request(1, "resources/read", params, all_caps()));
    auto const first = expect_input_required(h.response(1)); // checks: no ttlMs, no cacheScope
    h.send(modern_request(2, "resources/read", retry(params, {}, first), all_caps()));
    expect_input_required(h.response(2)); // a re-ask is just as uncacheable
    h.send(modern_request(3, "resources/read",
                          retry(params, {{"password", accepted("password", "pw")}}, first), all_caps()));
    auto const done = h.response(3);
    expect_modern_result(done, true);
    EXPECT_EQ(result_of(done).at("ttlMs"), 0) << done;
    EXPECT_EQ(result_of(done).at("cacheScope"), "private") << done;
    // Without the capability nothing is asked and the configured hints stand.
    h.send(modern_request(4, "resources/read", params));
    auto const plain = h.response(4);
    EXPECT_EQ(result_of(plain).at("ttlMs"), 60000) << plain;
    EXPECT_EQ(result_of(plain).at("cacheScope"), "public") << plain;
    // prompts/get results never carry hints, round or not.
    h.send(modern_request(5, "prompts/get", plan_params(), all_caps()));
    expect_input_required(h.response(5));
    h.expect_schema_valid();
}

// DIGEST §4: only tools/call, prompts/get and resources/read may ask; lists answer complete even when handed
// a genuine state of a prompts/get round and answers.
TEST_F(MrtrPromptsResources, ListsNeverAskEvenWithAPromptsState) {
    harness h(srv_);
    h.send(modern_request(1, "prompts/get", plan_params(), all_caps()));
    auto const issued = expect_input_required(h.response(1));
    int id = 10;
    for (std::string_view method :
         {"prompts/list", "resources/list", "resources/templates/list", "tools/list"}) {
        json::object params{{"inputResponses", {{"goal", accepted("goal", "g")}}},
                            {"requestState", issued.at("requestState")}};
        h.send(modern_request(id, method, params, all_caps()));
        auto const r = h.response(id++);
        expect_modern_result(r, true);
        EXPECT_FALSE(result_of(r).contains("inputRequests")) << r;
    }
    h.expect_schema_valid();
}

// ---- where handlers run
// -------------------------------------------------------------------------------------

// Plain prompt and resource handlers run on the blocking pool, so a slow one never stalls the connection;
// coroutine handlers run on the connection's executor (here: the test's thread, which runs the io_context).
TEST_F(MrtrPromptsResources, PlainHandlersRunOffTheIoThreadCoroutinesOnIt) {
    harness h(srv_);
    h.send(modern_request(1, "prompts/get", {{"name", "where_plain"}}));
    EXPECT_EQ(text_of(h.response(1)), "plain");
    h.send(modern_request(3, "prompts/get", {{"name", "where_co"}}));
    EXPECT_EQ(text_of(h.response(3)), "coroutine");
    h.send(modern_request(4, "resources/read", uri_params("test://where-plain")));
    EXPECT_EQ(text_of(h.response(4)), "plain");
    std::lock_guard lock(threads_->mutex);
    ASSERT_EQ(threads_->prompt_threads.size(), 2u);
    ASSERT_EQ(threads_->read_threads.size(), 1u);
    auto const io_thread = std::this_thread::get_id();
    EXPECT_NE(threads_->prompt_threads[0], io_thread);
    EXPECT_EQ(threads_->prompt_threads[1], io_thread);
    EXPECT_NE(threads_->read_threads[0], io_thread);
}

// ---- legacy sessions: real server-to-client requests ------------------------------------------------------

class MrtrPromptsResourcesLegacy : public MrtrPromptsResources, protected legacy_client_steps {};

TEST_F(MrtrPromptsResourcesLegacy, PromptAsksWithRealRequests) {
    harness h(srv_);
    open(h);
    h.send(legacy_request(1, "prompts/get", plan_params()));
    auto next =
        answer(h, "elicitation/create", accepted("goal", "ship"), 0, form("What is the goal?", "goal"));
    next = answer(h, "sampling/createMessage", sampled("Draft"), next, sampling_params());
    answer(h, "roots/list", roots_answer(), next);
    auto const done = h.response(1);
    expect_legacy_result(done);
    EXPECT_EQ(text_of(done), "goal=ship;draft=Draft;where=2 roots");
    for (auto const& m : h.messages())
        EXPECT_EQ(json::serialize(m).find("input_required"), std::string::npos) << m;
    h.expect_schema_valid();
}

TEST_F(MrtrPromptsResourcesLegacy, ResourceReadAsksWithARealRequest) {
    harness h(srv_);
    open(h);
    h.send(legacy_request(1, "resources/read", uri_params("test://secret")));
    answer(h, "elicitation/create", accepted("password", "pw"), 0, form("Password?", "password"));
    auto const done = h.response(1);
    expect_legacy_result(done);
    EXPECT_EQ(text_of(done), "secret opened with pw");
    auto const from = h.messages().size();
    h.send(legacy_request(2, "resources/read", uri_params("test://report/5")));
    auto const next =
        answer(h, "elicitation/create", accepted("period", "May"), from, form("Which period?", "period"));
    answer(h, "sampling/createMessage", sampled("busy"), next, sampling_params());
    EXPECT_EQ(text_of(h.response(2)), "report 5 for May: busy");
    h.expect_schema_valid();
}

// The handler runs once per call and asks each question as it comes; its state is fresh for every call.
TEST_F(MrtrPromptsResourcesLegacy, SeveralQuestionsInOneRunWithFreshState) {
    harness h(srv_);
    open(h);
    for (int call = 1; call <= 2; ++call) {
        auto const from = h.messages().size();
        h.send(legacy_request(call, "prompts/get", {{"name", "onboarding"}}));
        auto const next =
            answer(h, "elicitation/create", accepted("name", "Ada"), from, form("Your name?", "name"));
        answer(h, "elicitation/create", accepted("team", "core"), next, form("Your team?", "team"));
        EXPECT_EQ(text_of(h.response(call)), R"(Ada joins core; runs=1; name_seen="Ada")");
    }
    auto const from = h.messages().size();
    h.send(legacy_request(3, "resources/read", uri_params("test://setup/x")));
    auto const next =
        answer(h, "elicitation/create", accepted("host", "h"), from, form("Which host?", "host"));
    answer(h, "elicitation/create", accepted("port", "1"), next, form("Which port?", "port"));
    EXPECT_EQ(text_of(h.response(3)), "setup x at h:1; runs=1");
    h.expect_schema_valid();
}

// What the session did not declare at initialize is never asked.
TEST_F(MrtrPromptsResourcesLegacy, UndeclaredCapabilityIsNotAsked) {
    harness h(srv_);
    open(h, {{"roots", json::object{}}});
    h.send(legacy_request(1, "prompts/get", plan_params()));
    answer(h, "roots/list", roots_answer(), 0);
    EXPECT_EQ(text_of(h.response(1)), "goal=(not declared);draft=(not declared);where=2 roots");
    h.send(legacy_request(2, "resources/read", uri_params("test://secret")));
    EXPECT_EQ(text_of(h.response(2)), "secret opened with (not declared)");
    for (auto const& m : h.messages()) {
        EXPECT_FALSE(is_server_request(m, "elicitation/create")) << m;
        EXPECT_FALSE(is_server_request(m, "sampling/createMessage")) << m;
    }
    h.expect_schema_valid();
}

} // namespace
