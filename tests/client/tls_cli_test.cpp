// HTTPS through the `duet` binary (DUET_BINARY) as scripts use it: `duet serve --tls-cert --tls-key` prints
// its https:// URL first and refuses unusable files with exit 2 and the reason; SIGHUP reloads the files
// (new connections see the new certificate) or, when they are broken, says so and keeps the old one; the
// client commands trust a CA with --cacert, exit 3 with the verification's reason without it, and connect
// with --insecure while warning.
#include "http/tls_support.hpp"
#include "support/child_process.hpp"
#include "support/test_certs.hpp"
#include "support/wait.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>

namespace duet::test::https_cli_suite {

using namespace std::chrono_literals;
using tls_side::tls_probe;

constexpr auto process_wait = std::chrono::seconds(60);

struct cli_outcome {
    int code = -1;
    std::string out;
    std::string err;
};

// Runs DUET_BINARY with `args`, stdin from /dev/null, to its exit.
cli_outcome run_duet(std::vector<std::string> args) {
    args.insert(args.begin(), DUET_BINARY);
    child_process child(std::move(args), child_process::input::null);
    cli_outcome o;
    auto const deadline = std::chrono::steady_clock::now() + process_wait;
    while (child.running() && std::chrono::steady_clock::now() < deadline) {
        pollfd p{child.out(), POLLIN, 0};
        if (::poll(&p, 1, poll_ms_until(deadline)) <= 0)
            continue;
        char buf[4096];
        auto const got = ::read(child.out(), buf, sizeof buf);
        if (got <= 0)
            break;
        o.out.append(buf, static_cast<std::size_t>(got));
    }
    o.code = child.wait_exit(deadline);
    o.err = child.stderr_text();
    return o;
}

// `duet serve --port 0 --tls-cert CERT --tls-key KEY` and the URL it printed first.
class https_serve {
public:
    explicit https_serve(cert_files const& files, std::vector<std::string> more = {})
        : child_(serve_args(files, std::move(more)), child_process::input::null) {
        auto const deadline = std::chrono::steady_clock::now() + process_wait;
        while (first_line_.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
            pollfd p{child_.out(), POLLIN, 0};
            if (::poll(&p, 1, poll_ms_until(deadline)) <= 0)
                continue;
            char buf[256];
            auto const got = ::read(child_.out(), buf, sizeof buf);
            if (got <= 0)
                break;
            first_line_.append(buf, static_cast<std::size_t>(got));
        }
        if (auto const nl = first_line_.find('\n'); nl != std::string::npos)
            first_line_.erase(nl);
        else
            ADD_FAILURE() << "duet serve printed no URL; its stderr:\n" << child_.stderr_text();
        auto const colon = first_line_.rfind(':');
        if (colon != std::string::npos)
            port_ = static_cast<std::uint16_t>(std::stoul(first_line_.substr(colon + 1)));
    }

    [[nodiscard]] std::string const& url() const noexcept { return first_line_; }
    [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
    [[nodiscard]] child_process& process() noexcept { return child_; }

private:
    static std::vector<std::string> serve_args(cert_files const& files, std::vector<std::string> more) {
        std::vector<std::string> args{DUET_BINARY,  "serve",    "--port",    "0",
                                      "--tls-cert", files.cert, "--tls-key", files.key};
        args.insert(args.end(), more.begin(), more.end());
        return args;
    }

    child_process child_;
    std::string first_line_;
    std::uint16_t port_ = 0;
};

struct cli_pki {
    temp_dir tmp;
    test_pki pki{tmp.path()};
    cert_files server = pki.issue({.name = "server", .dns = {"localhost"}, .ips = {"127.0.0.1"}});
};

// The serial of the certificate a new connection to `port` is shown; empty (and a failure) when none.
std::string served_serial(std::uint16_t port, std::string const& ca_file) {
    tls_side::probe_options o;
    o.ca_file = ca_file;
    tls_probe c(port, o);
    EXPECT_TRUE(c.ok()) << c.error();
    return c.peer_serial();
}

TEST(DuetServeTls, PrintsAnHttpsUrlFirst) {
    cli_pki p;
    https_serve s(p.server);
    EXPECT_TRUE(s.url().starts_with("https://127.0.0.1:")) << s.url();
    EXPECT_TRUE(s.url().ends_with("/mcp")) << s.url();
    EXPECT_EQ(served_serial(s.port(), p.pki.ca_file()), tls_side::serial_of_file(p.server.cert));
    s.process().signal(SIGTERM);
    EXPECT_EQ(s.process().wait_exit(process_wait), 0);
}

TEST(DuetCliTls, DiscoverTrustsTheCaGivenWithCacert) {
    cli_pki p;
    https_serve s(p.server);
    auto const o = run_duet({"discover", s.url(), "--cacert", p.pki.ca_file()});
    EXPECT_EQ(o.code, 0) << o.err;
    EXPECT_NE(o.out.find("duet-demo"), std::string::npos) << o.out;
}

TEST(DuetCliTls, DiscoverWithoutCacertExitsThreeWithTheVerificationReason) {
    cli_pki p;
    https_serve s(p.server);
    auto const o = run_duet({"discover", s.url()});
    EXPECT_EQ(o.code, 3) << o.err;
    EXPECT_NE(o.err.find("certificate verify failed: unable to get local issuer certificate"),
              std::string::npos)
        << o.err;
    EXPECT_NE(o.err.find("--cacert"), std::string::npos) << "the hint: " << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
}

TEST(DuetCliTls, ServerWantingAClientCertificateExitsThreeWithTheReasonAndAHint) {
    cli_pki p;
    https_serve s(p.server, {"--tls-client-ca", p.pki.ca_file()});
    auto const o = run_duet({"discover", s.url(), "--cacert", p.pki.ca_file()});
    EXPECT_EQ(o.code, 3) << o.err;
    EXPECT_NE(o.err.find("TLS handshake failed: tlsv13 alert certificate required"), std::string::npos)
        << o.err;
    EXPECT_NE(o.err.find("--client-cert"), std::string::npos) << "the hint: " << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
}

TEST(DuetCliTls, ClientCertificateIsAcceptedByAServerWantingOne) {
    cli_pki p;
    auto const alice = p.pki.issue({.name = "alice", .client = true});
    https_serve s(p.server, {"--tls-client-ca", p.pki.ca_file()});
    auto const o = run_duet({"discover", s.url(), "--cacert", p.pki.ca_file(), "--client-cert", alice.cert,
                             "--client-key", alice.key});
    EXPECT_EQ(o.code, 0) << o.err;
    EXPECT_NE(o.out.find("duet-demo"), std::string::npos) << o.out;
}

TEST(DuetCliTls, InsecureConnectsWithoutTheCaAndWarns) {
    cli_pki p;
    https_serve s(p.server);
    auto const o = run_duet({"discover", s.url(), "--insecure"});
    EXPECT_EQ(o.code, 0) << o.err;
    EXPECT_NE(o.out.find("duet-demo"), std::string::npos) << o.out;
    EXPECT_NE(o.err.find("duet: warning: TLS to 127.0.0.1 is not verified (--insecure)"), std::string::npos)
        << o.err;
}

TEST(DuetServeTls, MissingCertificateFileExitsTwoWithTheReason) {
    cli_pki p;
    auto const missing = (p.tmp.path() / "missing.crt").string();
    auto const o = run_duet({"serve", "--port", "0", "--tls-cert", missing, "--tls-key", p.server.key});
    EXPECT_EQ(o.code, 2);
    EXPECT_EQ(o.err, "duet serve: TLS: cannot read the certificate chain " + missing +
                         ": No such file or directory\n");
    EXPECT_TRUE(o.out.empty()) << "no URL: " << o.out;
}

TEST(DuetServeTls, KeyOfAnotherCertificateExitsTwoWithTheReason) {
    cli_pki p;
    auto const stranger = p.pki.issue({.name = "stranger"});
    auto const o = run_duet({"serve", "--port", "0", "--tls-cert", p.server.cert, "--tls-key", stranger.key});
    EXPECT_EQ(o.code, 2);
    EXPECT_EQ(o.err, "duet serve: TLS: the private key " + stranger.key + " does not match the certificate " +
                         p.server.cert + "\n");
    EXPECT_TRUE(o.out.empty()) << o.out;
}

TEST(DuetServeTls, CertificateWithoutKeyExitsTwoWithTheReason) {
    cli_pki p;
    auto const o = run_duet({"serve", "--port", "0", "--tls-cert", p.server.cert});
    EXPECT_EQ(o.code, 2);
    EXPECT_EQ(o.err, "duet serve: --tls-cert and --tls-key go together\n");
    EXPECT_TRUE(o.out.empty()) << o.out;
}

TEST(DuetServeTls, SighupReloadsTheRewrittenFilesForNewConnections) {
    cli_pki p;
    https_serve s(p.server);
    auto const old_serial = tls_side::serial_of_file(p.server.cert);
    // A connection served means run() has begun, and with it the SIGHUP handler.
    tls_probe before(s.port(), tls_side::probe_options{.ca_file = p.pki.ca_file()});
    ASSERT_TRUE(before.ok()) << before.error();
    ASSERT_EQ(before.peer_serial(), old_serial);

    auto const renewed = p.pki.issue({.name = "server", .dns = {"localhost"}, .ips = {"127.0.0.1"}});
    auto const new_serial = tls_side::serial_of_file(renewed.cert);
    ASSERT_NE(new_serial, old_serial);
    s.process().signal(SIGHUP);
    auto const said = "SIGHUP: TLS certificate and key reloaded from " + p.server.cert;
    ASSERT_TRUE(
        wait_until([&] { return s.process().stderr_text().find(said) != std::string::npos; }, process_wait))
        << s.process().stderr_text();
    EXPECT_EQ(served_serial(s.port(), p.pki.ca_file()), new_serial);
    // The connection made before the reload is still open and serves.
    auto const a =
        before.exchange(tls_side::mcp_post(s.port(), tls_side::call_request(1, "echo", {{"text", "x"}})));
    EXPECT_EQ(a.tool_text(), "x") << a.failure;
    s.process().signal(SIGTERM);
    EXPECT_EQ(s.process().wait_exit(process_wait), 0);
}

TEST(DuetServeTls, SighupWithBrokenFilesSaysSoAndKeepsTheOldCertificate) {
    cli_pki p;
    https_serve s(p.server);
    auto const old_serial = tls_side::serial_of_file(p.server.cert);
    ASSERT_EQ(served_serial(s.port(), p.pki.ca_file()), old_serial);

    auto const stranger = p.pki.issue({.name = "stranger"});
    std::filesystem::copy_file(stranger.key, p.server.key, std::filesystem::copy_options::overwrite_existing);
    s.process().signal(SIGHUP);
    auto const said =
        "SIGHUP: the TLS certificate was not reloaded, the previous one stays: the private key " +
        p.server.key + " does not match the certificate " + p.server.cert;
    ASSERT_TRUE(
        wait_until([&] { return s.process().stderr_text().find(said) != std::string::npos; }, process_wait))
        << s.process().stderr_text();
    EXPECT_EQ(served_serial(s.port(), p.pki.ca_file()), old_serial);
    s.process().signal(SIGTERM);
    EXPECT_EQ(s.process().wait_exit(process_wait), 0);
}

} // namespace duet::test::https_cli_suite
