/// @file duet/protocol/admission.hpp
///
/// Which era governs one request, or why it is refused: ERA-POLICY "Admission of one request", exactly, as
/// one pure function. Transports pass the facts only they know (the session they matched, HTTP headers) and
/// never decide the era themselves.
///
///     admission_context ctx{.session = conn.session_view(), .capabilities = &caps};
///     auto a = admit(request, ctx);
///     if(!a) reply(request.id, a.error().error);          // a.error().http_status for HTTP
///     else if(a->action == admission::action::handshake) ...negotiated a->version...
///
/// Only requests are admitted. Notifications and responses never go through admit() and never get an answer.
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/protocol/caller.hpp>
#include <duet/protocol/capabilities.hpp>
#include <duet/protocol/envelope.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/protocol/method_table.hpp>
#include <duet/protocol/param_headers.hpp>
#include <duet/protocol/version.hpp>

#include <boost/json/value.hpp>
#include <boost/system/result.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace duet::protocol {

/// Which eras a server accepts. A single-era server answers the other era's requests as a server of its own
/// era alone would.
enum class era_support : std::uint8_t { both, legacy_only, modern_only };

/// The session a request arrived in, as the transport matched it. (An unknown HTTP session never gets here:
/// route_post() refuses it, http_routing.hpp.)
struct session_view {
    /// The negotiated version of the legacy session (stdio: of the connection), once `initialize` was
    /// answered.
    std::optional<version> legacy;
};

struct http_header {
    std::string name;
    std::string value;
};

/// The HTTP facts admission needs: the request's `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and
/// `Mcp-Param-*` headers as received (other headers may be present and are ignored).
struct http_facts {
    std::vector<http_header> headers;
    /// Who sent the request, when the connection established it (mutual TLS); null otherwise.
    std::shared_ptr<caller_identity const> caller;
    /// The W3C Trace Context headers as received (empty when absent); protocol::trace_of() judges them.
    std::string traceparent;
    std::string tracestate;

    /// The first header with this name, ignoring case.
    [[nodiscard]] std::optional<std::string_view> find(std::string_view name) const noexcept;
};

/// A tool's `x-mcp-header` bindings by tool name; an empty span for an unknown tool or a tool without any.
using param_header_lookup = std::function<std::span<param_header const>(std::string_view tool)>;

struct admission_context {
    session_view session;
    server_capabilities const* capabilities = nullptr; ///< required
    era_support eras = era_support::both;
    http_facts const* http = nullptr;                   ///< null on stdio
    param_header_lookup const* param_headers = nullptr; ///< consulted for modern tools/call on HTTP
};

/// An admitted request.
struct admission {
    enum class action : std::uint8_t {
        serve,       ///< run the method under `era` / `version`
        handshake,   ///< legacy `initialize`: answer it with `version` (negotiated), then the session is
                     ///< Legacy(v)
        answer_ping, ///< `ping` before any session: answer `{}`
    };
    action what = action::serve;
    protocol::era era = era::legacy;
    protocol::version version = latest_handshake_version;
    method_info const* method = nullptr;      ///< the table row of the method
    std::optional<request_envelope> envelope; ///< modern only
};

/// Decides one request (ERA-POLICY steps 1-9 and the HTTP routing rules that depend on the body).
[[nodiscard]] boost::system::result<admission, rejection> admit(jsonrpc::request const& request,
                                                                admission_context const& context);

/// The version a legacy `initialize` gets: the requested one when it is a handshake version, else the latest
/// handshake version (never a modern one).
[[nodiscard]] version negotiate_legacy(boost::json::value const& initialize_params) noexcept;

} // namespace duet::protocol
