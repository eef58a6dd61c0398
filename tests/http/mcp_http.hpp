// File: tests/http/mcp_http.hpp
//
// An MCP client over Streamable HTTP for the tests (DIGEST §9), built on http_client.hpp and the stdio
// suite's message builders (stdio/messages.hpp): it adds the headers each era needs, remembers the legacy
// session it opened, and records every message it sends and every message the server writes (JSON bodies and
// SSE data events alike) in a transcript that can be checked against the official schemas
// (support/transcript.hpp). One mcp_http is one client: at most one legacy session, any number of modern
// requests.
//
//     mcp_http c(server.ep());
//     auto r = c.post(modern_request(1, "tools/list"));       // + MCP-Protocol-Version, Mcp-Method headers
//     c.initialize("2025-11-25");                              // keeps Mcp-Session-Id
//     auto s = c.open(legacy_request(2, "tools/call", ...));   // a response read event by event
//     auto m = c.next(*s);                                      // recorded as received
//     c.expect_schema_valid();
#pragma once

#include "http/http_client.hpp"
#include "support/transcript.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::test::http {

inline constexpr std::string_view accept_both = "application/json, text/event-stream";

/// Base64 (RFC 4648, padded) of `bytes`: the test's own encoder, independent of the one under test.
std::string base64(std::string_view bytes);

/// Whether a header value must travel as `=?base64?...?=` (DIGEST §9), and the form it travels in.
std::string header_value(std::string_view value);

/// The headers a modern client derives from its request body: MCP-Protocol-Version (the `_meta` version),
/// Mcp-Method, and Mcp-Name (params.name or params.uri) when the method has one.
std::vector<header_field> modern_headers(boost::json::value const& message);

/// A POST carrying `body`: Accept (both types), Content-Type, then `headers`.
request_spec post_spec(std::string body, std::vector<header_field> headers = {});

/// Sets (replacing any of the same name, ignoring case) or removes a header of a request.
void set_header(request_spec& spec, std::string_view name, std::string value);
void remove_header(request_spec& spec, std::string_view name);

class mcp_http {
public:
    explicit mcp_http(endpoint ep, served_eras eras = served_eras::both);
    /// A client of `ep` in the session `opener` holds: the same client reaching another process of one
    /// deployment.
    mcp_http(endpoint ep, mcp_http const& opener) : mcp_http(std::move(ep)) {
        session_ = opener.session_;
        version_ = opener.version_;
        log_.record_restored_session(version_);
    }

    [[nodiscard]] endpoint const& ep() const noexcept { return ep_; }

    /// The request spec for a message: post_spec plus the modern headers when its `_meta` claims a version,
    /// or the session headers (Mcp-Session-Id, and MCP-Protocol-Version from 2025-06-18 on) inside a session.
    /// `extra` is applied last (set_header semantics).
    [[nodiscard]] request_spec spec_for(boost::json::value const& message,
                                        std::vector<header_field> const& extra = {}) const;

    /// POSTs one message (or batch) and reads the whole response; records both sides.
    reply post(boost::json::value const& message, std::vector<header_field> const& extra = {});
    /// Sends a prepared request (records `as` as sent, the response's messages as received).
    reply send(request_spec const& spec, boost::json::value const& as);

    /// POSTs one message and returns the response unread past its head (records the message as sent).
    std::unique_ptr<response_stream> open(boost::json::value const& message,
                                          std::vector<header_field> const& extra = {});
    /// Any request (GET ...) whose response is read as a stream.
    std::unique_ptr<response_stream> open_spec(request_spec const& spec);
    /// The next message of a stream, recorded; null when the stream ended.
    boost::json::value next(response_stream& s);
    /// The next request the server sends on a stream (e.g. elicitation/create), past what comes before it;
    /// null when the stream ended first.
    boost::json::value next_server_request(response_stream& s, std::string_view method);
    /// The rest of a stream, each message recorded.
    std::vector<boost::json::value> rest(response_stream& s);

    /// Opens a legacy session: POSTs initialize (no `_meta`), keeps the Mcp-Session-Id and the negotiated
    /// version, then POSTs notifications/initialized unless told not to. Returns the initialize response.
    reply initialize(std::string_view version, boost::json::object capabilities = {},
                     bool send_initialized = true);

    [[nodiscard]] std::optional<std::string> const& session_id() const noexcept { return session_; }
    [[nodiscard]] std::string const& version() const noexcept { return version_; }
    /// Forgets the session (the server is not told; see DELETE).
    void forget_session() { session_.reset(); }

    /// Headers every later request of this client carries (e.g. Authorization), initialize included;
    /// a request's own `extra` headers still replace them.
    void set_default_headers(std::vector<header_field> headers) { defaults_ = std::move(headers); }

    /// The session headers: Mcp-Session-Id, and MCP-Protocol-Version once negotiated (2025-06-18 on).
    [[nodiscard]] std::vector<header_field> session_headers() const;

    [[nodiscard]] transcript& log() noexcept { return log_; }
    /// Checks every message the server wrote to this client against the official schemas (skipped, with a
    /// note, when they are unavailable).
    void expect_schema_valid();

private:
    void record_reply(reply const& r);

    endpoint ep_;
    transcript log_;
    std::optional<std::string> session_;
    std::string version_;
    std::vector<header_field> defaults_;
};

/// The GET that opens a legacy session's standalone SSE stream (session headers, Accept), then `extra`
/// (set_header semantics, e.g. Last-Event-ID).
request_spec stream_spec(mcp_http const& c, std::vector<header_field> const& extra = {});

/// A modern subscriptions/listen for tools/list_changed.
boost::json::object listen_request(boost::json::value id);

/// The JSON-RPC error code of a response (0 when it is not an error).
std::int64_t code_of(boost::json::value const& response);

} // namespace duet::test::http
