// bench_stdio_driver: drives an MCP server over stdio with pipelined `tools/call echo` requests and prints
// one machine-readable line of figures.
//
//     bench_stdio_driver --era legacy|modern (--requests N | --seconds S) [--window W] [--warmup N]
//                        -- COMMAND [ARGS...]
//
// It starts COMMAND with pipes on its stdin and stdout, opens the era (legacy: initialize, then
// notifications/initialized; modern: server/discover), sends N warm-up requests, then keeps W requests in
// flight until N have been answered (or, with --seconds, sends for S seconds and waits for the last answers).
// Every line the server writes is checked by answer_check.hpp: it must be the result of an outstanding
// request (each answered once) whose first content block echoes the text sent; anything else counts as bad.
// Notifications the server sends are counted and ignored.
// The server's CPU time and RSS come from /proc/<pid> around the measured phase.
//
// Output (stdout, one line):
//     BENCH messages=N seconds=S rate=R p50_us=A p99_us=B bad=K notifications=M server_cpu_s=C
//     server_rss_kb=K
//
// The driver must never be the bottleneck: `make bench` measures it against bench_echo_process, a server that
// answers every line with a canned result, and reports that ceiling next to the real servers.
#include "answer_check.hpp"

#include <boost/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using clock_type = std::chrono::steady_clock;

constexpr char const* modern_version = "2026-07-28";
constexpr char const* legacy_version = "2025-11-25";
constexpr char const* echo_text = "hello";

struct options {
    bool modern = true;
    std::size_t requests = 0;
    double seconds = 0;
    std::size_t window = 64;
    std::size_t warmup = 0;
    std::vector<char*> command;
};

[[noreturn]] void fail(std::string const& why) {
    std::fprintf(stderr, "bench_stdio_driver: %s\n", why.c_str());
    std::exit(2);
}

options parse_options(int argc, char** argv) {
    options o;
    int i = 1;
    for (; i < argc; ++i) {
        std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc)
                fail("missing value after " + arg);
            return argv[++i];
        };
        if (arg == "--") {
            ++i;
            break;
        }
        if (arg == "--era") {
            auto era = value();
            if (era != "modern" && era != "legacy")
                fail("--era must be modern or legacy, not " + era);
            o.modern = era == "modern";
        } else if (arg == "--requests")
            o.requests = std::stoul(value());
        else if (arg == "--seconds")
            o.seconds = std::stod(value());
        else if (arg == "--window")
            o.window = std::stoul(value());
        else if (arg == "--warmup")
            o.warmup = std::stoul(value());
        else
            fail("unknown option " + arg);
    }
    for (; i < argc; ++i)
        o.command.push_back(argv[i]);
    if (o.command.empty())
        fail("usage: bench_stdio_driver --era legacy|modern (--requests N | --seconds S) [--window W] "
             "[--warmup N] -- CMD...");
    if ((o.requests == 0) == (o.seconds <= 0))
        fail("give one of --requests N and --seconds S");
    if (o.window == 0)
        fail("--window must be positive");
    o.command.push_back(nullptr);
    return o;
}

// ---- the child process
// --------------------------------------------------------------------------------------

struct child {
    pid_t pid = -1;
    int to = -1;   // its stdin
    int from = -1; // its stdout
};

child spawn(std::vector<char*> const& command) {
    int in[2];
    int out[2];
    if (pipe(in) != 0 || pipe(out) != 0)
        fail(std::string("pipe: ") + std::strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        fail(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        execvp(command[0], command.data());
        std::fprintf(stderr, "bench_stdio_driver: cannot run %s: %s\n", command[0], std::strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    return {pid, in[1], out[0]};
}

// utime + stime of a live process, in seconds.
double cpu_seconds(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    auto close_paren = text.rfind(')');
    if (close_paren == std::string::npos)
        return 0;
    std::istringstream fields(text.substr(close_paren + 2));
    std::string field;
    unsigned long long utime = 0;
    unsigned long long stime = 0;
    // Fields after the command: state(3) ... utime(14) stime(15).
    for (int n = 3; n <= 15 && fields >> field; ++n) {
        if (n == 14)
            utime = std::stoull(field);
        if (n == 15)
            stime = std::stoull(field);
    }
    return double(utime + stime) / double(sysconf(_SC_CLK_TCK));
}

long rss_kb(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0)
            return std::strtol(line.c_str() + 6, nullptr, 10);
    return 0;
}

// ---- the conversation
// ---------------------------------------------------------------------------------------

std::string request_line(bool modern, std::size_t id, char const* method, json::object params) {
    if (modern)
        params["_meta"] = json::object{{"io.modelcontextprotocol/protocolVersion", modern_version},
                                       {"io.modelcontextprotocol/clientCapabilities", json::object{}}};
    json::object msg{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
    return json::serialize(msg) + "\n";
}

// A request line with its id left open, written once: the driver must outrun the fastest server by far, so
// the measured phase only splices each id in (the same bytes request_line writes).
class line_template {
public:
    explicit line_template(std::string const& line_with_id_zero) {
        auto const at = line_with_id_zero.find(R"("id":0)");
        if (at == std::string::npos)
            fail("internal: a request line without its id");
        prefix_ = line_with_id_zero.substr(0, at + 5);
        suffix_ = line_with_id_zero.substr(at + 6);
    }
    void append(std::string& out, std::size_t id) const {
        char digits[24];
        auto const end = std::to_chars(digits, digits + sizeof digits, id).ptr;
        out.append(prefix_).append(digits, end).append(suffix_);
    }

private:
    std::string prefix_;
    std::string suffix_;
};

line_template call_template(bool modern) {
    return line_template(
        request_line(modern, 0, "tools/call",
                     json::object{{"name", "echo"}, {"arguments", json::object{{"text", echo_text}}}}));
}

// Latencies rounded to the microsecond (what the BENCH line prints), counted per microsecond: a million
// answers a second would otherwise keep a growing vector of samples to sort.
class latencies {
public:
    void add(clock_type::duration d) {
        auto const us = std::max(0LL, std::llround(std::chrono::duration<double, std::micro>(d).count()));
        if (std::size_t(us) < counts_.size())
            ++counts_[std::size_t(us)];
        else
            beyond_.push_back(us);
        ++n_;
    }
    // The sample at rank floor(p % of the count), the one nth_element on all the samples would pick.
    long long percentile(double p) {
        if (n_ == 0)
            return 0;
        auto k = std::min(n_ - 1, std::size_t(p / 100.0 * double(n_)));
        for (std::size_t us = 0; us < counts_.size(); ++us) {
            if (k < counts_[us])
                return (long long)us;
            k -= counts_[us];
        }
        std::sort(beyond_.begin(), beyond_.end());
        return beyond_[k];
    }

private:
    std::vector<std::uint32_t> counts_ = std::vector<std::uint32_t>(1u << 20); // up to about a second
    std::vector<long long> beyond_;
    std::size_t n_ = 0;
};

struct tally {
    std::size_t answered = 0;
    std::size_t bad = 0;
    std::size_t notifications = 0;
    latencies latency;
};

class pump {
public:
    pump(child c) : c_(c) {}

    // Sends up to `count` requests (ids first_id.., each line appended by `make(id, out)`), no more once
    // `deadline` has passed, with at most `window` unanswered, and returns when every one sent has been
    // answered. answer_check judges every line (when `expect_echo`, a good answer echoes the text). Returns
    // how many were sent.
    template<class Make>
    std::size_t run(std::uint64_t first_id, std::size_t count, clock_type::time_point deadline,
                    std::size_t window, bool expect_echo, Make make, tally& t) {
        sent_at_.clear();
        check_.begin(first_id, expect_echo);
        std::size_t next = 0;
        std::size_t done = 0;
        bool sending = true;
        while (sending || done < next) {
            auto const now = clock_type::now();
            sending = next < count && now < deadline;
            // The lines appended here leave in one write: one clock reading stamps them all.
            while (sending && next < count && next - done < window && outgoing_.size() < (1u << 20)) {
                make(first_id + next, outgoing_);
                sent_at_.push_back(now);
                check_.sent();
                ++next;
            }
            if (!sending && done == next)
                break;
            pollfd fds[2] = {{c_.from, POLLIN, 0}, {c_.to, short(outgoing_.empty() ? 0 : POLLOUT), 0}};
            if (::poll(fds, 2, 30000) <= 0)
                stalled();
            if (fds[1].revents & (POLLOUT | POLLERR)) {
                auto n = ::write(c_.to, outgoing_.data(), outgoing_.size());
                if (n < 0 && errno != EAGAIN)
                    fail(std::string("write to the server: ") + std::strerror(errno));
                if (n > 0)
                    outgoing_.erase(0, std::size_t(n));
            }
            if (fds[0].revents & (POLLIN | POLLHUP)) {
                auto n = ::read(c_.from, incoming_, sizeof incoming_);
                if (n == 0)
                    fail("the server closed its stdout");
                if (n < 0 && errno != EAGAIN)
                    fail(std::string("read from the server: ") + std::strerror(errno));
                if (n > 0) {
                    auto const at = clock_type::now(); // every line of one read arrived together
                    done += check_.feed(std::string_view(incoming_, std::size_t(n)),
                                        [&](std::size_t slot) { t.latency.add(at - sent_at_[slot]); });
                }
            }
        }
        t.answered += check_.settled();
        t.bad += check_.bad();
        t.notifications += check_.notifications();
        if (check_.bad())
            std::fprintf(stderr, "bench_stdio_driver: %zu bad lines; the first: %s\n", check_.bad(),
                         check_.first_bad_line().c_str());
        return next;
    }

private:
    [[noreturn]] void stalled() {
        if (check_.bad())
            fail("the server stopped answering (30 s without progress) after " +
                 std::to_string(check_.bad()) + " bad lines; the first: " + check_.first_bad_line());
        fail("the server stopped answering (30 s without progress)");
    }

    child c_;
    duet::bench::answer_check check_{echo_text};
    std::string outgoing_;
    char incoming_[65536];
    std::vector<clock_type::time_point> sent_at_;
};

// Sends the era's opening request and fails unless its answer is a result.
void handshake(pump& p, bool modern) {
    tally t;
    auto make = [modern](std::size_t id, std::string& out) {
        if (modern)
            out += request_line(true, id, "server/discover", json::object{});
        else
            out +=
                request_line(false, id, "initialize",
                             json::object{{"protocolVersion", legacy_version},
                                          {"capabilities", json::object{}},
                                          {"clientInfo", json::object{{"name", "bench"}, {"version", "1"}}}});
    };
    p.run(0, 1, clock_type::time_point::max(), 1, false, make, t);
    if (t.bad)
        fail(modern ? "server/discover did not return a result" : "initialize did not return a result");
}

} // namespace

int main(int argc, char** argv) {
    signal(SIGPIPE, SIG_IGN);
    auto const o = parse_options(argc, argv);
    auto c = spawn(o.command);
    pump p(c);

    handshake(p, o.modern);
    if (!o.modern) {
        auto const initialized =
            std::string(R"({"jsonrpc":"2.0","method":"notifications/initialized"})") + "\n";
        if (::write(c.to, initialized.data(), initialized.size()) != ssize_t(initialized.size()))
            fail("cannot send notifications/initialized");
    }

    auto const call = call_template(o.modern);
    auto make = [&call](std::size_t id, std::string& out) {
        call.append(out, id);
    };
    if (o.warmup) {
        tally warm;
        p.run(1, o.warmup, clock_type::time_point::max(), o.window, true, make, warm);
        if (warm.bad)
            fail(std::to_string(warm.bad) + " bad answers during warm-up; is `echo` there?");
    }

    tally t;
    auto const cpu_before = cpu_seconds(c.pid);
    auto const start = clock_type::now();
    auto const deadline = o.seconds > 0 ? start + std::chrono::duration_cast<clock_type::duration>(
                                                      std::chrono::duration<double>(o.seconds))
                                        : clock_type::time_point::max();
    p.run(1 + o.warmup, o.requests ? o.requests : SIZE_MAX, deadline, o.window, true, make, t);
    auto const seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    auto const cpu = cpu_seconds(c.pid) - cpu_before;
    auto const rss = rss_kb(c.pid);

    close(c.to);
    int status = 0;
    waitpid(c.pid, &status, 0);

    std::printf("BENCH messages=%zu seconds=%.3f rate=%.0f p50_us=%lld p99_us=%lld bad=%zu notifications=%zu "
                "server_cpu_s=%.2f server_rss_kb=%ld\n",
                t.answered, seconds, double(t.answered) / seconds, t.latency.percentile(50),
                t.latency.percentile(99), t.bad, t.notifications, cpu, rss);
    return t.bad == 0 ? 0 : 1;
}
