// The loopback redirect receiver (RFC 8252 §7.3): it listens on 127.0.0.1, answers the browser's redirect
// that carries this request's `state` and returns its URL, answers anything else with an error page and
// keeps waiting, and gives up after its time limit.
#include <duet/auth/user_steps.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <string>
#include <thread>

namespace {

namespace asio = boost::asio;
using namespace duet;

std::uint16_t port_of(std::string const& redirect_uri) {
    auto const colon = redirect_uri.rfind(':');
    return static_cast<std::uint16_t>(std::stoi(redirect_uri.substr(colon + 1)));
}

// One GET to 127.0.0.1:port, as a browser would send it; the status line of the answer.
std::string browser_get(std::uint16_t port, std::string const& target) {
    int const fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return "connect failed";
    }
    auto const request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    [[maybe_unused]] auto const sent = ::send(fd, request.data(), request.size(), 0);
    std::string answer;
    char buffer[2048];
    for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;)
        answer.append(buffer, static_cast<std::size_t>(n));
    ::close(fd);
    return answer.substr(0, answer.find("\r\n"));
}

asio::awaitable<client::result<std::string>> wait_for(std::shared_ptr<auth::loopback_redirect> r,
                                                      std::string state, std::chrono::seconds limit) {
    co_return co_await r->async_wait(std::move(state), limit);
}

TEST(LoopbackRedirect, ListensOnLoopbackAtACallbackPath) {
    asio::io_context io;
    auto r = auth::loopback_redirect::open(io.get_executor());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE((*r)->redirect_uri().starts_with("http://127.0.0.1:")) << (*r)->redirect_uri();
    EXPECT_TRUE((*r)->redirect_uri().ends_with("/callback")) << (*r)->redirect_uri();
    EXPECT_GT(port_of((*r)->redirect_uri()), 0);
}

TEST(LoopbackRedirect, AnswersOnlyTheRedirectWithThisStateAndReturnsIt) {
    asio::io_context io;
    auto r = auth::loopback_redirect::open(io.get_executor()).value();
    auto const port = port_of(r->redirect_uri());
    auto done = asio::co_spawn(io, wait_for(r, "the-state", std::chrono::seconds(30)), asio::use_future);
    std::string wrong_state, other_path, right;
    std::thread browser([&] {
        wrong_state = browser_get(port, "/callback?code=c&state=another");
        other_path = browser_get(port, "/favicon.ico");
        right = browser_get(port, "/callback?code=the-code&state=the-state");
    });
    io.run();
    browser.join();
    EXPECT_EQ(wrong_state, "HTTP/1.1 400 Bad Request");
    EXPECT_EQ(other_path, "HTTP/1.1 400 Bad Request");
    EXPECT_EQ(right, "HTTP/1.1 200 OK");
    auto const got = done.get();
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(*got, "http://127.0.0.1:" + std::to_string(port) + "/callback?code=the-code&state=the-state");
}

TEST(LoopbackRedirect, GivesUpAfterItsLimit) {
    asio::io_context io;
    auto r = auth::loopback_redirect::open(io.get_executor()).value();
    auto done = asio::co_spawn(io, wait_for(r, "s", std::chrono::seconds(1)), asio::use_future);
    io.run();
    auto const got = done.get();
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, client::errc::timeout);
    EXPECT_NE(got.error().message.find("no authorization came back within 1 s"), std::string::npos)
        << got.error().message;
}

TEST(LoopbackRedirect, APortInUseIsAnErrorInWords) {
    asio::io_context io;
    auto first = auth::loopback_redirect::open(io.get_executor()).value();
    auto const port = port_of(first->redirect_uri());
    auto second = auth::loopback_redirect::open(io.get_executor(), port);
    ASSERT_FALSE(second);
    EXPECT_NE(second.error().message.find("cannot listen for the authorization redirect on 127.0.0.1:" +
                                          std::to_string(port)),
              std::string::npos)
        << second.error().message;
}

} // namespace
