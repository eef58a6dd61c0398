// The authorization flow's own HTTP: one request on a connection of its own, plain or TLS, its whole answer
// read and bounded. Metadata, registration and token requests are a handful per authorization, so no pool;
// redirects are answers like any other (the flow decides whether to follow one, and never with a token).
#pragma once

#include <duet/client/error.hpp>
#include <duet/tls/config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace duet::auth::detail {

struct http_request {
    std::string method = "GET";
    std::string url;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
};

struct http_response {
    unsigned status = 0;
    std::vector<std::pair<std::string, std::string>> headers; ///< names as sent
    std::string body;

    /// The first field named `name` (case-insensitive).
    [[nodiscard]] std::optional<std::string_view> header(std::string_view name) const noexcept;
    /// Every field named `name`, in order.
    [[nodiscard]] std::vector<std::string> headers_named(std::string_view name) const;
};

struct fetch_limits {
    std::chrono::milliseconds timeout = std::chrono::seconds(30); ///< the whole exchange
    std::size_t max_body = 1024 * 1024;
};

/// Sends `request` and reads its answer. An error when the URL is bad, the server cannot be reached or its
/// certificate is refused (tls_failed), the answer is not HTTP, is over the limits, or takes too long.
[[nodiscard]] boost::asio::awaitable<client::result<http_response>>
async_fetch(boost::asio::any_io_executor ex, http_request request, tls::client_config const& tls,
            fetch_limits limits = {});

/// `application/x-www-form-urlencoded` (WHATWG URL §5.2): every byte but ALPHA / DIGIT / "*-._" escaped,
/// spaces as '+'.
[[nodiscard]] std::string form_encode(std::span<std::pair<std::string, std::string> const> fields);
/// Percent-encoding for a URL's query (RFC 3986 unreserved characters kept).
[[nodiscard]] std::string url_encode(std::string_view text);
/// A query string's value for `name`, decoded; nullopt when absent. `several` is set when it appears more
/// than once (a redirect carrying two `state`s is refused).
[[nodiscard]] std::optional<std::string> query_value(std::string_view url, std::string_view name,
                                                     bool* several = nullptr);

} // namespace duet::auth::detail
