// bench_fanout_driver: times one list_changed reaching many modern listen streams, read by a client that is
// never the slow part (epoll over every stream, the arrival time taken as each read returns).
//
//     bench_fanout_driver URL STREAMS
//
// It opens STREAMS subscriptions/listen POSTs (toolsListChanged), each on its own connection, waits for every
// acknowledgement, then calls the server's `touch_tools` (which changes its tool list) and records, for each
// stream, when the notifications/tools/list_changed tagged with that stream's own subscription id arrived,
// from the moment the call was sent. A stream that gets anything else tagged with another id, or no change
// within 30 s, counts as missing. Through a load balancer the streams spread over its processes, and the
// change, made on one, reaches the others through their shared store.
//
// Output (stdout, one line):
//     BENCH streams=N open_seconds=S fanout_p50_ms=A fanout_last_ms=B missing=K
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct target {
    std::string host;
    int port = 0;
    std::string path;
};

bool parse_url(std::string const& url, target& t) {
    constexpr std::string_view scheme = "http://";
    if (!url.starts_with(scheme))
        return false;
    auto const rest = url.substr(scheme.size());
    auto const slash = rest.find('/');
    auto const authority = rest.substr(0, slash);
    t.path = slash == std::string::npos ? "/" : rest.substr(slash);
    auto const colon = authority.rfind(':');
    if (colon == std::string::npos)
        return false;
    t.host = authority.substr(0, colon);
    t.port = std::atoi(authority.c_str() + colon + 1);
    return t.port > 0;
}

constexpr char const* meta = R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                             R"("io.modelcontextprotocol/clientCapabilities":{}})";

std::string post(target const& t, std::string const& body, std::string const& method,
                 std::string const& name) {
    std::string r = "POST " + t.path + " HTTP/1.1\r\nHost: " + t.host + ':' + std::to_string(t.port) +
                    "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                    "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: " +
                    method + "\r\n";
    if (!name.empty())
        r += "Mcp-Name: " + name + "\r\n";
    return r + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

int connect_to(target const& t) {
    int const fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(t.port));
    if (fd < 0 || ::inet_pton(AF_INET, t.host.c_str(), &a.sin_addr) != 1 ||
        ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        std::perror("bench_fanout_driver: connect");
        std::exit(1);
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

void send_all(int fd, std::string const& data) {
    for (std::size_t sent = 0; sent < data.size();) {
        auto const n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) {
            std::perror("bench_fanout_driver: send");
            std::exit(1);
        }
        sent += static_cast<std::size_t>(n);
    }
}

struct stream {
    int fd = -1;
    std::string id;  ///< its subscription id, "L<i>"
    std::string tag; ///< how a message tagged with it reads
    std::string seen;
    bool acked = false;
    bool changed = false;
    bool foreign = false;
    double changed_ms = 0;
};

} // namespace

int main(int argc, char** argv) {
    target t;
    if (argc != 3 || !parse_url(argv[1], t) || std::atoi(argv[2]) <= 0) {
        std::fputs("usage: bench_fanout_driver http://HOST:PORT/PATH STREAMS\n", stderr);
        return 2;
    }
    auto const count = static_cast<std::size_t>(std::atoi(argv[2]));
    int const ep = ::epoll_create1(0);
    std::vector<stream> streams(count);
    auto const open_start = clock_type::now();
    for (std::size_t i = 0; i < count; ++i) {
        auto& s = streams[i];
        s.id = "L" + std::to_string(i);
        s.tag = R"("io.modelcontextprotocol/subscriptionId":")" + s.id + '"';
        s.fd = connect_to(t);
        send_all(s.fd, post(t,
                            R"({"jsonrpc":"2.0","id":")" + s.id +
                                R"(","method":"subscriptions/listen","params":{"notifications":)"
                                R"({"toolsListChanged":true},)" +
                                meta + "}}",
                            "subscriptions/listen", ""));
        epoll_event e{EPOLLIN, {.u64 = i}};
        ::epoll_ctl(ep, EPOLL_CTL_ADD, s.fd, &e);
    }

    // Reads what is there on every ready stream; `at` is when the change was asked for.
    std::size_t acked = 0, changed = 0;
    auto pump = [&](clock_type::time_point deadline, auto done, clock_type::time_point at) {
        std::vector<epoll_event> ready(256);
        char buf[16384];
        while (!done() && clock_type::now() < deadline) {
            int const n = ::epoll_wait(ep, ready.data(), static_cast<int>(ready.size()), 100);
            auto const now = clock_type::now();
            for (int k = 0; k < n; ++k) {
                auto& s = streams[ready[k].data.u64];
                auto const got = ::recv(s.fd, buf, sizeof buf, 0);
                if (got <= 0) {
                    ::epoll_ctl(ep, EPOLL_CTL_DEL, s.fd, nullptr);
                    continue;
                }
                s.seen.append(buf, static_cast<std::size_t>(got));
                if (!s.acked &&
                    s.seen.find("notifications/subscriptions/acknowledged") != std::string::npos) {
                    s.acked = true;
                    ++acked;
                    s.seen.clear();
                }
                if (s.acked && !s.changed &&
                    s.seen.find("notifications/tools/list_changed") != std::string::npos) {
                    s.changed = true;
                    s.foreign = s.seen.find(s.tag) == std::string::npos;
                    s.changed_ms = std::chrono::duration<double, std::milli>(now - at).count();
                    ++changed;
                }
            }
        }
    };
    pump(
        clock_type::now() + std::chrono::seconds(30), [&] { return acked == count; }, clock_type::now());
    auto const open_seconds = std::chrono::duration<double>(clock_type::now() - open_start).count();
    if (acked != count) {
        std::fprintf(stderr, "bench_fanout_driver: only %zu of %zu listens were acknowledged\n", acked,
                     count);
        return 1;
    }

    int const caller = connect_to(t);
    auto const call =
        post(t,
             std::string(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"touch_tools",)") +
                 R"("arguments":{},)" + meta + "}}",
             "tools/call", "touch_tools");
    auto const t0 = clock_type::now();
    send_all(caller, call);
    pump(
        t0 + std::chrono::seconds(30), [&] { return changed == count; }, t0);

    std::vector<double> delays;
    std::size_t missing = 0;
    for (auto const& s : streams) {
        if (s.changed && !s.foreign)
            delays.push_back(s.changed_ms);
        else
            ++missing;
        ::close(s.fd);
    }
    ::close(caller);
    std::sort(delays.begin(), delays.end());
    std::printf("BENCH streams=%zu open_seconds=%.2f fanout_p50_ms=%.2f fanout_last_ms=%.2f missing=%zu\n",
                count, open_seconds, delays.empty() ? 0.0 : delays[delays.size() / 2],
                delays.empty() ? 0.0 : delays.back(), missing);
    return missing == 0 ? 0 : 1;
}
