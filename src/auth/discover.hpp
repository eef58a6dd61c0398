// Discovery for one authorization (the spec's "Authorization Server Discovery"): the protected resource
// metadata, the check that it names this server, the authorization server's metadata and the check of its
// issuer. A server without protected resource metadata is read as the 2025-03-26 revision had it: its origin
// is the authorization server, with the default endpoints when that publishes no metadata either.
#pragma once

#include <duet/auth/challenge.hpp>
#include <duet/auth/metadata.hpp>
#include <duet/client/target.hpp>
#include <duet/tls/config.hpp>

#include "fetch.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>

namespace duet::auth::detail {

/// What an authorization needs to know of where it happens.
struct authorization_context {
    std::optional<resource_metadata> resource_doc; ///< none: a 2025-03-26 server without one
    std::string resource;                          ///< the `resource` parameter: the metadata's, verbatim
    std::string issuer;
    server_metadata server;
};

struct fetcher {
    boost::asio::any_io_executor ex;
    tls::client_config tls;
    fetch_limits limits;

    /// GETs a JSON document; nullopt (with `why` set) when there is none there (any status but 200, or no
    /// JSON); an error when the server cannot be reached at all.
    [[nodiscard]] boost::asio::awaitable<client::result<std::optional<boost::json::value>>>
    async_json(std::string const& url, std::string& why) const;
    [[nodiscard]] boost::asio::awaitable<client::result<http_response>>
    async_send(http_request request) const;
};

[[nodiscard]] boost::asio::awaitable<client::result<authorization_context>>
async_discover(fetcher const& f, client::http_url const& server, challenge const* bearer);

} // namespace duet::auth::detail
