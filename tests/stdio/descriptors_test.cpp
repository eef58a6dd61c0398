// serve_stdio() in-process over each kind of descriptor it meets (duet/transport/stdio.hpp): pipes, which the
// I/O thread serves itself, and regular files, which get a thread of their own. Whatever the kinds, every
// request of a pipelined burst is answered exactly once, end of input ends serving, and the descriptors are
// left in the blocking mode they were found in.
#include <duet/transport/stdio.hpp>

#include "stdio/messages.hpp"
#include "unit/server/test_server.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::test;

constexpr int burst = 500;

std::string requests_text() {
    std::string text;
    for (int i = 1; i <= burst; ++i)
        text += json::serialize(
                    modern_request(i, "tools/call", call_params("echo", {{"text", std::to_string(i)}}))) +
                "\n";
    return text;
}

// A temporary regular file, removed at the end of the test.
struct temp_file {
    temp_file() {
        char name[] = "/tmp/duet-stdio-fd-XXXXXX";
        fd = ::mkstemp(name);
        path = name;
    }
    ~temp_file() {
        if (fd >= 0)
            ::close(fd);
        ::unlink(path.c_str());
    }
    int fd = -1;
    std::string path;
};

void write_all(int fd, std::string const& s) {
    std::size_t off = 0;
    while (off < s.size()) {
        auto const n = ::write(fd, s.data() + off, s.size() - off);
        ASSERT_GT(n, 0);
        off += static_cast<std::size_t>(n);
    }
}

std::string read_all(int fd) {
    std::string out;
    char buf[65536];
    for (;;) {
        auto const n = ::read(fd, buf, sizeof buf);
        if (n <= 0)
            return out;
        out.append(buf, static_cast<std::size_t>(n));
    }
}

// Every line is the echo of one request of the burst, and each request is answered once.
void expect_every_answer_once(std::string const& output) {
    std::set<std::int64_t> ids;
    std::size_t start = 0;
    int lines = 0;
    while (start < output.size()) {
        auto const nl = output.find('\n', start);
        ASSERT_NE(nl, std::string::npos) << "an unterminated line";
        auto const v = json::parse(std::string_view(output).substr(start, nl - start));
        start = nl + 1;
        ++lines;
        auto const& o = v.as_object();
        ASSERT_TRUE(o.contains("result")) << v;
        auto const id = o.at("id").as_int64();
        auto const& text = o.at("result").at("content").at(0).at("text").as_string();
        EXPECT_EQ(text, std::to_string(id)) << v;
        EXPECT_TRUE(ids.insert(id).second) << "answered twice: " << id;
    }
    EXPECT_EQ(lines, burst);
    EXPECT_EQ(ids.size(), std::size_t(burst));
}

int serve(int in, int out, std::size_t flush_bytes = duet::transport::stdio_options{}.flush_bytes) {
    duet::server::server srv(test_options());
    add_test_features(srv);
    return duet::transport::serve_stdio(srv, {.input_fd = in, .output_fd = out, .flush_bytes = flush_bytes});
}

// The burst through pipes both ways; the output's lines, sorted (a pooled handler's answers may come in any
// order).
std::vector<std::string> sorted_answers_through_pipes(std::size_t flush_bytes) {
    int in[2];
    int out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0)
        return {};
    auto served = std::async(std::launch::async, [&] { return serve(in[0], out[1], flush_bytes); });
    auto output = std::async(std::launch::async, [&] { return read_all(out[0]); });
    write_all(in[1], requests_text());
    ::close(in[1]);
    EXPECT_EQ(served.get(), 0);
    ::close(out[1]);
    auto const text = output.get();
    expect_every_answer_once(text);
    ::close(in[0]);
    ::close(out[0]);
    std::vector<std::string> lines;
    for (std::size_t start = 0, nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
        lines.emplace_back(text.substr(start, nl - start));
    std::sort(lines.begin(), lines.end());
    return lines;
}

TEST(StdioDescriptors, PipesBothWaysAnswerEveryRequestOfABurstOnce) {
    int in[2];
    int out[2];
    ASSERT_EQ(::pipe(in), 0);
    ASSERT_EQ(::pipe(out), 0);
    auto const flags_in = ::fcntl(in[0], F_GETFL);
    auto const flags_out = ::fcntl(out[1], F_GETFL);
    auto served = std::async(std::launch::async, [&] { return serve(in[0], out[1]); });
    auto output = std::async(std::launch::async, [&] { return read_all(out[0]); });
    write_all(in[1], requests_text());
    ::close(in[1]);
    EXPECT_EQ(served.get(), 0);
    EXPECT_EQ(::fcntl(in[0], F_GETFL), flags_in) << "stdin left in another mode";
    EXPECT_EQ(::fcntl(out[1], F_GETFL), flags_out) << "stdout left in another mode";
    ::close(out[1]);
    expect_every_answer_once(output.get());
    ::close(in[0]);
    ::close(out[0]);
}

TEST(StdioDescriptors, InputFromARegularFileIsServedToItsEnd) {
    temp_file input;
    ASSERT_GE(input.fd, 0);
    write_all(input.fd, requests_text());
    ASSERT_EQ(::lseek(input.fd, 0, SEEK_SET), 0);
    int out[2];
    ASSERT_EQ(::pipe(out), 0);
    auto served = std::async(std::launch::async, [&] { return serve(input.fd, out[1]); });
    auto output = std::async(std::launch::async, [&] { return read_all(out[0]); });
    EXPECT_EQ(served.get(), 0);
    ::close(out[1]);
    expect_every_answer_once(output.get());
    ::close(out[0]);
}

TEST(StdioDescriptors, OutputToARegularFileGetsEveryAnswer) {
    temp_file output;
    ASSERT_GE(output.fd, 0);
    int in[2];
    ASSERT_EQ(::pipe(in), 0);
    auto served = std::async(std::launch::async, [&] { return serve(in[0], output.fd); });
    write_all(in[1], requests_text());
    ::close(in[1]);
    EXPECT_EQ(served.get(), 0);
    ASSERT_EQ(::lseek(output.fd, 0, SEEK_SET), 0);
    expect_every_answer_once(read_all(output.fd));
    ::close(in[0]);
}

// A client that stops reading: the writes fail (EPIPE, never SIGPIPE) and serve_stdio says so with 1.
TEST(StdioDescriptors, ClosedOutputPipeEndsWithOne) {
    int in[2];
    int out[2];
    ASSERT_EQ(::pipe(in), 0);
    ASSERT_EQ(::pipe(out), 0);
    ::close(out[0]);
    auto served = std::async(std::launch::async, [&] { return serve(in[0], out[1]); });
    write_all(in[1], requests_text());
    ::close(in[1]);
    EXPECT_EQ(served.get(), 1);
    ::close(in[0]);
    ::close(out[1]);
}

// stdio_options::flush_bytes: answers written as soon as they wait (1 byte) or only at the end of each turn
// (never by size) are the same lines, each request answered once.
TEST(StdioDescriptors, WritingPartWayThroughABurstGivesTheSameAnswers) {
    auto const at_once = sorted_answers_through_pipes(1);
    auto const per_turn = sorted_answers_through_pipes(SIZE_MAX);
    ASSERT_EQ(at_once.size(), std::size_t(burst));
    EXPECT_EQ(at_once, per_turn);
}

} // namespace
