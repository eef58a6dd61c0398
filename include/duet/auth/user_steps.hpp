/// @file duet/auth/user_steps.hpp
///
/// The user's part of the authorization code grant (oauth_options::user), ready-made: a loopback redirect
/// receiver for a person with a browser (RFC 8252 §7.3: `http://127.0.0.1:PORT/callback`, one-shot, answering
/// only the redirect that carries this request's `state`), and a headless step for authorization servers that
/// approve without a page (test servers, the conformance suite).
///
///     auto receiver = auth::loopback_redirect::open(ex).value();
///     options.redirect_uri = receiver->redirect_uri();
///     options.user = auth::loopback_user_step(receiver, [](std::string const& url) { open_browser(url); });
#pragma once

#include <duet/auth/oauth.hpp>
#include <duet/tls/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace duet::auth {

class loopback_redirect {
public:
    /// Listens on 127.0.0.1:`port` (0: any free port). An error when it cannot.
    [[nodiscard]] static client::result<std::shared_ptr<loopback_redirect>>
    open(boost::asio::any_io_executor ex, std::uint16_t port = 0);
    /// `http://127.0.0.1:PORT/callback`.
    [[nodiscard]] std::string const& redirect_uri() const noexcept;
    /// Waits for the browser to come back with `state`, up to `limit`, and returns the URL it came to. Other
    /// requests (another path, another state, a favicon) get an error page and the wait goes on.
    [[nodiscard]] boost::asio::awaitable<client::result<std::string>> async_wait(std::string state,
                                                                                 std::chrono::seconds limit);

    ~loopback_redirect();
    struct state;
    explicit loopback_redirect(std::unique_ptr<state> s);

private:
    std::unique_ptr<state> state_;
};

/// Shows the authorization URL with `show` (print it, open a browser), then waits on `receiver`.
[[nodiscard]] user_step loopback_user_step(std::shared_ptr<loopback_redirect> receiver,
                                           std::function<void(std::string const& authorization_url)> show,
                                           std::chrono::seconds limit = std::chrono::minutes(5));

/// GETs the authorization URL and returns the Location it redirects to, as a browser would arrive there.
[[nodiscard]] user_step headless_user_step(boost::asio::any_io_executor ex, tls::client_config tls = {});

} // namespace duet::auth
