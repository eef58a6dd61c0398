// Hostile or broken clients (issue 27, "Connections and requests"): each bound holds a connection for
// seconds, not minutes, and each early answer reaches the client. A trickled head is closed after
// header_timeout, also on a kept-alive connection (whose wait for its next request to begin is idle_timeout);
// a trickled body at the minimum rate; malformed HTTP is answered 400, a long target 414; a 413 reaches
// clients still sending their body (Node's fetch, Python's http.client); announced lengths reserve nothing
// like their size; the listener stops at max_connections and resumes; a connection serves
// max_requests_per_connection requests; one peer's sessions are bounded (429) without locking others out; an
// open GET stream keeps its session alive.
#include "http/mcp_http.hpp"
#include "http/raw_socket.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "support/child_process.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

namespace {

namespace json = boost::json;
using namespace duet;
using namespace duet::test;
using namespace duet::test::http;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

std::string tools_list_body() {
    return json::serialize(modern_request(1, "tools/list"));
}

request_spec modern_spec(endpoint const& ep, std::string body) {
    (void)ep;
    request_spec spec;
    spec.headers = {{"Accept", "application/json, text/event-stream"},
                    {"Content-Type", "application/json"},
                    {"MCP-Protocol-Version", "2026-07-28"},
                    {"Mcp-Method", "tools/list"}};
    spec.body = std::move(body);
    return spec;
}

// Sends `bytes` one at a time, `gap` apart, until the server closes the connection; how long that took.
std::chrono::milliseconds trickle_until_closed(raw_socket& c, std::string const& bytes,
                                               std::chrono::milliseconds gap,
                                               std::chrono::milliseconds give_up) {
    auto const start = steady::now();
    std::size_t at = 0;
    while (steady::now() - start < give_up) {
        if (at < bytes.size() && !c.send(bytes.substr(at++, 1)))
            break;
        std::string sink;
        if (c.read_some(sink, gap) == raw_socket::got::closed)
            break;
    }
    return std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - start);
}

struct finished {
    int exit_code = -1;
    std::string out;
    std::string err;
};

// Runs a program (looked up on PATH) to its end; its stdout and stderr.
finished run_to_end(std::vector<std::string> argv) {
    argv.insert(argv.begin(), "/usr/bin/env");
    test::child_process child(std::move(argv), test::child_process::input::null);
    finished f;
    char buf[4096];
    for (;;) {
        auto const n = ::read(child.out(), buf, sizeof buf);
        if (n <= 0)
            break;
        f.out.append(buf, static_cast<std::size_t>(n));
    }
    f.exit_code = child.wait_exit(60s);
    f.err = child.stderr_text();
    return f;
}

transport::http_options quick_bounds() {
    transport::http_options o;
    o.header_timeout = 300ms;
    o.idle_timeout = 5s;
    return o;
}

TEST(HttpHardening, AHeadTrickledOnANewConnectionIsClosedAfterTheHeaderTimeout) {
    inproc_server s(quick_bounds());
    raw_socket c(s.ep().port);
    ASSERT_TRUE(c.connected());
    auto const head = raw_request(s.ep(), modern_spec(s.ep(), tools_list_body()));
    auto const took = trickle_until_closed(c, head, 50ms, 10s);
    EXPECT_GE(took, 250ms);
    EXPECT_LT(took, 3s) << "a trickled head must not hold the connection for long";
}

TEST(HttpHardening, AKeptAliveConnectionTricklingItsNextHeadIsClosedSoon) {
    inproc_server s(quick_bounds());
    raw_socket c(s.ep().port);
    auto const request = raw_request(s.ep(), modern_spec(s.ep(), tools_list_body()));
    ASSERT_TRUE(c.send(request));
    auto const first = c.read_response();
    ASSERT_TRUE(first.starts_with("HTTP/1.1 200")) << first;
    // The next request begins at once and then trickles: closed after about the header timeout, far below the
    // idle timeout a kept-alive connection may wait for a request to begin.
    auto const took = trickle_until_closed(c, request, 50ms, 10s);
    EXPECT_LT(took, 3s);
}

TEST(HttpHardening, AKeptAliveConnectionWaitsTheIdleTimeoutForItsNextRequest) {
    auto o = quick_bounds();
    o.idle_timeout = 1500ms;
    inproc_server s(o);
    raw_socket c(s.ep().port);
    auto const request = raw_request(s.ep(), modern_spec(s.ep(), tools_list_body()));
    ASSERT_TRUE(c.send(request));
    ASSERT_TRUE(c.read_response().starts_with("HTTP/1.1 200"));
    // Silent for several header timeouts: still open, and a request sent then is answered.
    std::string sink;
    EXPECT_EQ(c.read_some(sink, 900ms), raw_socket::got::nothing);
    ASSERT_TRUE(c.send(request));
    EXPECT_TRUE(c.read_response().starts_with("HTTP/1.1 200"));
    // Then silent past the idle timeout: closed.
    EXPECT_TRUE(c.closed_within(5s));
}

TEST(HttpHardening, ABodyTrickledBelowTheMinimumRateIsClosed) {
    auto o = quick_bounds();
    o.min_body_bytes_per_second = 1000;
    inproc_server s(o);
    raw_socket c(s.ep().port);
    auto const body = std::string(1000, ' ') + tools_list_body();
    auto const request = raw_request(s.ep(), modern_spec(s.ep(), body));
    auto const head_end = request.find("\r\n\r\n") + 4;
    ASSERT_TRUE(c.send(request.substr(0, head_end)));
    // 2000 bytes allowed about 2.3 s; at 10 bytes a second it would take minutes.
    auto const took = trickle_until_closed(c, request.substr(head_end), 100ms, 20s);
    EXPECT_GE(took, 1500ms);
    EXPECT_LT(took, 6s);
}

TEST(HttpHardening, MalformedHttpIsAnswered400AndClosed) {
    inproc_server s;
    for (std::string const& bad :
         {std::string("GARBAGE\r\n\r\n"),
          std::string("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: x\r\n\r\n"),
          std::string("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Field: 1\r\n\r\n")}) {
        raw_socket c(s.ep().port);
        ASSERT_TRUE(c.send(bad));
        auto const answer = c.read_response(10s);
        EXPECT_TRUE(answer.starts_with("HTTP/1.1 400")) << bad << " -> " << answer;
        EXPECT_NE(answer.find("malformed HTTP"), std::string::npos) << answer;
        EXPECT_TRUE(c.closed_within(10s)) << bad;
    }
}

TEST(HttpHardening, ATargetOverTheLimitIs414) {
    transport::http_options o;
    o.max_target_bytes = 100;
    inproc_server s(o);
    auto spec = modern_spec(s.ep(), tools_list_body());
    spec.target = s.ep().path + "?" + std::string(200, 'q');
    raw_socket c(s.ep().port);
    ASSERT_TRUE(c.send(raw_request(s.ep(), spec)));
    auto const answer = c.read_response(10s);
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 414")) << answer;
    EXPECT_NE(answer.find("request target exceeds 100 bytes"), std::string::npos) << answer;
}

// The client writes a 5 MiB body while the server has already answered 413 after 4 MiB: with a plain close
// the unread bytes reset the connection and the client reports a broken pipe instead of the answer.
TEST(HttpHardening, A413ReachesNodeFetchStillSendingItsBody) {
    inproc_server s;
    auto const url = "http://" + s.ep().authority() + s.ep().path;
    auto const script =
        "const r = await fetch(process.argv[1], {method: 'POST', body: Buffer.alloc(5 * 1024 * 1024, 32),"
        " headers: {'Content-Type': 'application/json', Accept: 'application/json, text/event-stream'}});"
        " console.log(r.status, (await r.text()).includes('exceeds') ? 'named' : 'unnamed');";
    auto const run = run_to_end({"node", "--input-type=module", "-e", script, url});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out, "413 named\n") << run.err;
}

TEST(HttpHardening, A413ReachesPythonHttpClientStillSendingItsBody) {
    inproc_server s;
    auto const script = "import http.client, sys\n"
                        "c = http.client.HTTPConnection('127.0.0.1', int(sys.argv[1]))\n"
                        "c.request('POST', sys.argv[2], body=b' ' * (5 * 1024 * 1024),"
                        " headers={'Content-Type': 'application/json',"
                        " 'Accept': 'application/json, text/event-stream'})\n"
                        "r = c.getresponse()\n"
                        "print(r.status, 'named' if b'exceeds' in r.read() else 'unnamed')\n";
    auto const run = run_to_end({"python3", "-c", script, std::to_string(s.ep().port), s.ep().path});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(run.out, "413 named\n") << run.err;
}

std::size_t virtual_kib() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.starts_with("VmSize:"))
            return std::stoul(line.substr(7));
    return 0;
}

TEST(HttpHardening, AnnouncedBodiesThatNeverComeReserveNothingLikeTheirSize) {
    inproc_server s;
    auto const before = virtual_kib();
    std::vector<std::unique_ptr<raw_socket>> idle;
    auto spec = modern_spec(s.ep(), "");
    auto head = raw_request(s.ep(), spec);
    head.replace(head.find("Content-Length: 0"), 17, "Content-Length: 4194304");
    for (int i = 0; i < 300; ++i) {
        idle.push_back(std::make_unique<raw_socket>(s.ep().port));
        ASSERT_TRUE(idle.back()->send(head));
    }
    // Every head is read (the server answers a well-behaved client after them all).
    mcp_http ok(s.ep());
    EXPECT_EQ(ok.post(modern_request(2, "tools/list")).status, 200u);
    auto const grown_mib = (virtual_kib() - before) / 1024;
    // 300 × 4 MiB would be 1200 MiB.
    EXPECT_LT(grown_mib, 400u) << "the server reserved what the requests announced";
}

TEST(HttpHardening, TheListenerStopsAtMaxConnectionsAndResumesAsOneCloses) {
    transport::http_options o;
    o.max_connections = 2;
    inproc_server s(o);
    auto a = std::make_unique<raw_socket>(s.ep().port);
    raw_socket b(s.ep().port);
    auto const request = raw_request(s.ep(), modern_spec(s.ep(), tools_list_body()));
    ASSERT_TRUE(a->send(request));
    ASSERT_TRUE(a->read_response().starts_with("HTTP/1.1 200"));
    ASSERT_TRUE(b.send(request));
    ASSERT_TRUE(b.read_response().starts_with("HTTP/1.1 200"));
    // A third waits in the kernel's backlog, unanswered, while the two stay open.
    raw_socket third(s.ep().port);
    ASSERT_TRUE(third.send(request));
    EXPECT_TRUE(third.read_response(700ms).empty());
    a.reset();
    EXPECT_TRUE(third.read_response(10s).starts_with("HTTP/1.1 200"));
}

// The descriptors of this process whose socket is bound to `port`: the server's listener and the
// connections it accepted (a client's socket is bound to a port of its own).
std::vector<int> sockets_bound_to(std::uint16_t port) {
    std::vector<int> found;
    for (auto const& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
        int const fd = std::stoi(entry.path().filename().string());
        sockaddr_storage addr{};
        socklen_t len = sizeof addr;
        if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || addr.ss_family != AF_INET)
            continue;
        if (ntohs(reinterpret_cast<sockaddr_in const*>(&addr)->sin_port) == port)
            found.push_back(fd);
    }
    return found;
}

TEST(HttpHardening, TheListenerAndAcceptedSocketsAreCloseOnExec) {
    inproc_server s;
    raw_socket c(s.ep().port);
    ASSERT_TRUE(c.send(raw_request(s.ep(), modern_spec(s.ep(), tools_list_body()))));
    ASSERT_TRUE(c.read_response().starts_with("HTTP/1.1 200"));
    auto const fds = sockets_bound_to(s.ep().port);
    ASSERT_GE(fds.size(), 2u) << "the listener and the accepted connection";
    for (int const fd : fds)
        EXPECT_NE(::fcntl(fd, F_GETFD) & FD_CLOEXEC, 0) << "descriptor " << fd << " would reach a child";
}

TEST(HttpHardening, AConnectionServesAtMostMaxRequestsThenCloses) {
    transport::http_options o;
    o.max_requests_per_connection = 3;
    inproc_server s(o);
    raw_socket c(s.ep().port);
    auto const request = raw_request(s.ep(), modern_spec(s.ep(), tools_list_body()));
    for (int i = 1; i <= 3; ++i) {
        ASSERT_TRUE(c.send(request));
        auto const answer = c.read_response();
        ASSERT_TRUE(answer.starts_with("HTTP/1.1 200")) << i;
        EXPECT_EQ(answer.find("Connection: close") != std::string::npos, i == 3) << i << answer;
    }
    EXPECT_TRUE(c.closed_within(10s));
}

std::string initialize_bytes(endpoint const& ep, std::string const& id) {
    request_spec spec;
    spec.headers = {{"Accept", "application/json, text/event-stream"}, {"Content-Type", "application/json"}};
    spec.body = json::serialize(initialize_request(json::string(id), "2025-11-25"));
    return raw_request(ep, spec);
}

TEST(HttpHardening, OnePeersSessionsAreBoundedWithoutLockingOthersOut) {
    transport::http_options o;
    o.session_burst_per_peer = 3;
    o.sessions_per_second_per_peer = 0.01;
    inproc_server s(o);
    raw_socket greedy(s.ep().port, 0, "127.0.0.1");
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(greedy.send(initialize_bytes(s.ep(), "ok-" + std::to_string(i))));
        auto const answer = greedy.read_response();
        ASSERT_TRUE(answer.starts_with("HTTP/1.1 200")) << answer;
    }
    ASSERT_TRUE(greedy.send(initialize_bytes(s.ep(), "over")));
    auto const refused = greedy.read_response();
    EXPECT_TRUE(refused.starts_with("HTTP/1.1 429")) << refused;
    EXPECT_NE(refused.find("Retry-After: "), std::string::npos) << refused;
    EXPECT_EQ(code_of(json::parse(body_of(refused))), -32603) << refused;
    // Another address still opens sessions.
    raw_socket other(s.ep().port, 0, "127.0.0.2");
    ASSERT_TRUE(other.connected());
    ASSERT_TRUE(other.send(initialize_bytes(s.ep(), "other")));
    EXPECT_TRUE(other.read_response().starts_with("HTTP/1.1 200"));
}

TEST(HttpHardening, AnOpenGetStreamKeepsItsSessionAlive) {
    transport::http_options o;
    o.session_expiry = 600ms;
    o.keepalive = 100ms;
    inproc_server s(o);
    mcp_http streaming(s.ep());
    streaming.initialize("2025-11-25");
    mcp_http idle(s.ep());
    idle.initialize("2025-11-25");
    request_spec get;
    get.method = "GET";
    get.headers = streaming.session_headers();
    get.headers.push_back({"Accept", "text/event-stream"});
    auto stream = streaming.open_spec(get);
    ASSERT_EQ(stream->status(), 200u);
    std::this_thread::sleep_for(2s); // several expiries and sweeps
    EXPECT_EQ(streaming.post(request(2, "tools/list")).status, 200u) << "the session with a stream lives";
    EXPECT_EQ(idle.post(request(3, "tools/list")).status, 404u) << "the idle session expired";
    stream->close();
}

} // namespace

namespace {

// Secrets (issue 27): the bearer token of `duet serve` comes from a file or the environment, never argv.
std::vector<duet::test::http::header_field> with_token(std::string const& token) {
    return {{"Authorization", "Bearer " + token}};
}

void expect_token_required(duet::test::http::endpoint const& ep, std::string const& token) {
    using namespace duet::test::http;
    auto spec = modern_spec(ep, tools_list_body());
    EXPECT_EQ(exchange(ep, spec).status, 401u);
    auto wrong = spec;
    wrong.headers.push_back(with_token(token + "x").front());
    EXPECT_EQ(exchange(ep, wrong).status, 401u);
    spec.headers.push_back(with_token(token).front());
    EXPECT_EQ(exchange(ep, spec).status, 200u);
}

TEST(ServeSecrets, TheBearerTokenComesFromTheEnvironment) {
    ::setenv("DUET_BEARER_TOKEN", "from-the-environment", 1);
    duet::test::http::child_server c;
    ::unsetenv("DUET_BEARER_TOKEN");
    expect_token_required(c.ep(), "from-the-environment");
}

TEST(ServeSecrets, TheBearerTokenComesFromAFile) {
    auto const path = std::string(::testing::TempDir()) + "duet-token-" + std::to_string(::getpid());
    std::ofstream(path) << "from-a-file\n";
    duet::test::http::child_server c({"--bearer-token-file", path});
    expect_token_required(c.ep(), "from-a-file");
    std::remove(path.c_str());
}

// Kept working for those who start it so, with a warning that `ps` shows the token to every user.
TEST(ServeSecrets, ATokenOnTheCommandLineWorksWithAWarning) {
    duet::test::http::child_server c({"--bearer-token", "visible-in-ps"});
    expect_token_required(c.ep(), "visible-in-ps");
    EXPECT_NE(c.stderr_text().find("warning: --bearer-token"), std::string::npos) << c.stderr_text();
}

TEST(ServeSecrets, ATokenOnTheCommandLineAndInAFileIsAUsageError) {
    auto const path = std::string(::testing::TempDir()) + "duet-token-both-" + std::to_string(::getpid());
    std::ofstream(path) << "from-a-file\n";
    auto const run = run_to_end(
        {DUET_BINARY, "serve", "--port", "0", "--bearer-token", "visible", "--bearer-token-file", path});
    std::remove(path.c_str());
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_NE(run.err.find("exclude each other"), std::string::npos) << run.err;
}

} // namespace
