// File: src/client/http_transport.hpp (private)
//
// The client side of Streamable HTTP (DIGEST §9) on Beast: each POST on a connection of its own while it
// is in flight (requests run concurrently), connections kept alive and reused once their response was read
// to the end; a JSON body or an SSE stream answers a POST. Legacy sessions add Mcp-Session-Id (minted by the
// server on initialize) and MCP-Protocol-Version, a standalone GET stream for the server's own messages,
// resumption of a POST stream that ended early (GET with Last-Event-ID after the server's `retry`), and
// DELETE at the end. Modern requests carry the routing headers the session computed; closing their stream is
// their cancellation.
//
// One class, its members defined by what they do: http_transport.cpp the transport's face (start, send,
// abandon, close); http_connections.cpp connecting, TLS and the kept-alive connections; http_answers.cpp what
// comes back (bodies and SSE streams read into messages for the sink, failures in words); http_post.cpp one
// message POSTed, with its authorization rounds; http_get_stream.cpp the legacy GET streams. Beast and
// OpenSSL come in here, so only those five files include this header (ARCHITECTURE: Asio and Beast stay in
// the transport sources); everything else reaches the transport through transport.hpp.
#pragma once

#include <duet/client/detail/request_head.hpp>

#include "response_parser.hpp"
#include "support/deadline_watch.hpp"
#include "tls/either_stream.hpp"
#include "transport.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <openssl/types.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::client::detail::streamable_http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using asio::awaitable;
using asio::use_awaitable;
using tcp = asio::ip::tcp;
using ::duet::support::deadline_watch;
using ::duet::support::watched_deadline;
inline constexpr auto tuple_awaitable = asio::as_tuple(use_awaitable);

inline constexpr auto connect_timeout = std::chrono::seconds(30);
/// How long a POST's SSE stream may stay open once its answer arrived, read so that its connection is kept.
inline constexpr auto stream_end_grace = std::chrono::seconds(1);
inline constexpr auto default_reconnect = std::chrono::milliseconds(1000);
inline constexpr int max_resumptions = 5;
/// Idle keep-alive connections kept for the next POSTs; more are closed as their exchanges end.
inline constexpr std::size_t max_idle_connections = 64;

// One HTTP exchange in flight: its socket, so that abandoning the request can close it.
struct exchange {
    explicit exchange(asio::any_io_executor ex) : stream(ex), io(stream.socket()) {}
    beast::tcp_stream stream; ///< connects (with Beast's timeout); reads and writes go through `io`
    tls::either_stream io;    ///< the socket, or TLS over it for https
    std::string failure;      ///< why connecting failed, in words, when the error code says too little
    beast::flat_buffer buffer;
    bool abandoned = false;
    bool connected = false; ///< a kept-alive connection, reused: the server may have closed it meanwhile
    /// While its request is written and the answer's head read (deadline_watch.hpp).
    watched_deadline deadline;
    void expire() {
        boost::system::error_code ignored;
        stream.socket().close(ignored);
    }
    /// While the rest of a POST's SSE stream is read after its answer (a watch of its own: an item is on one
    /// watch's list at a time).
    struct tail_read {
        watched_deadline deadline;
        exchange* owner;
        void expire() { owner->expire(); }
    } tail{{}, this};
};

// A request as it goes out: its head written by hand (request_head.hpp) and its body, kept together so that a
// request on a kept-alive connection the server had closed can go again.
struct outgoing {
    std::string head;
    std::string body;
};

// A connection that could not be made: tls_failed when its TLS handshake was what failed.
error connect_error(std::string const& url, boost::system::error_code ec, exchange const& x);
error status_error(unsigned status, std::string_view reason, bool legacy_session);

class http_transport : public transport, public std::enable_shared_from_this<http_transport> {
public:
    http_transport(asio::any_io_executor ex, http_target target, http_url url, std::size_t max_message_bytes);

    // ---- the transport (http_transport.cpp)
    awaitable<result<void>> async_start(std::weak_ptr<transport_sink> sink) override;
    void send(jsonrpc::message m, send_facts facts) override;
    void abandon(jsonrpc::request_id const& id) override;
    void begin_legacy_session(protocol::version v) override;
    awaitable<void> async_close() override;
    [[nodiscard]] bool is_http() const noexcept override { return true; }

private:
    request_fields base_fields(bool legacy_session) const;
    void forget(std::shared_ptr<exchange> const& x, std::optional<jsonrpc::request_id> const& id);

    // ---- connections (http_connections.cpp)
    std::shared_ptr<exchange> take_exchange();
    void keep(std::shared_ptr<exchange> const& x, response_parser const& parser);
    void remember_tls_session(exchange& x);
    awaitable<boost::system::error_code> async_handshake(std::shared_ptr<exchange> x);
    awaitable<boost::system::error_code> async_connect(std::shared_ptr<exchange> x);
    awaitable<boost::system::error_code> async_open(std::shared_ptr<exchange> x, outgoing const& req,
                                                    response_parser& parser);

    // ---- what comes back (http_answers.cpp)
    void deliver(jsonrpc::message m, unsigned status, std::optional<jsonrpc::request_id> const& related);
    void tell_authorizing(std::optional<jsonrpc::request_id> const& id, bool underway);
    void fail(jsonrpc::request_id const& id, error e);
    bool deliver_text(std::string_view text, unsigned status, std::optional<jsonrpc::request_id> const& id,
                      std::optional<jsonrpc::error_object>* id_less_error);

    struct sse_outcome {
        bool answered = false;
        bool too_large = false; ///< a line or event over max_message_bytes_: the stream was left there
        std::string last_event_id;
        std::optional<std::chrono::milliseconds> retry;
    };

    awaitable<sse_outcome> async_read_sse(std::shared_ptr<exchange> x, response_parser& parser,
                                          unsigned status, std::optional<jsonrpc::request_id> id,
                                          bool finish_post);

    // ---- POST (http_post.cpp)

    // A refusal (401 or 403) the authorization provider is to hear about before the request goes again.
    struct refusal {
        unsigned status = 0;
        std::vector<std::string> www_authenticate;
        std::string sent; ///< the Authorization field the refused request carried
    };

    static awaitable<void> async_post(std::shared_ptr<http_transport> self, jsonrpc::message m,
                                      send_facts facts);
    awaitable<std::optional<std::string>> async_credentials(std::optional<jsonrpc::request_id> const& id,
                                                            exchange const& x);
    // A whole body: the bytes already read, then reads until it is done (or the exchange is abandoned or the
    // transport closed). Only the reads suspend: most answers are whole after parse_buffered().
    awaitable<boost::system::error_code> async_read_body(std::shared_ptr<exchange> x,
                                                         response_parser& parser);
    static awaitable<std::optional<refusal>> async_post_once(std::shared_ptr<http_transport> self,
                                                             std::optional<jsonrpc::request_id> id,
                                                             bool is_initialize, outgoing& req,
                                                             send_facts const& facts, bool may_retry);

    // ---- legacy GET streams (http_get_stream.cpp)
    static awaitable<void> async_get_stream(std::shared_ptr<http_transport> self,
                                            std::optional<jsonrpc::request_id> awaited,
                                            std::string last_event_id, std::chrono::milliseconds delay);

    asio::any_io_executor ex_;
    http_target target_;
    http_url url_;
    std::string authority_; ///< the Host field, computed once
    std::weak_ptr<transport_sink> sink_;
    std::optional<std::string> session_id_;
    std::optional<protocol::version> legacy_version_;
    std::map<jsonrpc::request_id, std::weak_ptr<exchange>> open_;
    std::vector<std::weak_ptr<exchange>> streams_;
    std::vector<std::shared_ptr<exchange>> idle_; ///< kept-alive connections between POSTs
    std::optional<tcp::resolver::results_type> endpoints_;
    std::shared_ptr<asio::ssl::context> tls_context_; ///< https only
    std::shared_ptr<SSL_SESSION> tls_session_;        ///< the last resumable one, offered on reconnect
    std::shared_ptr<SSL_SESSION> tls_session_source_; ///< the connection's session it was copied from
    bool closed_ = false;
    std::size_t max_message_bytes_;
    /// Bounds the write of a request and the read of its answer's head (Beast's expiry did, per operation).
    deadline_watch<exchange> head_deadlines_{ex_, connect_timeout};
    /// Bounds the read of a POST's SSE stream past its answer.
    deadline_watch<exchange::tail_read> tail_deadlines_{ex_, stream_end_grace};
};

} // namespace duet::client::detail::streamable_http
