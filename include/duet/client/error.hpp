/// @file duet/client/error.hpp
///
/// What can go wrong on the client side, as a value: a local condition (usage, spawn, connect, timeout,
/// cancellation, a peer that broke the protocol) or the server's JSON-RPC error, kept verbatim. Every client
/// operation returns `result<T>`; nothing throws across the library's boundary except `.value()` at an edge.
///
///     auto r = co_await c->async_call_tool("echo", args);
///     if(!r && r.error().code == errc::rpc_error) std::cerr << r.error().rpc->code;
#pragma once

#include <duet/jsonrpc/error.hpp>

#include <boost/system/result.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace duet::client {

/// Why a client operation failed.
enum class errc : std::uint8_t {
    usage = 1,      ///< the caller asked for something impossible (e.g. a modern version on a legacy connect)
    spawn_failed,   ///< the stdio server could not be started
    connect_failed, ///< no TCP connection to the HTTP server
    closed,         ///< the server went away (stdio child exited, stream ended without an answer)
    http_status,    ///< an HTTP status that carries no JSON-RPC answer
    auth_required,  ///< HTTP 401 / 403: an authorization problem, never era evidence
    session_expired,    ///< HTTP 404 on a legacy session: the server forgot it
    timeout,            ///< no answer in time
    cancelled,          ///< the caller cancelled the request
    rpc_error,          ///< the server answered with a JSON-RPC error (see `rpc`)
    protocol_violation, ///< the server's answer breaks the protocol (bad JSON, wrong shape)
    version_rejected,   ///< the server settled on a version this client cannot speak
    tls_failed,         ///< https: the server's certificate was refused, or the TLS handshake failed
    too_large,          ///< the server sent a message over client_options::max_message_bytes
};

[[nodiscard]] std::string_view to_string(errc e) noexcept;

struct error {
    errc code = errc::protocol_violation;
    std::string message;
    std::optional<jsonrpc::error_object> rpc; ///< the server's error, when code == rpc_error
    unsigned http_status = 0;                 ///< the HTTP status that carried the failure (0: none / stdio)

    /// "rpc_error -32602: Unknown tool" style text for people.
    [[nodiscard]] std::string to_string() const;
};

/// Lets result<T>::value() throw (edges only).
[[noreturn]] void throw_exception_from_error(error const& e, boost::source_location const& loc);

template<class T>
using result = boost::system::result<T, error>;

[[nodiscard]] error make_error(errc code, std::string message, unsigned http_status = 0);
[[nodiscard]] error rpc_failure(jsonrpc::error_object e, unsigned http_status = 0);

} // namespace duet::client
