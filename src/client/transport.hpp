// File: src/client/transport.hpp (private)
//
// What the client's session needs from a transport: send a message, hear every message that comes back
// (with the HTTP status that carried it), and learn when a request can no longer be answered or the whole
// connection is gone. A transport never decides the era: the session tells it which headers to send.
//
// Transports run on the client's executor (one thread at a time) and report to a sink they hold weakly, so a
// transport outliving its session never calls into freed memory.
#pragma once

#include <duet/client/error.hpp>
#include <duet/client/target.hpp>
#include <duet/jsonrpc/message.hpp>
#include <duet/protocol/admission.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::client::detail {

class transport_sink {
public:
    virtual ~transport_sink() = default;
    /// One message from the server. `http_status` is the status of the HTTP response that carried it (0 on
    /// stdio and for messages on a legacy GET stream). `related` is the request whose own stream carried it
    /// (an HTTP POST's answer, or that POST's resumption), null where nothing ties it to one (stdio, the
    /// standalone GET stream).
    virtual void on_message(jsonrpc::message m, unsigned http_status, jsonrpc::request_id const* related) = 0;
    /// The request `id` will get no answer through this transport (HTTP error without a JSON-RPC body, a
    /// stream that ended without the response and cannot be resumed, a refused connection).
    virtual void on_request_failed(jsonrpc::request_id const& id, error e) = 0;
    /// The request `id` waits while the client is authorized (underway), or goes on (not): a person may take
    /// minutes in a browser, which is no reason for the request to time out.
    virtual void on_authorizing(jsonrpc::request_id const& id, bool underway) = 0;
    /// The connection is gone (stdio: the child closed its stdout).
    virtual void on_closed(error e) = 0;
};

/// How to send one message on HTTP.
struct send_facts {
    std::vector<protocol::http_header> headers; ///< modern routing headers
    bool legacy_session = false;                ///< send Mcp-Session-Id / MCP-Protocol-Version
};

class transport {
public:
    virtual ~transport() = default;
    /// Starts it (stdio: spawns the child). Must be called once before send().
    virtual boost::asio::awaitable<result<void>> async_start(std::weak_ptr<transport_sink> sink) = 0;
    /// Queues one message; failures come back through the sink.
    virtual void send(jsonrpc::message m, send_facts facts) = 0;
    /// Stops waiting for a request's answer (modern HTTP: closes its stream, which is the cancellation).
    virtual void abandon(jsonrpc::request_id const& id) = 0;
    /// Legacy HTTP: the version the session speaks (carried by MCP-Protocol-Version from now on), and the
    /// standalone GET stream opened. No-op on stdio.
    virtual void begin_legacy_session(protocol::version v) = 0;
    /// Ends it (HTTP: DELETE the legacy session; stdio: EOF, wait, SIGTERM, SIGKILL).
    virtual boost::asio::awaitable<void> async_close() = 0;
    [[nodiscard]] virtual bool is_http() const noexcept = 0;
};

/// What a stdio transport is told besides its target (client_options has the meaning of each).
struct stdio_settings {
    std::size_t max_message_bytes = 0;
    std::function<void(std::string_view line)> on_stderr; ///< unset: the child's stderr is ours
};

[[nodiscard]] std::shared_ptr<transport> make_stdio_transport(boost::asio::any_io_executor ex,
                                                              stdio_target target, stdio_settings settings);
/// `max_message_bytes`: the largest JSON body, SSE line or SSE event it reads.
[[nodiscard]] std::shared_ptr<transport>
make_http_transport(boost::asio::any_io_executor ex, http_target target, std::size_t max_message_bytes);

/// The error of a message over `max_message_bytes` (errc::too_large), saying what was cut off.
[[nodiscard]] error message_too_large(std::size_t max_message_bytes, unsigned http_status = 0);

} // namespace duet::client::detail
