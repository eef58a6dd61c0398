// A legacy session on a server that checks tokens belongs to the principal (issuer and subject) whose token
// opened it: another caller who learns its Mcp-Session-Id finds no session there, for POST, GET and DELETE
// alike, while its opener goes on using it (MCP security best practices: session ids are not credentials).
#include <duet/auth/token_verifier.hpp>

#include "http/mcp_http.hpp"
#include "http/servers.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

namespace {

using namespace duet;
using namespace duet::test::http;

// Two callers by their tokens: a verifier of the seam's own kind, as an application might write one.
class two_callers final : public auth::token_verifier {
public:
    std::optional<auth::token_verdict> verify_now(std::string_view token) override {
        if (token == "alice-token" || token == "bob-token")
            return std::make_shared<protocol::verified_token const>(protocol::verified_token{
                .subject = std::string(token.substr(0, token.find('-'))), .issuer = "https://as.example"});
        return auth::token_rejection{"unknown caller"};
    }
    boost::asio::awaitable<auth::token_verdict> async_verify(std::string token) override {
        co_return *verify_now(token);
    }
};

transport::http_options two_caller_options() {
    transport::http_options o;
    o.authorization = transport::protected_resource{.verifier = std::make_shared<two_callers>()};
    return o;
}

request_spec as_caller(std::string body, std::string const& token, std::string const& sid = {}) {
    auto spec = post_spec(std::move(body), {{"Authorization", "Bearer " + token}});
    if (!sid.empty()) {
        set_header(spec, "Mcp-Session-Id", sid);
        set_header(spec, "MCP-Protocol-Version", "2025-11-25");
    }
    return spec;
}

std::string open_session_as(endpoint const& ep, std::string const& token) {
    auto const init = exchange(
        ep,
        as_caller(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
                  R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
                  token));
    EXPECT_EQ(init.status, 200u) << init.body;
    auto const sid = init.header("Mcp-Session-Id").value_or("");
    EXPECT_FALSE(sid.empty());
    auto const ready =
        exchange(ep, as_caller(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", token, sid));
    EXPECT_EQ(ready.status, 202u) << ready.body;
    return sid;
}

constexpr std::string_view tools_list = R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})";

TEST(ProtectedSessions, ASessionOpenedByOneCallerIsUnknownToAnother) {
    inproc_server s(two_caller_options());
    auto const sid = open_session_as(s.ep(), "alice-token");

    auto const hijack = exchange(s.ep(), as_caller(std::string(tools_list), "bob-token", sid));
    EXPECT_EQ(hijack.status, 404u) << hijack.body;

    request_spec stream{.method = "GET",
                        .headers = {{"Accept", "text/event-stream"},
                                    {"Authorization", "Bearer bob-token"},
                                    {"Mcp-Session-Id", sid},
                                    {"MCP-Protocol-Version", "2025-11-25"}}};
    EXPECT_EQ(exchange(s.ep(), stream).status, 404u);
    auto end = stream;
    end.method = "DELETE";
    EXPECT_EQ(exchange(s.ep(), end).status, 404u);

    // The opener's session survived every attempt.
    auto const own = exchange(s.ep(), as_caller(std::string(tools_list), "alice-token", sid));
    EXPECT_EQ(own.status, 200u) << own.body;
    EXPECT_NE(own.body.find("\"tools\""), std::string::npos) << own.body;
    set_header(end, "Authorization", "Bearer alice-token");
    auto const ended = exchange(s.ep(), end);
    EXPECT_TRUE(ended.status == 200u || ended.status == 204u) << ended.status;
}

TEST(ProtectedSessions, EachCallerKeepsItsOwnSession) {
    inproc_server s(two_caller_options());
    auto const alice = open_session_as(s.ep(), "alice-token");
    auto const bob = open_session_as(s.ep(), "bob-token");
    EXPECT_NE(alice, bob);
    EXPECT_EQ(exchange(s.ep(), as_caller(std::string(tools_list), "alice-token", alice)).status, 200u);
    EXPECT_EQ(exchange(s.ep(), as_caller(std::string(tools_list), "bob-token", bob)).status, 200u);
    EXPECT_EQ(exchange(s.ep(), as_caller(std::string(tools_list), "bob-token", alice)).status, 404u);
}

} // namespace
