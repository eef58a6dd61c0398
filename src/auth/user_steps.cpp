#include <duet/auth/user_steps.hpp>

#include "fetch.hpp"
#include "support/descriptors.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace duet::auth {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

struct loopback_redirect::state {
    explicit state(asio::any_io_executor ex) : acceptor(ex) {}
    tcp::acceptor acceptor;
    std::string redirect_uri;
};

namespace {

constexpr std::string_view done_page =
    "<!doctype html><title>Authorized</title><p>Authorization complete. You may close this window.";
constexpr std::string_view wrong_page =
    "<!doctype html><title>Not this</title><p>This is not the redirect Duet waits for.";

// One request on `socket`: its target, answered with `page` chosen by `accept`.
asio::awaitable<std::optional<std::string>>
async_one_request(tcp::socket& socket, std::function<bool(std::string const&)> const& accept) {
    boost::beast::flat_buffer buffer;
    bhttp::request_parser<bhttp::empty_body> parser;
    parser.header_limit(16 * 1024);
    auto const read = co_await bhttp::async_read(socket, buffer, parser, tuple_awaitable);
    if (std::get<0>(read))
        co_return std::nullopt;
    auto const target = std::string(parser.get().target());
    bool const ours = parser.get().method() == bhttp::verb::get && accept(target);
    bhttp::response<bhttp::string_body> answer{ours ? bhttp::status::ok : bhttp::status::bad_request, 11};
    answer.set(bhttp::field::content_type, "text/html; charset=utf-8");
    answer.set(bhttp::field::cache_control, "no-store");
    answer.set(bhttp::field::connection, "close");
    answer.body() = std::string(ours ? done_page : wrong_page);
    answer.prepare_payload();
    co_await bhttp::async_write(socket, answer, tuple_awaitable);
    boost::system::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    if (!ours)
        co_return std::nullopt;
    co_return target;
}

} // namespace

loopback_redirect::loopback_redirect(std::unique_ptr<state> s) : state_(std::move(s)) {}
loopback_redirect::~loopback_redirect() = default;

client::result<std::shared_ptr<loopback_redirect>> loopback_redirect::open(asio::any_io_executor ex,
                                                                           std::uint16_t port) {
    auto s = std::make_unique<state>(ex);
    boost::system::error_code ec;
    tcp::endpoint const where(asio::ip::make_address_v4("127.0.0.1"), port);
    s->acceptor.open(where.protocol(), ec);
    if (!ec)
        s->acceptor.bind(where, ec);
    if (!ec)
        s->acceptor.listen(8, ec);
    if (ec)
        return client::make_error(client::errc::usage,
                                  "cannot listen for the authorization redirect on 127.0.0.1:" +
                                      std::to_string(port) + ": " + ec.message());
    support::set_close_on_exec(s->acceptor.native_handle());
    s->redirect_uri = "http://127.0.0.1:" + std::to_string(s->acceptor.local_endpoint().port()) + "/callback";
    return std::make_shared<loopback_redirect>(std::move(s));
}

std::string const& loopback_redirect::redirect_uri() const noexcept {
    return state_->redirect_uri;
}

asio::awaitable<client::result<std::string>> loopback_redirect::async_wait(std::string state,
                                                                           std::chrono::seconds limit) {
    auto& acceptor = state_->acceptor;
    asio::steady_timer deadline(acceptor.get_executor());
    deadline.expires_after(limit);
    auto expired = std::make_shared<bool>(false);
    auto const on_expiry = [&acceptor, expired](boost::system::error_code ec) {
        if (ec)
            return;
        *expired = true;
        boost::system::error_code ignored;
        acceptor.cancel(ignored);
    };
    deadline.async_wait(on_expiry);
    std::function<bool(std::string const&)> const accept = [&state](std::string const& target) {
        bool several = false;
        auto const got = detail::query_value(target, "state", &several);
        return target.starts_with("/callback?") && got && !several && *got == state;
    };
    for (;;) {
        auto accepted = co_await acceptor.async_accept(tuple_awaitable);
        if (std::get<0>(accepted)) {
            deadline.cancel();
            if (*expired)
                co_return client::make_error(client::errc::timeout, "no authorization came back within " +
                                                                        std::to_string(limit.count()) + " s");
            co_return client::make_error(client::errc::closed,
                                         "the redirect receiver stopped: " + std::get<0>(accepted).message());
        }
        auto socket = std::move(std::get<1>(accepted));
        auto target = co_await async_one_request(socket, accept);
        if (target) {
            deadline.cancel();
            auto const base =
                state_->redirect_uri.substr(0, state_->redirect_uri.size() - std::string("/callback").size());
            co_return base + *target;
        }
    }
}

namespace {

// The steps' bodies are coroutines of their own, taking copies: a coroutine lambda would keep only a pointer
// to its captures, in a std::function the caller might replace while it runs.
asio::awaitable<client::result<std::string>> async_loopback_step(std::shared_ptr<loopback_redirect> receiver,
                                                                 std::function<void(std::string const&)> show,
                                                                 std::chrono::seconds limit,
                                                                 std::string url) {
    auto state = detail::query_value(url, "state").value_or("");
    show(url);
    co_return co_await receiver->async_wait(std::move(state), limit);
}

asio::awaitable<client::result<std::string>> async_headless_step(asio::any_io_executor ex,
                                                                 tls::client_config tls, std::string url) {
    detail::http_request r;
    r.url = std::move(url);
    auto answer = co_await detail::async_fetch(ex, std::move(r), tls);
    if (!answer)
        co_return answer.error();
    auto const location = answer->header("Location");
    if (answer->status < 300 || answer->status > 399 || !location)
        co_return client::make_error(client::errc::auth_required,
                                     "the authorization endpoint answered HTTP " +
                                         std::to_string(answer->status) +
                                         " and no redirect: it wants a person, not a headless client");
    co_return std::string(*location);
}

} // namespace

user_step loopback_user_step(std::shared_ptr<loopback_redirect> receiver,
                             std::function<void(std::string const& authorization_url)> show,
                             std::chrono::seconds limit) {
    return [receiver, show, limit](std::string const& url) {
        return async_loopback_step(receiver, show, limit, url);
    };
}

user_step headless_user_step(asio::any_io_executor ex, tls::client_config tls) {
    return [ex, tls](std::string const& url) {
        return async_headless_step(ex, tls, url);
    };
}

} // namespace duet::auth
