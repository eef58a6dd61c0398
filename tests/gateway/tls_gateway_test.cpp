// `duet gateway` with TLS on both sides, as processes: the upstream is `duet serve` on HTTPS, the gateway
// reaches it at its https:// URL trusting the test's CA (--cacert) and serves HTTPS itself (--tls-cert,
// --tls-key); Duet's client, trusting the same CA, calls a tool through it in each era. Certificates come
// from a CA made for the test (support/test_certs.hpp). An upstream whose CA the gateway was not given is
// refused at start (exit 3, the reason on stderr); a per-upstream TLS flag naming no upstream is a usage
// error that names it (exit 2).
#include "client/sync_client.hpp"
#include "gateway/gateway_process.hpp"
#include "stdio/checks.hpp"
#include "support/child_process.hpp"
#include "support/test_certs.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

// A namespace of its own: the suite is compiled in unity batches, where other files' helpers share the
// anonymous namespace.
namespace {
namespace tls_gateway {

namespace json = boost::json;
using namespace duet;
using namespace duet::test;
using namespace duet::test::gateway;
using duet::test::client_side::sync_client;

// A certificate for the loopback names a URL of ours carries.
issue_options loopback(std::string name) {
    return {.name = std::move(name), .dns = {"localhost"}, .ips = {"127.0.0.1"}};
}

// `duet serve --port 0` on HTTPS with `cert`; its URL is the first line it prints.
class https_upstream {
public:
    explicit https_upstream(cert_files const& cert)
        : child_({DUET_BINARY, "serve", "--port", "0", "--tls-cert", cert.cert, "--tls-key", cert.key},
                 child_process::input::null),
          url_(first_stdout_line(child_)) {
        if (url_.empty())
            ADD_FAILURE() << "the upstream printed no URL; its stderr:\n" << child_.stderr_text();
    }

    [[nodiscard]] std::string const& url() const noexcept { return url_; }

private:
    child_process child_;
    std::string url_;
};

class TlsGateway : public ::testing::Test {
protected:
    temp_dir dir_;
    test_pki pki_{dir_.path()};
    cert_files upstream_cert_ = pki_.issue(loopback("upstream"));
    cert_files gateway_cert_ = pki_.issue(loopback("gateway"));
    https_upstream upstream_{upstream_cert_};

    // The gateway's flags for serving HTTPS with its own certificate.
    std::vector<std::string> serving_https() const {
        return {"--tls-cert", gateway_cert_.cert, "--tls-key", gateway_cert_.key};
    }

    // Calls echo through the gateway at `url` with Duet's client in `mode`, trusting the test CA; the era
    // it reached.
    protocol::era call_echo_through(std::string const& url, client::connect_mode mode) {
        sync_client c;
        client::http_target target{url, {}};
        target.tls.ca_file = pki_.ca_file();
        client::client_options options;
        options.mode = mode;
        options.verdicts = nullptr;
        auto r = c.connect(target, options);
        EXPECT_TRUE(r) << to_string(mode) << ": " << r.error().to_string();
        if (!r)
            return protocol::era::legacy;
        EXPECT_EQ(c->server_info().at("name"), "duet-demo") << to_string(mode);
        auto const text = std::string("through two TLS hops, ") + std::string(to_string(mode));
        auto echo = c.run(c->async_call_tool("echo", json::object{{"text", text}}));
        EXPECT_TRUE(echo) << to_string(mode) << ": " << echo.error().to_string();
        if (echo) {
            EXPECT_EQ(first_text(*echo), text) << to_string(mode);
        }
        return c->era();
    }
};

TEST_F(TlsGateway, ServesAnHttpsUpstreamOverHttpsToClientsOfBothEras) {
    ASSERT_TRUE(upstream_.url().starts_with("https://127.0.0.1:")) << upstream_.url();
    auto extra = serving_https();
    extra.insert(extra.end(), {"--cacert", pki_.ca_file()});
    gateway_process gw(upstream_.url(), extra);
    ASSERT_TRUE(gw.url().starts_with("https://127.0.0.1:")) << gw.url() << "\n" << gw.stderr_text();

    EXPECT_EQ(call_echo_through(gw.url(), client::connect_mode::legacy), protocol::era::legacy);
    EXPECT_TRUE(gw.wait_for_log("tools/call legacy(")) << gw.stderr_text();
    EXPECT_EQ(call_echo_through(gw.url(), client::connect_mode::modern), protocol::era::modern);
    EXPECT_TRUE(gw.wait_for_log("tools/call modern(")) << gw.stderr_text();
    // Both reached the upstream, which speaks modern, over its https:// URL.
    EXPECT_TRUE(gw.wait_for_log("-> modern(2026-07-28) upstream=")) << gw.stderr_text();
    EXPECT_EQ(gw.stop(), 0) << gw.stderr_text();
}

TEST_F(TlsGateway, APerUpstreamCacertTrustsThatUpstream) {
    ASSERT_FALSE(upstream_.url().empty());
    auto args = serving_https();
    args.insert(args.end(), {"--upstream", "up=" + upstream_.url(), "--cacert", "up=" + pki_.ca_file()});
    gateway_process gw(args);
    ASSERT_FALSE(gw.url().empty());
    ASSERT_TRUE(gw.url().ends_with("/mcp/up")) << gw.url();
    EXPECT_EQ(call_echo_through(gw.url(), client::connect_mode::auto_detect), protocol::era::modern);
}

TEST_F(TlsGateway, RefusesAnUpstreamWhoseCaItWasNotGiven) {
    ASSERT_FALSE(upstream_.url().empty());
    child_process gw({DUET_BINARY, "gateway", "--port", "0", "--upstream", upstream_.url()},
                     child_process::input::null);
    EXPECT_EQ(gw.wait_exit(wait_limit), 3) << gw.stderr_text();
    auto const said = gw.stderr_text();
    EXPECT_NE(said.find("cannot reach the upstream " + upstream_.url()), std::string::npos) << said;
    EXPECT_NE(said.find("certificate verify failed"), std::string::npos) << said;
}

TEST_F(TlsGateway, ACacertForAnUnknownUpstreamIsAUsageErrorNamingIt) {
    ASSERT_FALSE(upstream_.url().empty());
    // Were the name not checked, the gateway would reach for the upstream, trusting nothing: exit 3.
    child_process gw({DUET_BINARY, "gateway", "--port", "0", "--upstream", "up=" + upstream_.url(),
                      "--cacert", "NOPE=" + pki_.ca_file()},
                     child_process::input::null);
    EXPECT_EQ(gw.wait_exit(wait_limit), 2) << gw.stderr_text();
    EXPECT_NE(gw.stderr_text().find("no upstream is named \"NOPE\""), std::string::npos) << gw.stderr_text();
}

} // namespace tls_gateway
} // namespace
