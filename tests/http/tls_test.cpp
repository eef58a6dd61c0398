// The HTTPS server (http_options::tls) over real loopback sockets, driven by raw OpenSSL clients
// (http/tls_support.hpp) so that each test controls what the server is offered: TLS 1.2 and 1.3 only, ALPN
// http/1.1, no compression or renegotiation; mutual TLS with the verified subject reaching handlers;
// keep-alive on one handshake and resumed sessions, both counted; reload_tls() swapping the certificate
// without dropping open connections and refusing a bad file set; every failed handshake (plain HTTP, a bad
// client certificate, a client that sends nothing) counted and its connection closed; and a plain-HTTP server
// beside an HTTPS one in this process, unchanged. The certificates are made per test
// (support/test_certs.hpp).
#include "http/http_client.hpp"
#include "http/tls_support.hpp"
#include "support/test_certs.hpp"
#include "support/wait.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <filesystem>
#include <future>
#include <stdexcept>

namespace duet::test::https_server_suite {

using namespace std::chrono_literals;
using tls_side::call_request;
using tls_side::https_options;
using tls_side::https_server;
using tls_side::mcp_post;
using tls_side::probe_options;
using tls_side::tls_probe;

// A CA and a server certificate for 127.0.0.1 and localhost, in a directory of the test's own.
struct server_pki {
    temp_dir tmp;
    test_pki pki{tmp.path()};
    cert_files server = pki.issue({.name = "server", .dns = {"localhost"}, .ips = {"127.0.0.1"}});
};

probe_options trusting(std::string const& ca_file) {
    probe_options o;
    o.ca_file = ca_file;
    return o;
}

// ---- protocol versions, ALPN, compression, renegotiation ------------------------------------------------

TEST(HttpsServer, ServesMcpOverTls12AndOverTls13) {
    server_pki p;
    https_server s(https_options(p.server));
    EXPECT_EQ(s.url().rfind("https://127.0.0.1:", 0), 0u) << s.url();
    for (int const version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
        auto o = trusting(p.pki.ca_file());
        o.min_version = version;
        o.max_version = version;
        tls_probe c(s.port(), o);
        ASSERT_TRUE(c.ok()) << SSL_get_version(c.ssl()) << ": " << c.error();
        EXPECT_EQ(SSL_version(c.ssl()), version);
        auto const a = c.exchange(mcp_post(s.port(), call_request(1, "echo", {{"text", "over tls"}})));
        EXPECT_EQ(a.status, 200u) << a.failure << a.head;
        EXPECT_EQ(a.tool_text(), "over tls") << a.body;
    }
    EXPECT_EQ(s.http().tls_handshakes().completed, 2u);
    EXPECT_EQ(s.http().tls_handshakes().failed, 0u);
}

TEST(HttpsServer, RefusesTls11WithAProtocolVersionAlert) {
    server_pki p;
    https_server s(https_options(p.server));
    auto o = trusting(p.pki.ca_file());
    o.min_version = TLS1_1_VERSION;
    o.max_version = TLS1_1_VERSION;
    o.allow_legacy_protocols = true; // else this client would not even offer TLS 1.1
    tls_probe c(s.port(), o);
    EXPECT_FALSE(c.ok());
    // The server's alert, not this client's refusal to speak TLS 1.1.
    EXPECT_EQ(c.error(), "tlsv1 alert protocol version");
    EXPECT_TRUE(wait_until([&] { return s.http().tls_handshakes().failed == 1; }, tls_side::tls_wait));
    EXPECT_EQ(s.http().tls_handshakes().completed, 0u);
}

TEST(HttpsServer, AlpnOfferingOnlyH2FailsTheHandshake) {
    server_pki p;
    https_server s(https_options(p.server));
    auto o = trusting(p.pki.ca_file());
    o.alpn = {"h2"};
    tls_probe c(s.port(), o);
    EXPECT_FALSE(c.ok());
    EXPECT_EQ(c.error(), "tlsv1 alert no application protocol");
    EXPECT_TRUE(wait_until([&] { return s.http().tls_handshakes().failed == 1; }, tls_side::tls_wait));
}

TEST(HttpsServer, AlpnSelectsHttp11AmongTheOffers) {
    server_pki p;
    https_server s(https_options(p.server));
    auto o = trusting(p.pki.ca_file());
    o.alpn = {"h2", "http/1.1"};
    tls_probe offered_both(s.port(), o);
    ASSERT_TRUE(offered_both.ok()) << offered_both.error();
    EXPECT_EQ(offered_both.alpn(), "http/1.1");
    // A client that offers no ALPN at all is served too (curl before ALPN, scripts).
    o.alpn = {};
    tls_probe offered_none(s.port(), o);
    ASSERT_TRUE(offered_none.ok()) << offered_none.error();
    EXPECT_EQ(offered_none.alpn(), "");
}

TEST(HttpsServer, NegotiatesNoCompressionEvenWhenOffered) {
    server_pki p;
    https_server s(https_options(p.server));
    auto o = trusting(p.pki.ca_file());
    o.max_version = TLS1_2_VERSION; // TLS 1.3 has no compression to offer
    o.offer_compression = true;
    tls_probe c(s.port(), o);
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(SSL_get_current_compression(c.ssl()), nullptr);
    EXPECT_EQ(SSL_get_current_expansion(c.ssl()), nullptr);
}

TEST(HttpsServer, RefusesRenegotiation) {
    server_pki p;
    https_server s(https_options(p.server));
    auto o = trusting(p.pki.ca_file());
    o.max_version = TLS1_2_VERSION; // renegotiation is TLS 1.2's (1.3 has none)
    tls_probe c(s.port(), o);
    ASSERT_TRUE(c.ok()) << c.error();
    ASSERT_EQ(SSL_get_secure_renegotiation_support(c.ssl()), 1);
    ASSERT_EQ(SSL_renegotiate(c.ssl()), 1);
    ERR_clear_error();
    // The new ClientHello goes out; the server answers it with a no_renegotiation alert.
    EXPECT_NE(SSL_do_handshake(c.ssl()), 1);
    EXPECT_EQ(tls_side::openssl_reason("no error"), "no renegotiation");
    EXPECT_EQ(s.http().tls_handshakes().completed, 1u) << "a renegotiation is not a second handshake";
}

// ---- failed handshakes: counted, the connection closed ---------------------------------------------------

TEST(HttpsServer, PlainHttpToTheTlsPortIsAnswered400SayingToUseHttps) {
    server_pki p;
    https_server s(https_options(p.server));
    int const fd = tls_side::connect_loopback(s.port());
    ASSERT_GE(fd, 0);
    auto const request = mcp_post(s.port(), call_request(1, "echo", {{"text", "plain"}}));
    ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
    std::string answer;
    char buf[4096];
    for (;;) {
        auto const got = ::recv(fd, buf, sizeof buf, 0);
        if (got <= 0)
            break;
        answer.append(buf, static_cast<std::size_t>(got));
    }
    ::close(fd);
    EXPECT_EQ(answer, "HTTP/1.1 400 Bad Request\r\n"
                      "Content-Type: text/plain\r\n"
                      "Content-Length: 48\r\n"
                      "Connection: close\r\n\r\n"
                      "This server speaks HTTPS only: use an https URL\n");
    EXPECT_TRUE(wait_until([&] { return s.http().tls_handshakes().failed == 1; }, tls_side::tls_wait));
    EXPECT_EQ(s.http().tls_handshakes().completed, 0u);
}

TEST(HttpsServer, ClientThatSendsNothingIsClosedAfterTheHandshakeTimeout) {
    server_pki p;
    auto options = https_options(p.server);
    options.tls->handshake_timeout = 300ms;
    https_server s(options);
    int const fd = tls_side::connect_loopback(s.port());
    ASSERT_GE(fd, 0);
    auto const start = std::chrono::steady_clock::now();
    EXPECT_TRUE(tls_side::peer_closes(fd, tls_side::tls_wait)) << "the silent connection was never closed";
    auto const took = std::chrono::steady_clock::now() - start;
    ::close(fd);
    EXPECT_GE(took, 250ms) << "closed before the handshake timeout";
    EXPECT_LT(took, 10s) << "closed by something else than the 300 ms handshake timeout";
    EXPECT_TRUE(wait_until([&] { return s.http().tls_handshakes().failed == 1; }, tls_side::tls_wait));
}

// ---- mutual TLS ----------------------------------------------------------------------------------------

struct mutual_pki : server_pki {
    temp_dir other_tmp;
    test_pki other{other_tmp.path(), "Other CA"};
    cert_files alice = pki.issue({.name = "alice", .client = true});
};

// What a connection presenting `client` (or nothing) gets from a mutual-TLS server: false when refused.
bool whoami_over(https_server& s, mutual_pki const& p, std::optional<cert_files> client, std::string& said) {
    auto o = trusting(p.pki.ca_file());
    o.client_cert = std::move(client);
    tls_probe c(s.port(), o);
    if (!c.ok()) {
        said = c.error();
        return false;
    }
    // With TLS 1.3 the client is done before the server has checked its certificate: the refusal comes as
    // an alert instead of the answer.
    auto const a = c.exchange(mcp_post(s.port(), call_request(1, "whoami")));
    if (a.status == 0) {
        said = a.failure;
        return false;
    }
    said = a.tool_text();
    return true;
}

TEST(HttpsServer, MutualTlsRefusesAClientWithoutCertificateAndClosesTheConnection) {
    mutual_pki p;
    https_server s(https_options(p.server, p.pki.ca_file()));
    std::string said;
    EXPECT_FALSE(whoami_over(s, p, std::nullopt, said));
    EXPECT_EQ(said, "tlsv13 alert certificate required");
    EXPECT_TRUE(wait_until([&] { return s.http().tls_handshakes().failed == 1; }, tls_side::tls_wait));
    EXPECT_EQ(s.http().tls_handshakes().completed, 0u);
}

TEST(HttpsServer, MutualTlsRefusesACertificateFromAnotherCa) {
    mutual_pki p;
    https_server s(https_options(p.server, p.pki.ca_file()));
    auto const mallory = p.other.issue({.name = "mallory", .client = true});
    std::string said;
    EXPECT_FALSE(whoami_over(s, p, mallory, said));
    EXPECT_EQ(said, "tlsv1 alert unknown ca");
    EXPECT_TRUE(wait_until([&] { return s.http().tls_handshakes().failed == 1; }, tls_side::tls_wait));
    EXPECT_EQ(s.http().tls_handshakes().completed, 0u);
}

TEST(HttpsServer, MutualTlsRefusesAnExpiredClientCertificate) {
    mutual_pki p;
    https_server s(https_options(p.server, p.pki.ca_file()));
    auto const late = p.pki.issue({.name = "late", .not_after = -std::chrono::hours(1), .client = true});
    std::string said;
    EXPECT_FALSE(whoami_over(s, p, late, said));
    EXPECT_EQ(said, "sslv3 alert certificate expired");
    EXPECT_TRUE(wait_until([&] { return s.http().tls_handshakes().failed == 1; }, tls_side::tls_wait));
}

TEST(HttpsServer, HandlersSeeTheVerifiedClientCertificateSubject) {
    mutual_pki p;
    https_server s(https_options(p.server, p.pki.ca_file()));
    std::string said;
    ASSERT_TRUE(whoami_over(s, p, p.alice, said)) << said;
    EXPECT_EQ(said, "CN=alice");
    EXPECT_EQ(s.http().tls_handshakes().completed, 1u);
}

TEST(HttpsServer, WithoutClientCertificatesHandlersSeeNoCaller) {
    server_pki p;
    https_server s(https_options(p.server));
    tls_probe c(s.port(), trusting(p.pki.ca_file()));
    ASSERT_TRUE(c.ok()) << c.error();
    auto const a = c.exchange(mcp_post(s.port(), call_request(1, "whoami")));
    EXPECT_EQ(a.tool_text(), "nobody") << a.failure << a.body;
}

// ---- a client's close cancels its modern request (DIGEST §9) -------------------------------------------

struct cancel_probe {
    std::promise<void> started;
    std::promise<void> cancelled;
};

boost::asio::awaitable<server::tool_result> wait_for_cancel(std::shared_ptr<cancel_probe> probe,
                                                            server::request_context& ctx) {
    probe->started.set_value();
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
    auto const give_up = std::chrono::steady_clock::now() + tls_side::tls_wait;
    while (!ctx.cancelled() && std::chrono::steady_clock::now() < give_up) {
        timer.expires_after(5ms);
        co_await timer.async_wait(boost::asio::use_awaitable);
    }
    if (ctx.cancelled())
        probe->cancelled.set_value();
    co_return server::tool_result::text("stopped");
}

// A TLS client ends with a close_notify before its FIN: a byte the server's watch on the peer cannot tell
// from a pipelined request without decrypting it, and must still see as the client leaving. (A client that
// left bytes of the server's unread, as TLS 1.3's session tickets on a fresh connection, resets it instead:
// each connection here has had an answer read first.)
TEST(HttpsServer, ClosingWithCloseNotifyCancelsTheModernRequest) {
    server_pki p;
    https_server s(https_options(p.server));
    for (int const version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
        SCOPED_TRACE(version == TLS1_2_VERSION ? "TLS 1.2" : "TLS 1.3");
        auto probe = std::make_shared<cancel_probe>();
        auto started = probe->started.get_future();
        auto cancelled = probe->cancelled.get_future();
        auto const tool = "wait_for_cancel_" + std::to_string(version);
        s.srv().add_tool(server::tool{.name = tool, .description = "Runs until cancelled"},
                         [probe](boost::json::object const&, server::request_context& ctx) {
                             return wait_for_cancel(probe, ctx);
                         });
        {
            auto o = trusting(p.pki.ca_file());
            o.min_version = version;
            o.max_version = version;
            tls_probe c(s.port(), o);
            ASSERT_TRUE(c.ok()) << c.error();
            ASSERT_EQ(c.exchange(mcp_post(s.port(), call_request(1, "echo", {{"text", "hi"}}))).status, 200u);
            ASSERT_TRUE(c.write(mcp_post(s.port(), call_request(2, tool)))) << c.error();
            ASSERT_EQ(started.wait_for(tls_side::tls_wait), std::future_status::ready);
            EXPECT_EQ(SSL_shutdown(c.ssl()), 0) << "the close_notify went out";
            // Closed without waiting for the server's close_notify, as HTTP clients do.
            SSL_set_shutdown(c.ssl(), SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
        }
        EXPECT_EQ(cancelled.wait_for(tls_side::tls_wait), std::future_status::ready)
            << "the handler was not cancelled";
    }
}

// ---- keep-alive and resumption ---------------------------------------------------------------------------

TEST(HttpsServer, KeepAliveServesManyRequestsOnOneHandshake) {
    server_pki p;
    https_server s(https_options(p.server));
    tls_probe c(s.port(), trusting(p.pki.ca_file()));
    ASSERT_TRUE(c.ok()) << c.error();
    for (int i = 0; i < 5; ++i) {
        auto const text = "request " + std::to_string(i);
        auto const a = c.exchange(mcp_post(s.port(), call_request(i, "echo", {{"text", text}})));
        ASSERT_EQ(a.status, 200u) << i << ": " << a.failure;
        EXPECT_EQ(a.tool_text(), text);
    }
    EXPECT_EQ(s.http().tls_handshakes().completed, 1u);
    EXPECT_EQ(s.http().tls_handshakes().resumed, 0u);
}

TEST(HttpsServer, ResumedSessionsAreCounted) {
    server_pki p;
    https_server s(https_options(p.server));
    for (int const version : {TLS1_3_VERSION, TLS1_2_VERSION}) {
        auto o = trusting(p.pki.ca_file());
        o.min_version = version;
        o.max_version = version;
        std::shared_ptr<SSL_SESSION> session;
        {
            tls_probe first(s.port(), o);
            ASSERT_TRUE(first.ok()) << first.error();
            // TLS 1.3 tickets come after the handshake: an answer read means they are in.
            EXPECT_EQ(first.exchange(mcp_post(s.port(), call_request(1, "echo", {{"text", "a"}}))).status,
                      200u);
            session = first.session();
            ASSERT_TRUE(session && SSL_SESSION_is_resumable(session.get()));
        }
        auto const before = s.http().tls_handshakes();
        o.resume = session;
        tls_probe second(s.port(), o);
        ASSERT_TRUE(second.ok()) << second.error();
        EXPECT_EQ(SSL_session_reused(second.ssl()), 1) << SSL_get_version(second.ssl());
        EXPECT_EQ(second.exchange(mcp_post(s.port(), call_request(2, "echo", {{"text", "b"}}))).status, 200u);
        auto const after = s.http().tls_handshakes();
        EXPECT_EQ(after.completed, before.completed + 1);
        EXPECT_EQ(after.resumed, before.resumed + 1) << SSL_get_version(second.ssl());
    }
}

TEST(HttpsServer, MutualTlsSessionResumesWithTheSubjectStillKnown) {
    mutual_pki p;
    https_server s(https_options(p.server, p.pki.ca_file()));
    auto o = trusting(p.pki.ca_file());
    o.client_cert = p.alice;
    std::shared_ptr<SSL_SESSION> session;
    {
        tls_probe first(s.port(), o);
        ASSERT_TRUE(first.ok()) << first.error();
        EXPECT_EQ(first.exchange(mcp_post(s.port(), call_request(1, "whoami"))).tool_text(), "CN=alice");
        session = first.session();
    }
    o.resume = session;
    tls_probe second(s.port(), o);
    ASSERT_TRUE(second.ok()) << second.error();
    EXPECT_EQ(SSL_session_reused(second.ssl()), 1);
    EXPECT_EQ(second.exchange(mcp_post(s.port(), call_request(2, "whoami"))).tool_text(), "CN=alice");
    EXPECT_EQ(s.http().tls_handshakes().resumed, 1u);
}

// ---- certificate rotation ------------------------------------------------------------------------------

TEST(HttpsServer, ReloadServesTheNewCertificateToNewConnectionsAndKeepsOpenOnes) {
    server_pki p;
    https_server s(https_options(p.server));
    auto const old_serial = tls_side::serial_of_file(p.server.cert);
    tls_probe before(s.port(), trusting(p.pki.ca_file()));
    ASSERT_TRUE(before.ok()) << before.error();
    ASSERT_EQ(before.exchange(mcp_post(s.port(), call_request(1, "echo", {{"text", "a"}}))).status, 200u);
    EXPECT_EQ(before.peer_serial(), old_serial);

    // The same files rewritten with a new leaf (a new serial and key), as a certificate renewal does.
    auto const renewed = p.pki.issue({.name = "server", .dns = {"localhost"}, .ips = {"127.0.0.1"}});
    ASSERT_EQ(renewed.cert, p.server.cert);
    auto const new_serial = tls_side::serial_of_file(renewed.cert);
    ASSERT_NE(new_serial, old_serial);
    EXPECT_EQ(s.http().reload_tls(), std::nullopt);

    tls_probe after(s.port(), trusting(p.pki.ca_file()));
    ASSERT_TRUE(after.ok()) << after.error();
    EXPECT_EQ(after.peer_serial(), new_serial);
    EXPECT_EQ(after.exchange(mcp_post(s.port(), call_request(2, "echo", {{"text", "b"}}))).tool_text(), "b");
    // The connection opened before the reload still serves, on its old certificate.
    auto const kept = before.exchange(mcp_post(s.port(), call_request(3, "echo", {{"text", "c"}})));
    EXPECT_EQ(kept.status, 200u) << kept.failure;
    EXPECT_EQ(kept.tool_text(), "c");
    EXPECT_EQ(before.peer_serial(), old_serial);
}

TEST(HttpsServer, ReloadRefusesFilesThatDoNotMatchAndKeepsServingTheOldCertificate) {
    server_pki p;
    https_server s(https_options(p.server));
    auto const old_serial = tls_side::serial_of_file(p.server.cert);
    // The key of another certificate where the server's key was.
    auto const stranger = p.pki.issue({.name = "stranger", .ips = {"127.0.0.1"}});
    std::filesystem::copy_file(stranger.key, p.server.key, std::filesystem::copy_options::overwrite_existing);
    auto const why = s.http().reload_tls();
    ASSERT_TRUE(why.has_value()) << "a certificate and a key that do not match were accepted";
    EXPECT_EQ(*why, "the private key " + p.server.key + " does not match the certificate " + p.server.cert);
    tls_probe c(s.port(), trusting(p.pki.ca_file()));
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c.peer_serial(), old_serial);
    EXPECT_EQ(c.exchange(mcp_post(s.port(), call_request(1, "echo", {{"text", "still"}}))).tool_text(),
              "still");
}

TEST(HttpsServer, ReloadRefusesAMissingFileWithItsReason) {
    server_pki p;
    https_server s(https_options(p.server));
    auto const old_serial = tls_side::serial_of_file(p.server.cert);
    std::filesystem::remove(p.server.cert);
    EXPECT_EQ(s.http().reload_tls(),
              "cannot read the certificate chain " + p.server.cert + ": No such file or directory");
    tls_probe c(s.port(), trusting(p.pki.ca_file()));
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c.peer_serial(), old_serial);
}

TEST(HttpsServer, UnusableFilesAreRefusedWhenTheServerIsMade) {
    server_pki p;
    server::server srv;
    auto missing = https_options({.cert = (p.tmp.path() / "missing.crt").string(), .key = p.server.key});
    try {
        transport::http_server h(srv, missing);
        ADD_FAILURE() << "a missing certificate file was accepted";
    } catch (std::invalid_argument const& e) {
        EXPECT_EQ(std::string(e.what()), "TLS: cannot read the certificate chain " +
                                             (p.tmp.path() / "missing.crt").string() +
                                             ": No such file or directory");
    }
    auto const stranger = p.pki.issue({.name = "stranger"});
    try {
        transport::http_server h(srv, https_options({.cert = p.server.cert, .key = stranger.key}));
        ADD_FAILURE() << "a key of another certificate was accepted";
    } catch (std::invalid_argument const& e) {
        EXPECT_EQ(std::string(e.what()), "TLS: the private key " + stranger.key +
                                             " does not match the certificate " + p.server.cert);
    }
}

// ---- plain HTTP beside HTTPS ---------------------------------------------------------------------------

TEST(HttpsServer, PlainAndHttpsServersRunSideBySideInOneProcess) {
    server_pki p;
    https_server secure(https_options(p.server));
    https_server plain(transport::http_options{});
    ASSERT_EQ(plain.url().rfind("http://127.0.0.1:", 0), 0u) << plain.url();

    auto const message = call_request(1, "echo", {{"text", "plain"}});
    auto const r =
        http::exchange(http::endpoint::parse(plain.url()),
                       http::post_spec(boost::json::serialize(message), http::modern_headers(message)));
    EXPECT_EQ(r.status, 200u);
    EXPECT_EQ(r.json().at("result").at("content").at(0).at("text"), "plain");

    tls_probe c(secure.port(), trusting(p.pki.ca_file()));
    ASSERT_TRUE(c.ok()) << c.error();
    EXPECT_EQ(c.exchange(mcp_post(secure.port(), call_request(2, "echo", {{"text", "tls"}}))).tool_text(),
              "tls");

    // The plain server speaks no TLS and counts none; the HTTPS one counts its own only.
    EXPECT_EQ(plain.http().reload_tls(), "this server does not speak TLS");
    auto const none = plain.http().tls_handshakes();
    EXPECT_EQ(none.completed + none.resumed + none.failed, 0u);
    EXPECT_EQ(secure.http().tls_handshakes().completed, 1u);
    // TLS to the plain port is not answered with TLS.
    tls_probe wrong(plain.port(), trusting(p.pki.ca_file()));
    EXPECT_FALSE(wrong.ok());
}

} // namespace duet::test::https_server_suite
