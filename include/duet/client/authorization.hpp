/// @file duet/client/authorization.hpp
///
/// How an HTTP client gets its `Authorization` header and learns that the server refused it: an interface the
/// client library calls and an authorization module implements (duet/auth/oauth.hpp for OAuth 2.1; a test or
/// an application may write its own). The client never reads a token, a challenge or a scope itself.
///
/// Before every request the client asks for the header; when the server answers 401 or 403 it hands over the
/// `WWW-Authenticate` values and sends the request again if told to, at most max_authorization_rounds times
/// for one request (a server that keeps refusing cannot keep a client busy).
#pragma once

#include <duet/client/error.hpp>

#include <boost/asio/awaitable.hpp>

#include <string>
#include <vector>

namespace duet::client {

inline constexpr int max_authorization_rounds = 3;

class http_authorization {
public:
    virtual ~http_authorization() = default;

    /// The `Authorization` field of the next request ("Bearer ..."), empty for none; an error fails the
    /// request with it. May refresh an expiring token first. Called on the client's executor.
    virtual boost::asio::awaitable<result<std::string>> async_header() = 0;

    /// The server refused a request that carried `sent` (empty: none) with `status` (401 or 403) and these
    /// `WWW-Authenticate` field values, in order. True: a new header is ready, send the request again.
    /// False: give up (the request fails with auth_required). An error fails the request with that error.
    virtual boost::asio::awaitable<result<bool>>
    async_refused(unsigned status, std::vector<std::string> const& www_authenticate,
                  std::string const& sent) = 0;
};

} // namespace duet::client
