// Progress through `duet gateway`: the gateway mints a progressToken upstream only for a call whose own
// client sent one, so an upstream never sets up progress reporting that nobody hears (and does no work for
// it), and the progress a call asked for still reaches it under its own token, in either era downstream
// and upstream.
//
// The upstream's `progress_token` tool answers the token its call carried ("none" without one), after one
// progress step on it. Skipped where the pinned Node is not installed.
#include "gateway/announcing_upstream.hpp"
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;
using namespace duet::test::gateway;

json::object call_params_with(json::object meta) {
    json::object params = call_params("progress_token", {});
    if (!meta.empty())
        params["_meta"] = std::move(meta);
    return params;
}

json::object modern_call(int id, json::object extra_meta = {}) {
    json::object params = call_params("progress_token", {});
    params["_meta"] = modern_meta({}, std::move(extra_meta));
    return modern_request(id, "tools/call", std::move(params));
}

/// What one downstream call heard: the upstream's answer text and the tokens of the progress on its stream.
struct heard_progress {
    std::string text;
    std::vector<json::value> progress_tokens;
};

heard_progress post(mcp_http& c, json::object const& request) {
    auto const r = c.post(request);
    EXPECT_EQ(r.status, 200u) << r.body;
    heard_progress h;
    for (auto const& m : r.messages()) {
        auto const& o = m.as_object();
        if (o.contains("result"))
            h.text = first_text(o.at("result").as_object());
        else if (o.contains("method") && o.at("method") == "notifications/progress")
            h.progress_tokens.push_back(o.at("params").at("progressToken"));
    }
    return h;
}

void expect_token_only_when_asked(mcp_http& c, json::object const& quiet, json::object const& asking) {
    auto const q = post(c, quiet);
    EXPECT_EQ(q.text, "none");
    EXPECT_TRUE(q.progress_tokens.empty());

    auto const a = post(c, asking);
    EXPECT_NE(a.text, "none"); // the upstream got a token of the gateway's own
    EXPECT_FALSE(a.text.empty());
    ASSERT_EQ(a.progress_tokens.size(), 1u) << a.text;
    EXPECT_EQ(a.progress_tokens.front(), json::value("p"));
    c.expect_schema_valid();
}

// Runs `check` with a client of a gateway in front of the announcing upstream, legacy and then modern.
template<class Check>
void against_both_upstream_eras(Check check) {
    for (bool const modern_upstream : {false, true}) {
        SCOPED_TRACE(modern_upstream ? "modern upstream" : "legacy upstream");
        announcing_upstream up;
        gateway_process gw(up.upstream(modern_upstream), {"--era", modern_upstream ? "modern" : "legacy"});
        mcp_http c(gw.ep());
        check(c);
    }
}

TEST(GatewayProgress, AModernCallGetsAnUpstreamTokenOnlyWhenItSentOne) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    against_both_upstream_eras([](mcp_http& c) {
        expect_token_only_when_asked(c, modern_call(1), modern_call(2, {{"progressToken", "p"}}));
    });
}

TEST(GatewayProgress, ALegacySessionCallGetsAnUpstreamTokenOnlyWhenItSentOne) {
    DUET_SKIP_WITHOUT_PINNED_NODE();
    against_both_upstream_eras([](mcp_http& c) {
        ASSERT_EQ(c.initialize("2025-11-25").status, 200u);
        expect_token_only_when_asked(
            c, legacy_request(1, "tools/call", call_params_with({})),
            legacy_request(2, "tools/call", call_params_with({{"progressToken", "p"}})));
    });
}

} // namespace
