// The calls parked for modern clients' retries (src/gateway/parked_calls.hpp) are bounded: parking one more
// than the bound abandons the call parked longest (its upstream request cancelled), which a retry then no
// longer finds (and so replays), while the others stay.
#include "gateway/parked_calls.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

namespace {

using duet::gateway::detail::forwarded_call;
using duet::gateway::detail::parked_calls;

// A modern downstream request's call that has asked the upstream's question and waits for its answer, as
// one parked between rounds does.
std::shared_ptr<forwarded_call> asking_call(boost::asio::io_context& io) {
    auto call = std::make_shared<forwarded_call>(io.get_executor(), true);
    duet::client::input_question q{"elicitation/create", {}, {}};
    boost::asio::co_spawn(io, call->async_ask(std::move(q)), boost::asio::detached);
    io.poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(2)); // each parked a little later than the last
    return call;
}

TEST(ParkedCalls, OneMoreThanTheBoundDropsTheCallParkedLongest) {
    boost::asio::io_context io;
    std::vector<std::size_t> drops;
    parked_calls parked(std::chrono::minutes(10), 2, [&](std::size_t max) { drops.push_back(max); });
    auto oldest = asking_call(io);
    auto middle = asking_call(io);
    auto newest = asking_call(io);
    parked.park(oldest);
    parked.park(middle);
    parked.park(middle); // parked again (another question of the call): no new place taken
    EXPECT_TRUE(drops.empty());
    parked.park(newest);
    EXPECT_EQ(drops, std::vector<std::size_t>{2});
    EXPECT_EQ(parked.size(), 2u);
    EXPECT_EQ(parked.find(oldest->handle()), nullptr) << "a retry for it finds nothing, and replays";
    EXPECT_TRUE(oldest->over()) << "its upstream request was cancelled";
    EXPECT_TRUE(oldest->cancel()->cancelled());
    EXPECT_EQ(parked.find(middle->handle()), middle);
    EXPECT_EQ(parked.find(newest->handle()), newest);
    parked.abandon_all();
    io.poll();
}

} // namespace
