/// @file duet/protocol/http_routing.hpp
///
/// Where one Streamable HTTP request goes, by era: ERA-POLICY "HTTP routing", as pure functions the HTTP
/// transport obeys. The transport looks up the `Mcp-Session-Id` it was sent and reads the body; these decide
/// what that means (a modern request, a new legacy session, the named one, or a refusal), and admit() then
/// decides the request itself.
///
///     switch(route_post(read_version_claim(r.params).what, r.method, lookup, srv.options().eras)) {
///     case post_route::unknown_session: ...unknown_session_rejection()...   // 404: re-initialize
///     ...
///     }
#pragma once

#include <duet/protocol/admission.hpp>
#include <duet/protocol/envelope.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/protocol/version.hpp>

#include <cstdint>
#include <optional>
#include <string_view>

namespace duet::protocol {

/// What a request's `Mcp-Session-Id` named, as the transport looked it up at the request's endpoint.
enum class session_lookup : std::uint8_t {
    none,    ///< no Mcp-Session-Id header
    live,    ///< a live legacy session of this endpoint
    unknown, ///< an id this endpoint does not know: never minted, ended, expired, or another endpoint's
};

/// Where one POSTed JSON-RPC request goes.
enum class post_route : std::uint8_t {
    modern,          ///< a version claim: stateless; a session id is ignored, never echoed nor touched
    modern_listen,   ///< a modern `subscriptions/listen`: a stream of its own (it hears server events)
    open_session,    ///< legacy `initialize`: a new session, kept when the handshake succeeds
    in_session,      ///< the live session named serves it
    sessionless,     ///< no claim and no session: admission answers (`ping` gets {}, the rest a refusal)
    unknown_session, ///< refused with unknown_session_rejection()
};

/// Decides a POSTed request from its `_meta` version claim, its method and its session. A claim makes the
/// request modern wherever it arrives unless the server serves the legacy era only (admit() then decides the
/// request as legacy); `initialize` opens a new session even when it names an unknown one.
[[nodiscard]] post_route route_post(version_claim::kind claim, std::string_view method,
                                    session_lookup session, era_support eras) noexcept;

/// Where a POSTed notification or response (to a request of the server) goes; it is never answered.
enum class message_route : std::uint8_t {
    to_session,      ///< the live session named receives it
    accept,          ///< no session: accepted (202) and dropped
    unknown_session, ///< refused with unknown_session_rejection()
};

[[nodiscard]] message_route route_post_message(session_lookup session) noexcept;

/// Where a POSTed JSON-RPC batch goes.
enum class batch_route : std::uint8_t {
    in_session,  ///< the live session, which negotiated a version that allows batches, serves each element
    not_allowed, ///< refused with batch_not_allowed() (400)
    unknown_session, ///< refused with unknown_session_rejection()
};

/// `negotiated`: the named live session's version (none when it has not negotiated one).
[[nodiscard]] batch_route route_batch(session_lookup session, std::optional<version> negotiated) noexcept;

/// Where a GET (the session's stream, or a resumption) or a DELETE (the session's end) goes: both exist only
/// within a legacy session.
enum class session_request_route : std::uint8_t {
    in_session,      ///< the live session named
    unknown_session, ///< refused with unknown_session_rejection()
    no_session,      ///< 405: without a session only POST is served
};

[[nodiscard]] session_request_route route_session_request(session_lookup session) noexcept;

/// 404 -32600 for a request naming a session the endpoint does not know: the client sends `initialize` to
/// open a new one (ERA-POLICY "HTTP routing").
[[nodiscard]] rejection unknown_session_rejection();

} // namespace duet::protocol
