// The client library over https:// against Duet's HTTPS server in-process (http/tls_support.hpp), with the
// certificates each test makes (support/test_certs.hpp): the server's certificate verified by default, with
// SNI and the host-name check (DNS names and IP SANs); every refusal errc::tls_failed with its reason in
// words; a CA file trusted besides the system store; one's own ssl::context; insecure (and its warning, every
// connection); client certificates for mutual TLS; keep-alive on one handshake; a resumed session when it
// reconnects.
#include "client/sync_client.hpp"
#include "http/tls_support.hpp"
#include "support/files.hpp"
#include "support/test_certs.hpp"
#include "support/wait.hpp"

#include <boost/asio/ssl/context.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace duet::test::https_client_suite {

using namespace std::chrono_literals;
using client_side::sync_client;
using tls_side::https_options;
using tls_side::https_server;

struct client_pki {
    temp_dir tmp;
    test_pki pki{tmp.path()};
    cert_files server = pki.issue({.name = "server", .dns = {"localhost"}, .ips = {"127.0.0.1"}});
};

client::client_options modern() {
    client::client_options o;
    o.mode = client::connect_mode::modern;
    o.verdicts = nullptr;
    return o;
}

client::http_target target(std::string url, tls::client_config tls = {}) {
    client::http_target t;
    t.url = std::move(url);
    t.tls = std::move(tls);
    return t;
}

tls::client_config trusting(std::string const& ca_file) {
    tls::client_config c;
    c.ca_file = ca_file;
    return c;
}

// Connects and calls `echo`: the text it echoed, or the error in words.
std::string echo_over(sync_client& c, client::http_target t, std::string const& text = "hello") {
    auto r = c.connect(std::move(t), modern());
    if (!r)
        return "connect: " + r.error().to_string();
    auto called = c.run(c->async_call_tool("echo", {{"text", text}}));
    if (!called)
        return "call: " + called.error().to_string();
    return std::string(called->at("content").at(0).at("text").as_string());
}

// The connection fails with errc::tls_failed, its message ending in `reason`.
void expect_tls_failure(client::result<std::shared_ptr<client::client>> const& r, std::string const& reason) {
    ASSERT_FALSE(r) << "connected to a server whose certificate should have been refused";
    EXPECT_EQ(r.error().code, client::errc::tls_failed) << r.error().to_string();
    EXPECT_TRUE(r.error().message.ends_with(": " + reason)) << r.error().message;
}

// What this process writes to stderr (fd 2) while it lives, kept in a file of the test's temporary directory.
class stderr_capture {
public:
    explicit stderr_capture(std::filesystem::path const& dir) : path_((dir / "stderr.txt").string()) {
        std::fflush(stderr);
        saved_ = ::dup(2);
        int const fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ::dup2(fd, 2);
        ::close(fd);
    }
    ~stderr_capture() { finish(); }
    stderr_capture(stderr_capture const&) = delete;
    stderr_capture& operator=(stderr_capture const&) = delete;

    /// Restores stderr; what was written meanwhile.
    std::string finish() {
        if (saved_ >= 0) {
            std::fflush(stderr);
            ::dup2(saved_, 2);
            ::close(saved_);
            saved_ = -1;
        }
        return read_file(path_);
    }

private:
    std::string path_;
    int saved_ = -1;
};

std::size_t count_of(std::string const& text, std::string const& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size()))
        ++n;
    return n;
}

// ---- verification --------------------------------------------------------------------------------------

TEST(HttpsClient, TrustsTheServerThroughTheCaFile) {
    client_pki p;
    https_server s(https_options(p.server));
    sync_client c;
    EXPECT_EQ(echo_over(c, target(s.url(), trusting(p.pki.ca_file()))), "hello");
    EXPECT_EQ(s.http().tls_handshakes().completed, 1u);
}

TEST(HttpsClient, UntrustedCaFailsWithItsReason) {
    client_pki p;
    https_server s(https_options(p.server));
    sync_client c;
    // The system store only: the test CA is in none.
    auto const r = c.connect(target(s.url()), modern());
    expect_tls_failure(r, "certificate verify failed: unable to get local issuer certificate");
    EXPECT_TRUE(r.error().message.starts_with("cannot reach " + s.url() + ": ")) << r.error().message;
}

TEST(HttpsClient, ExpiredServerCertificateFailsWithItsReason) {
    client_pki p;
    auto const expired = p.pki.issue(
        {.name = "expired", .ips = {"127.0.0.1"}, .not_before = -std::chrono::hours(48), .not_after = -1h});
    https_server s(https_options(expired));
    sync_client c;
    expect_tls_failure(c.connect(target(s.url(), trusting(p.pki.ca_file())), modern()),
                       "certificate verify failed: certificate has expired");
}

TEST(HttpsClient, SelfSignedServerCertificateFailsWithItsReason) {
    client_pki p;
    auto const own = p.pki.self_signed({.name = "self", .dns = {"localhost"}, .ips = {"127.0.0.1"}});
    https_server s(https_options(own));
    sync_client c;
    expect_tls_failure(c.connect(target(s.url(), trusting(p.pki.ca_file())), modern()),
                       "certificate verify failed: self-signed certificate");
}

TEST(HttpsClient, CertificateForAnotherHostFailsWithHostNameMismatch) {
    client_pki p;
    auto const elsewhere = p.pki.issue({.name = "elsewhere", .dns = {"a.example"}});
    https_server s(https_options(elsewhere));
    sync_client c;
    expect_tls_failure(c.connect(target(s.url(), trusting(p.pki.ca_file())), modern()),
                       "host name mismatch: cert is for a.example");
}

TEST(HttpsClient, HostNameIsCheckedAgainstTheDnsNames) {
    client_pki p;
    auto const named = p.pki.issue({.name = "named", .dns = {"localhost"}});
    https_server s(https_options(named));
    {
        sync_client c;
        EXPECT_EQ(echo_over(c, target(s.url_as("localhost"), trusting(p.pki.ca_file()))), "hello");
    }
    // The same server by its address: the certificate names no address.
    sync_client c;
    expect_tls_failure(c.connect(target(s.url(), trusting(p.pki.ca_file())), modern()),
                       "host name mismatch: cert is for localhost");
}

TEST(HttpsClient, IpAddressIsCheckedAgainstTheIpSans) {
    client_pki p;
    auto const numbered = p.pki.issue({.name = "numbered", .ips = {"127.0.0.1"}});
    https_server s(https_options(numbered));
    {
        sync_client c;
        EXPECT_EQ(echo_over(c, target(s.url(), trusting(p.pki.ca_file()))), "hello");
    }
    sync_client c;
    expect_tls_failure(c.connect(target(s.url_as("localhost"), trusting(p.pki.ca_file())), modern()),
                       "host name mismatch: cert is for 127.0.0.1");
}

TEST(HttpsClient, ChainThroughAnIntermediateVerifies) {
    client_pki p;
    auto const chained = p.pki.issue({.name = "chained", .ips = {"127.0.0.1"}, .via_intermediate = true});
    https_server s(https_options(chained));
    sync_client c;
    EXPECT_EQ(echo_over(c, target(s.url(), trusting(p.pki.ca_file()))), "hello");
}

TEST(HttpsClient, HttpsToAPlainHttpServerIsATlsFailure) {
    client_pki p;
    https_server plain(transport::http_options{});
    auto url = plain.url();
    url.replace(0, 4, "https");
    sync_client c;
    auto const r = c.connect(target(url, trusting(p.pki.ca_file())), modern());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, client::errc::tls_failed) << r.error().to_string();
    // Duet's plain server takes the ClientHello for malformed HTTP and answers 400 in plain text, which the
    // client's TLS reads as a record of no TLS version.
    EXPECT_TRUE(r.error().message.ends_with(": TLS handshake failed: wrong version number"))
        << r.error().message;
}

// ---- SNI -----------------------------------------------------------------------------------------------

// A bare TLS server on 127.0.0.1 that records the server name (SNI) of each client that completes a
// handshake, then closes the connection.
class sni_recorder {
public:
    explicit sni_recorder(cert_files const& cert) {
        std::signal(SIGPIPE, SIG_IGN); // OpenSSL writes to the socket itself, without MSG_NOSIGNAL
        ctx_.reset(SSL_CTX_new(TLS_server_method()));
        if (!ctx_ || SSL_CTX_use_certificate_chain_file(ctx_.get(), cert.cert.c_str()) != 1 ||
            SSL_CTX_use_PrivateKey_file(ctx_.get(), cert.key.c_str(), SSL_FILETYPE_PEM) != 1)
            throw openssl::error("sni_recorder context");
        listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in at{};
        at.sin_family = AF_INET;
        at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof at;
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0 ||
            ::listen(listener_, 8) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&at), &len) != 0)
            throw std::runtime_error(std::string("sni_recorder listen: ") + std::strerror(errno));
        port_ = ntohs(at.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~sni_recorder() {
        stop_ = true;
        thread_.join();
        ::close(listener_);
    }
    sni_recorder(sni_recorder const&) = delete;
    sni_recorder& operator=(sni_recorder const&) = delete;

    [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
    /// The names sent so far, one per completed handshake ("" for a handshake without SNI).
    [[nodiscard]] std::vector<std::string> names() const {
        std::lock_guard lock(mutex_);
        return names_;
    }

private:
    void serve() {
        while (!stop_) {
            pollfd p{listener_, POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0)
                continue;
            int const fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0)
                continue;
            timeval limit{5, 0};
            ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
            openssl::handle<SSL, SSL_free> ssl(SSL_new(ctx_.get()));
            SSL_set_fd(ssl.get(), fd);
            if (SSL_accept(ssl.get()) == 1) {
                char const* name = SSL_get_servername(ssl.get(), TLSEXT_NAMETYPE_host_name);
                std::lock_guard lock(mutex_);
                names_.emplace_back(name ? name : "");
            }
            ERR_clear_error();
            ::close(fd);
        }
    }

    openssl::handle<SSL_CTX, SSL_CTX_free> ctx_;
    int listener_ = -1;
    std::uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    mutable std::mutex mutex_;
    std::vector<std::string> names_;
    std::thread thread_;
};

TEST(HttpsClient, SendsTheHostNameBySniAndNoSniForAnAddress) {
    client_pki p;
    sni_recorder r(p.server);
    auto const url = [&](std::string const& host) {
        return "https://" + host + ":" + std::to_string(r.port()) + "/mcp";
    };
    {
        sync_client c;
        EXPECT_FALSE(c.connect(target(url("localhost"), trusting(p.pki.ca_file())), modern()));
    }
    ASSERT_TRUE(wait_until([&] { return !r.names().empty(); }, tls_side::tls_wait));
    EXPECT_EQ(r.names().front(), "localhost");
    auto const before = r.names().size();
    {
        sync_client c;
        EXPECT_FALSE(c.connect(target(url("127.0.0.1"), trusting(p.pki.ca_file())), modern()));
    }
    ASSERT_TRUE(wait_until([&] { return r.names().size() > before; }, tls_side::tls_wait));
    EXPECT_EQ(r.names().at(before), "") << "an IP address is never sent as SNI (RFC 6066)";
}

// ---- insecure, one's own context -----------------------------------------------------------------------

TEST(HttpsClient, InsecureConnectsToAnUntrustedServerAndWarnsOnEveryConnection) {
    client_pki p;
    auto const own = p.pki.self_signed({.name = "self", .dns = {"b.example"}});
    https_server s(https_options(own));
    tls::client_config insecure;
    insecure.insecure = true;
    stderr_capture err(p.tmp.path());
    for (int i = 0; i < 2; ++i) {
        sync_client c;
        EXPECT_EQ(echo_over(c, target(s.url(), insecure)), "hello");
    }
    auto const text = err.finish();
    EXPECT_EQ(count_of(text, "duet: warning: TLS to 127.0.0.1 is not verified (--insecure): any server can "
                             "pose as it\n"),
              2u)
        << text;
    EXPECT_EQ(s.http().tls_handshakes().completed, 2u);
}

TEST(HttpsClient, OwnSslContextIsUsedInsteadOfTheOtherFields) {
    client_pki p;
    https_server s(https_options(p.server));
    {
        auto own = std::make_shared<boost::asio::ssl::context>(boost::asio::ssl::context::tls_client);
        own->load_verify_file(p.pki.ca_file());
        own->set_verify_mode(boost::asio::ssl::verify_peer);
        tls::client_config config;
        config.context = own;
        sync_client c;
        EXPECT_EQ(echo_over(c, target(s.url(), config)), "hello");
    }
    // A context that trusts nothing: the CA file beside it is not read.
    auto bare = std::make_shared<boost::asio::ssl::context>(boost::asio::ssl::context::tls_client);
    bare->set_verify_mode(boost::asio::ssl::verify_peer);
    auto config = trusting(p.pki.ca_file());
    config.context = bare;
    sync_client c;
    expect_tls_failure(c.connect(target(s.url(), config), modern()),
                       "certificate verify failed: unable to get local issuer certificate");
}

TEST(HttpsClient, OwnSslContextStillGetsTheHostNameCheck) {
    client_pki p;
    auto const elsewhere = p.pki.issue({.name = "elsewhere", .dns = {"a.example"}});
    https_server s(https_options(elsewhere));
    auto own = std::make_shared<boost::asio::ssl::context>(boost::asio::ssl::context::tls_client);
    own->load_verify_file(p.pki.ca_file());
    own->set_verify_mode(boost::asio::ssl::verify_peer);
    tls::client_config config;
    config.context = own;
    sync_client c;
    expect_tls_failure(c.connect(target(s.url(), config), modern()),
                       "host name mismatch: cert is for a.example");
}

// ---- mutual TLS ----------------------------------------------------------------------------------------

struct mutual_client_pki : client_pki {
    temp_dir other_tmp;
    test_pki other{other_tmp.path(), "Other CA"};
    cert_files alice = pki.issue({.name = "alice", .client = true});
};

TEST(HttpsClient, MutualTlsServerRefusesAClientWithoutCertificate) {
    mutual_client_pki p;
    https_server s(https_options(p.server, p.pki.ca_file()));
    sync_client c;
    // TLS 1.3: the refusal is an alert after the client's side of the handshake, still a TLS failure.
    auto const r = c.connect(target(s.url(), trusting(p.pki.ca_file())), modern());
    expect_tls_failure(r, "TLS handshake failed: tlsv13 alert certificate required");
    EXPECT_TRUE(wait_until([&] { return s.http().tls_handshakes().failed >= 1; }, tls_side::tls_wait));
    EXPECT_EQ(s.http().tls_handshakes().completed, 0u);
}

TEST(HttpsClient, MutualTlsServerRefusesACertificateFromAnotherCa) {
    mutual_client_pki p;
    https_server s(https_options(p.server, p.pki.ca_file()));
    auto const mallory = p.other.issue({.name = "mallory", .client = true});
    auto config = trusting(p.pki.ca_file());
    config.client_cert_file = mallory.cert;
    config.client_key_file = mallory.key;
    sync_client c;
    auto const r = c.connect(target(s.url(), config), modern());
    expect_tls_failure(r, "TLS handshake failed: tlsv1 alert unknown ca");
    EXPECT_TRUE(wait_until([&] { return s.http().tls_handshakes().failed >= 1; }, tls_side::tls_wait));
    EXPECT_EQ(s.http().tls_handshakes().completed, 0u);
}

TEST(HttpsClient, MutualTlsClientCertificateIsAcceptedAndTheHandlerSeesItsSubject) {
    mutual_client_pki p;
    https_server s(https_options(p.server, p.pki.ca_file()));
    auto config = trusting(p.pki.ca_file());
    config.client_cert_file = p.alice.cert;
    config.client_key_file = p.alice.key;
    sync_client c;
    ASSERT_TRUE(c.connect(target(s.url(), config), modern()));
    auto const r = c.run(c->async_call_tool("whoami", {}));
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(r->at("content").at(0).at("text"), "CN=alice");
}

TEST(HttpsClient, ClientCertificateWithoutKeyIsAUsageError) {
    mutual_client_pki p;
    https_server s(https_options(p.server, p.pki.ca_file()));
    auto config = trusting(p.pki.ca_file());
    config.client_cert_file = p.alice.cert;
    sync_client c;
    auto const r = c.connect(target(s.url(), config), modern());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, client::errc::usage);
    EXPECT_EQ(r.error().message, "TLS: a client certificate needs its key, and a key its certificate");
    EXPECT_EQ(s.http().tls_handshakes().completed + s.http().tls_handshakes().failed, 0u)
        << "nothing should have been sent";
}

// ---- connections ---------------------------------------------------------------------------------------

TEST(HttpsClient, ManyCallsOnOneClientCostOneHandshake) {
    client_pki p;
    https_server s(https_options(p.server));
    sync_client c;
    ASSERT_TRUE(c.connect(target(s.url(), trusting(p.pki.ca_file())), modern()));
    for (int i = 0; i < 10; ++i) {
        auto const text = "call " + std::to_string(i);
        auto const r = c.run(c->async_call_tool("echo", {{"text", text}}));
        ASSERT_TRUE(r) << r.error().to_string();
        EXPECT_EQ(r->at("content").at(0).at("text").as_string(), text);
    }
    EXPECT_EQ(s.http().tls_handshakes().completed, 1u);
    EXPECT_EQ(s.http().tls_handshakes().failed, 0u);
}

TEST(HttpsClient, ReconnectAfterTheServerClosedTheIdleConnectionResumesTheSession) {
    client_pki p;
    auto options = https_options(p.server);
    options.idle_timeout = 200ms;
    https_server s(options);
    sync_client c;
    ASSERT_TRUE(c.connect(target(s.url(), trusting(p.pki.ca_file())), modern()));
    ASSERT_TRUE(c.run(c->async_call_tool("echo", {{"text", "first"}})));
    ASSERT_EQ(s.http().tls_handshakes().completed, 1u);
    // Once the server has closed the idle connection, a call connects again. Calls are further apart than
    // the idle timeout, or they would keep the connection open.
    int calls = 0;
    ASSERT_TRUE(wait_until(
        [&] {
            ++calls;
            auto const r = c.run(c->async_call_tool("echo", {{"text", "again"}}));
            EXPECT_TRUE(r) << r.error().to_string();
            return s.http().tls_handshakes().completed >= 2;
        },
        tls_side::tls_wait, 2 * options.idle_timeout))
        << "the client never connected again";
    auto const counts = s.http().tls_handshakes();
    EXPECT_GE(counts.resumed, 1u) << "after " << calls << " calls, " << counts.completed << " handshakes";
    EXPECT_EQ(counts.failed, 0u);
}

} // namespace duet::test::https_client_suite
