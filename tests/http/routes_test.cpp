// One http_server in front of several servers, each at its own path (what `duet gateway` does with named
// upstreams): requests reach the server at their path, legacy sessions belong to the endpoint that opened
// them, any other path is 404 naming the served ones, and a bad route table is refused when constructed.
#include <duet/transport/http_server.hpp>

#include "http/mcp_http.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/beast_feed.hpp"
#include "transport/http/request.hpp"
#include "transport/http/request_guards.hpp"

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet;
using namespace duet::test;
using namespace duet::test::http;

std::unique_ptr<server::server> named_server(std::string name) {
    server::server_options o;
    o.info = {.name = std::move(name), .version = "1.0.0"};
    return std::make_unique<server::server>(std::move(o));
}

/// Two servers, "first" at /mcp/first and "second" at /mcp/second, served from a background thread.
class two_routes {
public:
    two_routes() : first_(named_server("first")), second_(named_server("second")) {
        transport::http_options o;
        o.port = 0;
        http_ = std::make_unique<transport::http_server>(
            std::vector<transport::http_route>{{"/mcp/first", first_.get()}, {"/mcp/second", second_.get()}},
            o);
        if (auto ec = http_->listen()) {
            ADD_FAILURE() << "listen: " << ec.message();
            return;
        }
        thread_ = std::thread([this] { http_->run(); });
    }
    ~two_routes() {
        if (thread_.joinable()) {
            http_->stop();
            thread_.join();
        }
    }

    [[nodiscard]] endpoint at(std::string const& path) const { return endpoint::parse(http_->url(path)); }
    [[nodiscard]] std::string url() const { return http_->url(); }

private:
    std::unique_ptr<server::server> first_;
    std::unique_ptr<server::server> second_;
    std::unique_ptr<transport::http_server> http_;
    std::thread thread_;
};

std::string server_name(json::value const& discover) {
    return std::string(
        result_of(discover).at("_meta").at("io.modelcontextprotocol/serverInfo").at("name").as_string());
}

TEST(HttpRoutes, EachPathReachesItsOwnServer) {
    two_routes s;
    EXPECT_TRUE(s.url().ends_with("/mcp/first")) << s.url();
    mcp_http first(s.at("/mcp/first"));
    mcp_http second(s.at("/mcp/second"));
    EXPECT_EQ(server_name(first.post(modern_request(1, "server/discover")).json()), "first");
    EXPECT_EQ(server_name(second.post(modern_request(2, "server/discover")).json()), "second");
    auto const init = first.initialize("2025-11-25");
    EXPECT_EQ(result_of(init.json()).at("serverInfo").at("name"), "first");
    first.expect_schema_valid();
    second.expect_schema_valid();
}

TEST(HttpRoutes, ASessionBelongsToTheEndpointThatOpenedIt) {
    two_routes s;
    mcp_http first(s.at("/mcp/first"));
    mcp_http second(s.at("/mcp/second"));
    first.initialize("2025-11-25");
    auto const ping = legacy_request(1, "ping");
    auto const elsewhere = second.send(second.spec_for(ping, first.session_headers()), ping);
    EXPECT_EQ(elsewhere.status, 404u) << elsewhere.body;
    EXPECT_EQ(code_of(elsewhere.json()), -32600) << elsewhere.body;
    auto const here = first.post(legacy_request(2, "ping"));
    EXPECT_EQ(here.status, 200u) << here.body;
}

// A target's bytes above 0x7F (which Beast lets through) are named percent-encoded in the 404: echoed raw
// they would make the body invalid JSON text.
TEST(HttpRoutes, AnUnknownPathIsNamedPercentEncoded) {
    std::vector<transport::http_route> const routes{{"/mcp", nullptr}};
    transport::http_options const options;
    transport::http::request_guards const guards(routes, options);
    transport::http::request_parser parser;
    ASSERT_FALSE(feed(parser, "GET /caf\xC3\xA9/\xFF?x=\xFE HTTP/1.1\r\nHost: localhost\r\n\r\n", 1024));
    auto const req = parser.release();
    auto const verdict = guards.check(req);
    auto const* refusal = std::get_if<transport::http::reply>(&verdict);
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->status, boost::beast::http::status::not_found);
    boost::system::error_code ec;
    auto const body = boost::json::parse(refusal->body, ec);
    ASSERT_FALSE(ec) << refusal->body;
    std::string const message(body.at("error").at("message").as_string());
    EXPECT_NE(message.find("no MCP endpoint at /caf%C3%A9/%FF; served here: /mcp"), std::string::npos)
        << message;
}

TEST(HttpRoutes, AnUnknownPathIsNotFoundNamingTheServedOnes) {
    two_routes s;
    for (std::string const path : {"/mcp", "/mcp/third", "/mcp/first/more", "/"}) {
        mcp_http c(s.at(path));
        auto const r = c.post(modern_request(1, "server/discover"));
        EXPECT_EQ(r.status, 404u) << path;
        EXPECT_NE(r.body.find("no MCP endpoint at " + path + "; served here: /mcp/first, /mcp/second"),
                  std::string::npos)
            << r.body;
    }
}

TEST(HttpRoutes, ABadRouteTableIsRefused) {
    auto srv = named_server("one");
    transport::http_options o;
    using routes = std::vector<transport::http_route>;
    EXPECT_THROW(transport::http_server(routes{}, o), std::invalid_argument);
    EXPECT_THROW(transport::http_server(routes{{"/a", srv.get()}, {"/a", srv.get()}}, o),
                 std::invalid_argument);
    EXPECT_THROW(transport::http_server(routes{{"a", srv.get()}}, o), std::invalid_argument);
    EXPECT_THROW(transport::http_server(routes{{"/a?x=1", srv.get()}}, o), std::invalid_argument);
    EXPECT_THROW(transport::http_server(routes{{"/a", nullptr}}, o), std::invalid_argument);
    EXPECT_NO_THROW(transport::http_server(routes{{"/a", srv.get()}, {"/b", srv.get()}}, o));
}

} // namespace
