// `duet gateway` in front of a legacy `duet serve` over HTTP that forgets the gateway's upstream sessions (it
// restarted on its port, so every session id the gateway holds is answered 404): the gateway begins the
// sessions anew and sends the call that met the 404 once more, so downstream clients never see the loss.
#include "gateway/gateway_process.hpp"
#include "http/mcp_http.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/child_process.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <string>

namespace {

using namespace duet::test;
using namespace duet::test::http;
using namespace duet::test::gateway;

/// `duet serve --port PORT` (the demo server on Streamable HTTP); its URL is its first stdout line.
class serve_process {
public:
    explicit serve_process(std::string const& port)
        : child_({DUET_BINARY, "serve", "--port", port}, child_process::input::null) {
        url_ = first_stdout_line(child_);
        if (url_.empty())
            ADD_FAILURE() << "duet serve printed no URL; its stderr:\n" << child_.stderr_text();
    }
    ~serve_process() { stop(); }
    serve_process(serve_process const&) = delete;
    serve_process& operator=(serve_process const&) = delete;

    [[nodiscard]] std::string const& url() const noexcept { return url_; }
    void stop() {
        if (!child_.running())
            return;
        child_.signal(SIGTERM);
        child_.wait_exit(wait_limit);
    }

private:
    child_process child_;
    std::string url_;
};

std::string echoed(mcp_http& c, boost::json::value const& request) {
    auto const answer = only_message(c.post(request));
    auto const* o = answer.if_object();
    if (!o || !o->contains("result"))
        return "no result: " + boost::json::serialize(answer);
    return first_text(result_of(answer));
}

TEST(GatewayLegacyHttpUpstream, BeginsForgottenSessionsAnewAndSendsTheCallAgain) {
    serve_process first("0");
    ASSERT_FALSE(first.url().empty());
    gateway_process gw(first.url(), {"--era", "legacy"});
    mcp_http modern_client(gw.ep());
    mcp_http legacy_client(gw.ep());
    legacy_client.initialize("2025-11-25");
    // Both kinds of upstream session exist: the pool's (modern downstream) and the legacy session's own.
    EXPECT_EQ(echoed(modern_client, modern_request(1, "tools/call", call_params("echo", {{"text", "a"}}))),
              "a");
    EXPECT_EQ(echoed(legacy_client, legacy_request(1, "tools/call", call_params("echo", {{"text", "b"}}))),
              "b");

    auto const port = std::to_string(endpoint::parse(first.url()).port);
    first.stop();
    serve_process again(port); // the same URL, none of the gateway's sessions
    ASSERT_EQ(again.url(), first.url());

    EXPECT_EQ(echoed(modern_client, modern_request(2, "tools/call", call_params("echo", {{"text", "c"}}))),
              "c")
        << gw.stderr_text();
    EXPECT_EQ(echoed(legacy_client, legacy_request(2, "tools/call", call_params("echo", {{"text", "d"}}))),
              "d")
        << gw.stderr_text();
    // The control connection's session is begun anew as well (its standalone stream met the 404).
    EXPECT_TRUE(gw.wait_for_log("ended; connecting again")) << gw.stderr_text();
    modern_client.expect_schema_valid();
    legacy_client.expect_schema_valid();
}

} // namespace
