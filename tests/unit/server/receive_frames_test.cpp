// connection::receive with several frames in one string: the lines of one stdio read handed over together.
// They must be handled exactly as the same frames received one by one: in order, each answered, a bad one
// refused without stopping the rest.
#include <duet/server/connection.hpp>
#include <duet/server/server.hpp>

#include "stdio/messages.hpp"
#include "unit/server/test_server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::test;

std::vector<std::string> received_samples() {
    return {json::serialize(initialize_request(1, "2025-11-25")),
            json::serialize(initialized_notification()),
            json::serialize(legacy_request(2, "tools/call", call_params("echo", {{"text", "one"}}))),
            "{not json",
            json::serialize(modern_request(3, "tools/call", call_params("echo", {{"text", "two"}}))),
            json::serialize(legacy_request(4, "tools/list"))};
}

enum class handed { one_by_one, as_lines, last_unended };

std::vector<std::string> answers(handed how) {
    duet::server::server srv(test_options());
    // Inline, so the answers' order is the requests' (a pool's would vary between runs).
    srv.add_tool(duet::server::tool{.name = "echo", .run_plain = duet::server::plain_run::inline_on_io},
                 [](json::object const& args, duet::server::request_context&) {
                     return duet::server::tool_result::text(args.at("text").as_string());
                 });
    boost::asio::io_context io;
    std::vector<std::string> lines;
    auto conn = duet::server::connection::create(srv, io.get_executor(),
                                                 [&](std::string line) { lines.push_back(std::move(line)); });
    if (how != handed::one_by_one) {
        std::string joined;
        for (auto const& f : received_samples())
            joined += f + "\n";
        if (how == handed::last_unended)
            joined.pop_back();
        conn->receive(std::move(joined));
    } else {
        for (auto& f : received_samples())
            conn->receive(std::move(f));
    }
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (lines.size() < 5 && std::chrono::steady_clock::now() < deadline)
        io.run_for(std::chrono::milliseconds(10));
    conn->finish([] {});
    io.run_for(std::chrono::milliseconds(50));
    return lines;
}

// The frames in one string, each ended by '\n', are answered as one by one.
TEST(ReceiveFrames, LinesInOneStringAreAnsweredAsOneByOne) {
    auto const as_lines = answers(handed::as_lines);
    auto const one_by_one = answers(handed::one_by_one);
    ASSERT_EQ(as_lines.size(), 5u); // initialize, 2, the parse error, 3, 4
    EXPECT_EQ(as_lines, one_by_one);
    EXPECT_NE(as_lines[2].find("-32700"), std::string::npos) << as_lines[2];
    EXPECT_NE(as_lines[4].find("\"id\":4"), std::string::npos) << as_lines[4];
}

// The last frame may lack its newline (stdio's last line at end of input): it is still a frame, answered.
TEST(ReceiveFrames, ALastFrameWithoutItsNewlineIsAnswered) {
    auto const last_unended = answers(handed::last_unended);
    ASSERT_EQ(last_unended.size(), 5u);
    EXPECT_EQ(last_unended, answers(handed::one_by_one));
}

} // namespace
