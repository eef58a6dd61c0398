// `duet serve --tls-cert ... --tls-key ...` as a process, reached by curl: a client that is neither Duet's
// nor Node's, with OpenSSL's verification against a CA the test makes (support/test_certs.hpp) and nothing
// else trusted. A modern server/discover and a legacy session (initialize, notifications/initialized,
// tools/list, tools/call) work over HTTPS as they do over HTTP; without the CA curl refuses the server's
// certificate; plain HTTP sent to the HTTPS port gets a 400 that says so.
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/child_process.hpp"
#include "support/test_certs.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

// A namespace of its own: the suite is compiled in unity batches, where other files' helpers share the
// anonymous namespace.
namespace {
namespace https_curl {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;

// curl on PATH (scripts/bootstrap installs it); empty when there is none.
std::string curl_binary() {
    char const* path = std::getenv("PATH");
    std::string_view rest = path ? path : "/usr/bin:/bin";
    while (!rest.empty()) {
        auto const colon = rest.find(':');
        auto const dir = rest.substr(0, colon);
        auto const candidate = std::filesystem::path(std::string(dir)) / "curl";
        if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0)
            return candidate.string();
        if (colon == std::string_view::npos)
            break;
        rest.remove_prefix(colon + 1);
    }
    return {};
}

struct curl_run {
    int exit = -1;    ///< curl's exit status (60: the peer's certificate was refused)
    reply response;   ///< parsed from `curl --include`: status, headers, body
    std::string said; ///< curl's own words (its stderr)
};

// The response curl printed with --include: the status line, the header fields, a blank line, the body.
reply parse_included(std::string const& out) {
    reply r;
    auto const end = out.find("\r\n\r\n");
    if (end == std::string::npos) {
        ADD_FAILURE() << "curl printed no response head: " << out;
        return r;
    }
    std::string_view head(out.data(), end);
    r.body = out.substr(end + 4);
    auto line_end = head.find("\r\n");
    auto const status_line = head.substr(0, line_end);
    auto const sp = status_line.find(' ');
    if (!status_line.starts_with("HTTP/") || sp == std::string_view::npos) {
        ADD_FAILURE() << "not a status line: " << status_line;
        return r;
    }
    r.status = static_cast<unsigned>(std::atoi(std::string(status_line.substr(sp + 1, 3)).c_str()));
    while (line_end != std::string_view::npos) {
        head.remove_prefix(line_end + 2);
        line_end = head.find("\r\n");
        auto const field = head.substr(0, line_end);
        auto const colon = field.find(':');
        if (colon == std::string_view::npos)
            continue;
        auto value = field.substr(colon + 1);
        while (!value.empty() && value.front() == ' ')
            value.remove_prefix(1);
        r.headers.push_back({std::string(field.substr(0, colon)), std::string(value)});
    }
    return r;
}

// Runs curl with `args` after the options every run shares: no ~/.curlrc, no proxy (loopback only), quiet
// but for errors, the response head included in what it prints.
curl_run run_curl(std::vector<std::string> const& args) {
    curl_run run;
    auto const curl = curl_binary();
    if (curl.empty()) {
        ADD_FAILURE() << "curl is not installed (scripts/bootstrap installs it)";
        return run;
    }
    std::vector<std::string> argv{curl,           "-q",        "--noproxy",  "*", "--silent",
                                  "--show-error", "--include", "--max-time", "60"};
    argv.insert(argv.end(), args.begin(), args.end());
    child_process child(argv, child_process::input::null);
    std::string out;
    auto const deadline = std::chrono::steady_clock::now() + http_wait;
    while (child.running() && std::chrono::steady_clock::now() < deadline) {
        pollfd p{child.out(), POLLIN, 0};
        if (::poll(&p, 1, poll_ms_until(deadline)) <= 0)
            continue;
        char buf[4096];
        auto const got = ::read(child.out(), buf, sizeof buf);
        if (got <= 0)
            break;
        out.append(buf, static_cast<std::size_t>(got));
    }
    run.exit = child.wait_exit(http_wait);
    run.said = child.stderr_text();
    if (run.exit == 0)
        run.response = parse_included(out);
    return run;
}

// curl's arguments for a POST of `message` with the headers the era wants.
std::vector<std::string> post_args(json::value const& message, std::vector<header_field> const& headers) {
    std::vector<std::string> a{"--request", "POST",
                               "--header",  "Content-Type: application/json",
                               "--header",  "Accept: application/json, text/event-stream"};
    for (auto const& h : headers) {
        a.push_back("--header");
        a.push_back(h.name + ": " + h.value);
    }
    a.push_back("--data-binary");
    a.push_back(json::serialize(message));
    return a;
}

// `duet serve` on HTTPS with a certificate for 127.0.0.1 issued by a CA made for the test.
class HttpsCurl : public ::testing::Test {
protected:
    temp_dir dir_;
    test_pki pki_{dir_.path()};
    cert_files cert_ = pki_.issue({.name = "duet-serve", .dns = {"localhost"}, .ips = {"127.0.0.1"}});
    child_server server_{{"--tls-cert", cert_.cert, "--tls-key", cert_.key}};

    // POSTs `message` through curl trusting the test CA; a test failure when curl itself fails.
    reply post(json::value const& message, std::vector<header_field> const& headers = {}) {
        auto args = post_args(message, headers);
        args.insert(args.end(), {"--cacert", pki_.ca_file(), server_.url()});
        auto const run = run_curl(args);
        EXPECT_EQ(run.exit, 0) << "curl failed: " << run.said;
        return run.response;
    }
};

bool json_reply(reply const& r) {
    auto type = r.header("Content-Type").value_or("");
    std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::tolower(c); });
    return type.starts_with("application/json");
}

TEST_F(HttpsCurl, ModernDiscoverIsAnsweredWithJson) {
    ASSERT_TRUE(server_.url().starts_with("https://127.0.0.1:")) << server_.url();
    auto const discover = modern_request(1, "server/discover");
    auto const r = post(discover, modern_headers(discover));
    EXPECT_EQ(r.status, 200u) << r.body;
    EXPECT_TRUE(json_reply(r)) << r.header("Content-Type").value_or("(no Content-Type)");
    auto const answer = r.json();
    expect_modern_result(answer, /*cacheable=*/true);
    EXPECT_TRUE(result_of(answer).at("capabilities").as_object().contains("tools")) << answer;
}

TEST_F(HttpsCurl, LegacySessionInitializesListsAndCallsTools) {
    ASSERT_TRUE(server_.url().starts_with("https://127.0.0.1:")) << server_.url();
    auto const init = post(initialize_request(1, "2025-11-25"));
    ASSERT_EQ(init.status, 200u) << init.body;
    auto const session = init.header("Mcp-Session-Id");
    ASSERT_TRUE(session) << "initialize minted no Mcp-Session-Id";
    auto const messages = init.messages();
    ASSERT_FALSE(messages.empty()) << init.body;
    EXPECT_EQ(result_of(messages.back()).at("protocolVersion"), "2025-11-25") << init.body;
    std::vector<header_field> const in_session{{"Mcp-Session-Id", *session},
                                               {"MCP-Protocol-Version", "2025-11-25"}};

    auto const initialized = post(initialized_notification(), in_session);
    EXPECT_EQ(initialized.status, 202u) << initialized.body;

    auto const list = post(legacy_request(2, "tools/list"), in_session);
    ASSERT_EQ(list.status, 200u) << list.body;
    auto const listed = list.messages();
    ASSERT_FALSE(listed.empty()) << list.body;
    expect_legacy_result(listed.back());
    auto const tools = result_of(listed.back());
    std::vector<std::string> names;
    for (auto const& t : tools.at("tools").as_array())
        names.emplace_back(t.at("name").as_string());
    EXPECT_NE(std::find(names.begin(), names.end(), "echo"), names.end()) << list.body;

    auto const call =
        post(legacy_request(3, "tools/call", call_params("echo", {{"text", "over TLS"}})), in_session);
    ASSERT_EQ(call.status, 200u) << call.body;
    auto const called = call.messages();
    ASSERT_FALSE(called.empty()) << call.body;
    EXPECT_EQ(first_text(result_of(called.back())), "over TLS") << call.body;
}

// The CA is the test's own, in no system store: curl trusting only the system's refuses the certificate
// (exit 60, "SSL certificate problem"), so the tests above did verify it.
TEST_F(HttpsCurl, CurlWithoutTheCaRefusesTheCertificate) {
    ASSERT_TRUE(server_.url().starts_with("https://")) << server_.url();
    auto const discover = modern_request(1, "server/discover");
    auto args = post_args(discover, modern_headers(discover));
    args.push_back(server_.url());
    auto const run = run_curl(args);
    EXPECT_EQ(run.exit, 60) << run.said;
    EXPECT_NE(run.said.find("SSL certificate problem"), std::string::npos) << run.said;
}

TEST_F(HttpsCurl, PlainHttpToTheHttpsPortIsABadRequestInWords) {
    ASSERT_TRUE(server_.url().starts_with("https://")) << server_.url();
    auto const plain = "http://" + server_.url().substr(std::string_view("https://").size());
    auto const discover = modern_request(1, "server/discover");
    auto args = post_args(discover, modern_headers(discover));
    args.push_back(plain);
    auto const run = run_curl(args);
    ASSERT_EQ(run.exit, 0) << run.said;
    EXPECT_EQ(run.response.status, 400u) << run.response.body;
    EXPECT_NE(run.response.body.find("speaks HTTPS only"), std::string::npos) << run.response.body;
}

} // namespace https_curl
} // namespace
