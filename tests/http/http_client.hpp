// File: tests/http/http_client.hpp
//
// A small HTTP/1.1 client over real loopback sockets for the Streamable HTTP tests (DIGEST §9): one request
// per connection (`Connection: close` unless the caller names a Connection header), every wait bounded by a
// deadline (a hang fails the test; nothing ever sleeps). Server-sent events are read one at a time, so a test
// can act between them (add a tool at runtime, answer a server request, send SIGTERM).
//
//     auto ep = endpoint::parse("http://127.0.0.1:8750/mcp");
//     auto r = exchange(ep, {.headers = {{"Accept", "application/json, text/event-stream"}}, .body =
//     "{...}"}); r.status; r.header("Mcp-Session-Id"); r.messages();   // the JSON body, or every SSE data
//     event
//
//     response_stream s(ep, spec);                          // sends, reads the head
//     while(auto e = s.next()) use(e->data);                 // one event at a time, until the body ends
//
// Beast stays inside http_client.cpp; this header names only standard and Boost.JSON types.
#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::test::http {

/// Generous: the suite must pass on a loaded two-core machine; only a hang ever waits this long.
inline constexpr std::chrono::milliseconds http_wait = std::chrono::seconds(60);

struct endpoint {
    std::string host;
    std::uint16_t port = 0;
    std::string path;

    /// "http://HOST:PORT/PATH"; a test failure (and an empty endpoint) for anything else.
    static endpoint parse(std::string_view url);
    /// "HOST:PORT", what a client puts in Host.
    [[nodiscard]] std::string authority() const;
};

struct header_field {
    std::string name;
    std::string value;
};

struct request_spec {
    std::string method = "POST";
    std::string target;                ///< empty: the endpoint's path
    std::vector<header_field> headers; ///< Host (the endpoint's authority) is added unless named here
    std::string body;
};

struct sse_event {
    std::string id;            ///< the `id:` field, empty when none
    std::string event;         ///< the `event:` field, empty when none
    std::string data;          ///< `data:` lines joined with "\n"
    std::optional<long> retry; ///< the `retry:` field, when there is one

    /// Carries no message: a priming event (an id and empty data, SEP-1699) or a bare `retry:`. Clients
    /// dispatch no event for it, but remember its id and delay.
    [[nodiscard]] bool priming() const noexcept { return data.empty(); }
};

/// A complete response.
struct reply {
    unsigned status = 0;
    std::vector<header_field> headers;
    std::string body; ///< decoded (chunked transfer coding removed)

    /// The first header with this name, ignoring case.
    [[nodiscard]] std::optional<std::string> header(std::string_view name) const;
    [[nodiscard]] bool has_header(std::string_view name) const { return header(name).has_value(); }
    /// Content-Type is text/event-stream.
    [[nodiscard]] bool is_sse() const;
    /// The events of an SSE body, priming ones included.
    [[nodiscard]] std::vector<sse_event> events() const;
    /// The body as JSON; null and a test failure when it is not.
    [[nodiscard]] boost::json::value json() const;
    /// What the body carries: the JSON value of a JSON body, each data event of an SSE body; nothing for an
    /// empty body. A test failure for anything that is not JSON.
    [[nodiscard]] std::vector<boost::json::value> messages() const;
};

/// Splits SSE text into events; `rest` keeps an incomplete trailing event. Blocks with no data, id or retry
/// (comments) are dropped.
std::vector<sse_event> parse_sse(std::string_view text, std::string* rest = nullptr);

/// A response read as it arrives: the head on construction, then the body event by event (SSE) or whole.
class response_stream {
public:
    /// Connects, sends the request and reads the response head; a test failure when any step fails or
    /// `timeout` passes first (status() is then 0).
    response_stream(endpoint const& ep, request_spec const& spec,
                    std::chrono::milliseconds timeout = http_wait);
    /// Connects and sends the request only, when `read_head` is false (a request whose answer should never
    /// come: the test closes it first). read_head() reads it later.
    response_stream(endpoint const& ep, request_spec const& spec, bool read_head,
                    std::chrono::milliseconds timeout = http_wait);
    /// Reads the response head, unless already read (a test failure when it fails or `timeout` passes).
    void read_head(std::chrono::milliseconds timeout = http_wait);
    ~response_stream();
    response_stream(response_stream const&) = delete;
    response_stream& operator=(response_stream const&) = delete;

    [[nodiscard]] unsigned status() const noexcept;
    [[nodiscard]] std::vector<header_field> const& headers() const noexcept;
    [[nodiscard]] std::optional<std::string> header(std::string_view name) const;

    /// The next SSE event carrying a message (priming events pass by, remembered); nullopt when the body
    /// ended first (or, with a test failure, when the connection failed or `timeout` passed).
    std::optional<sse_event> next(std::chrono::milliseconds timeout = http_wait);
    /// The next SSE event of any kind, priming ones included.
    std::optional<sse_event> next_event(std::chrono::milliseconds timeout = http_wait);
    /// What a client resumes from: the id of the last event taken (priming ones included), empty before any.
    [[nodiscard]] std::string const& last_event_id() const noexcept;
    /// The last `retry:` delay taken, if any.
    [[nodiscard]] std::optional<long> retry() const noexcept;
    /// The next event that carries a JSON-RPC message, parsed; null when the body ended (see next()).
    boost::json::value next_message(std::chrono::milliseconds timeout = http_wait);
    /// Reads to the end of the body and returns the whole response (events already taken by next() are not
    /// in its body).
    reply finish(std::chrono::milliseconds timeout = http_wait);
    /// Whether the body has ended (the server finished the response or closed the connection).
    [[nodiscard]] bool ended() const noexcept;
    /// Closes the connection from our side, mid-body if need be.
    void close();
    /// After a complete response on a kept-alive connection: whether the server closes the connection
    /// within `timeout` (a test failure when it sends anything instead).
    bool server_closes(std::chrono::milliseconds timeout = http_wait);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

/// One request on its own connection, read to the end of the response (an SSE body included).
reply exchange(endpoint const& ep, request_spec const& spec, std::chrono::milliseconds timeout = http_wait);

} // namespace duet::test::http
