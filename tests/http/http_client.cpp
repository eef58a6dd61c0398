#include "http/http_client.hpp"

#include <duet/protocol/header_codec.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <charconv>
#include <deque>

namespace duet::test::http {

using protocol::iequals;

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;

namespace {

std::optional<std::string> find_header(std::vector<header_field> const& headers, std::string_view name) {
    for (auto const& h : headers)
        if (iequals(h.name, name))
            return h.value;
    return std::nullopt;
}

json::value parse_json(std::string_view text, std::string_view what) {
    boost::system::error_code ec;
    auto v = json::parse(text, ec);
    if (ec) {
        ADD_FAILURE() << what << " is not JSON (" << ec.message() << "): " << text;
        return nullptr;
    }
    return v;
}

std::string serialize_event(sse_event const& e) {
    std::string out;
    if (!e.id.empty())
        out += "id: " + e.id + "\n";
    if (!e.event.empty())
        out += "event: " + e.event + "\n";
    if (e.retry)
        out += "retry: " + std::to_string(*e.retry) + "\n";
    std::string_view data = e.data;
    for (;;) {
        auto const nl = data.find('\n');
        out += "data: ";
        out += data.substr(0, nl);
        out += "\n";
        if (nl == std::string_view::npos)
            break;
        data.remove_prefix(nl + 1);
    }
    return out + "\n";
}

} // namespace

// ---- endpoint --------------------------------------------------------------------------------------------

endpoint endpoint::parse(std::string_view url) {
    constexpr std::string_view scheme = "http://";
    if (!url.starts_with(scheme)) {
        ADD_FAILURE() << "not an http URL: " << url;
        return {};
    }
    url.remove_prefix(scheme.size());
    auto const slash = url.find('/');
    auto const authority = url.substr(0, slash);
    endpoint ep;
    ep.path = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
    auto const colon = authority.rfind(':');
    if (colon == std::string_view::npos) {
        ADD_FAILURE() << "no port in URL: " << url;
        return {};
    }
    ep.host = std::string(authority.substr(0, colon));
    if (ep.host.starts_with('[') && ep.host.ends_with(']'))
        ep.host = ep.host.substr(1, ep.host.size() - 2);
    auto const port = authority.substr(colon + 1);
    auto const r = std::from_chars(port.data(), port.data() + port.size(), ep.port);
    if (r.ec != std::errc{} || r.ptr != port.data() + port.size()) {
        ADD_FAILURE() << "bad port in URL: " << url;
        return {};
    }
    return ep;
}

std::string endpoint::authority() const {
    auto const h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    return h + ":" + std::to_string(port);
}

// ---- reply ----------------------------------------------------------------------------------------------

std::optional<std::string> reply::header(std::string_view name) const {
    return find_header(headers, name);
}

bool reply::is_sse() const {
    auto const type = header("Content-Type");
    return type && type->starts_with("text/event-stream");
}

std::vector<sse_event> reply::events() const {
    return parse_sse(body);
}

json::value reply::json() const {
    return parse_json(body, "the response body");
}

std::vector<json::value> reply::messages() const {
    std::vector<json::value> out;
    if (is_sse()) {
        for (auto const& e : events())
            if (!e.priming())
                out.push_back(parse_json(e.data, "an SSE data field"));
    } else if (!body.empty()) {
        out.push_back(json());
    }
    return out;
}

std::vector<sse_event> parse_sse(std::string_view text, std::string* rest) {
    std::vector<sse_event> out;
    for (;;) {
        // An event ends at a blank line; the server writes "\n" line ends.
        auto const end = text.find("\n\n");
        if (end == std::string_view::npos)
            break;
        auto block = text.substr(0, end + 1);
        text.remove_prefix(end + 2);
        sse_event e;
        bool has_data = false;
        while (!block.empty()) {
            auto const nl = block.find('\n');
            auto line = block.substr(0, nl);
            block.remove_prefix(nl + 1);
            if (line.empty() || line.starts_with(':'))
                continue;
            auto const colon = line.find(':');
            auto const field = line.substr(0, colon);
            auto value = colon == std::string_view::npos ? std::string_view{} : line.substr(colon + 1);
            if (value.starts_with(' '))
                value.remove_prefix(1);
            if (field == "data") {
                if (has_data)
                    e.data += "\n";
                e.data += value;
                has_data = true;
            } else if (field == "id") {
                e.id = value;
            } else if (field == "event") {
                e.event = value;
            } else if (field == "retry") {
                try {
                    e.retry = std::stol(std::string(value));
                } catch (std::exception const&) {
                    ADD_FAILURE() << "a retry field that is not a number: " << value;
                }
            }
        }
        if (has_data || !e.id.empty() || e.retry)
            out.push_back(std::move(e));
    }
    if (rest)
        *rest = std::string(text);
    return out;
}

// ---- response_stream ------------------------------------------------------------------------------------

struct response_stream::impl {
    asio::io_context io;
    beast::tcp_stream stream{io};
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    unsigned status = 0;
    std::vector<header_field> headers;
    std::string pending;          ///< body text not yet split into events
    std::deque<sse_event> events; ///< split, not yet taken
    bool ended = false;           ///< the body ended (or the connection is unusable)
    bool sent = false;            ///< the request went out
    std::string last_id;          ///< of the last event taken
    std::optional<long> retry;    ///< the last retry taken
    std::string where;            ///< "METHOD target" for failure messages

    // Runs one asynchronous operation to completion or until the deadline (tcp_stream's own timeout).
    template<class Start>
    boost::system::error_code run(steady::time_point deadline, Start start) {
        boost::system::error_code result;
        stream.expires_at(deadline);
        start([&result](boost::system::error_code ec, auto&&...) { result = ec; });
        io.restart();
        io.run();
        return result;
    }

    // Moves what the parser decoded into `pending` and splits out complete events.
    void take_body() {
        auto& body = parser.get().body();
        if (!body.empty()) {
            pending += body;
            body.clear();
        }
        std::string rest;
        for (auto& e : parse_sse(pending, &rest))
            events.push_back(std::move(e));
        pending = std::move(rest);
    }

    // Reads more of the body; false when nothing more will come.
    bool read_more(steady::time_point deadline) {
        if (ended)
            return false;
        if (parser.is_done()) {
            ended = true;
            return false;
        }
        auto const ec = run(deadline, [&](auto handler) {
            bhttp::async_read_some(stream, buffer, parser, std::move(handler));
        });
        if (ec == beast::error::timeout) {
            ADD_FAILURE() << "timed out reading the response to " << where;
            ended = true;
            return false;
        }
        if (ec) {
            // The server closed the connection: fine once the message is complete, a failure otherwise.
            if (!parser.is_done())
                ADD_FAILURE() << "the connection for " << where << " failed mid-body: " << ec.message();
            ended = true;
            return false;
        }
        if (parser.is_done())
            ended = true;
        return true;
    }
};

response_stream::response_stream(endpoint const& ep, request_spec const& spec,
                                 std::chrono::milliseconds timeout)
    : response_stream(ep, spec, true, timeout) {}

response_stream::response_stream(endpoint const& ep, request_spec const& spec, bool read_head_now,
                                 std::chrono::milliseconds timeout)
    : impl_(std::make_unique<impl>()) {
    auto& s = *impl_;
    auto const deadline = steady::now() + timeout;
    s.parser.body_limit(boost::none);
    s.parser.header_limit(64 * 1024);
    auto const target = spec.target.empty() ? ep.path : spec.target;
    s.where = spec.method + " " + target;

    boost::system::error_code ec;
    auto const address = asio::ip::make_address(ep.host, ec);
    if (ec) {
        ADD_FAILURE() << "bad host " << ep.host << ": " << ec.message();
        s.ended = true;
        return;
    }
    tcp::endpoint const to(address, ep.port);
    ec = s.run(deadline, [&](auto handler) { s.stream.async_connect(to, std::move(handler)); });
    if (ec) {
        ADD_FAILURE() << "connect to " << ep.authority() << ": " << ec.message();
        s.ended = true;
        return;
    }

    bhttp::request<bhttp::string_body> req;
    auto const verb = bhttp::string_to_verb(spec.method);
    if (verb == bhttp::verb::unknown)
        req.method_string(spec.method);
    else
        req.method(verb);
    req.target(target);
    req.version(11);
    for (auto const& h : spec.headers)
        req.insert(h.name, h.value);
    if (!find_header(spec.headers, "Host"))
        req.set(bhttp::field::host, ep.authority());
    if (!find_header(spec.headers, "Connection"))
        req.set(bhttp::field::connection, "close");
    req.body() = spec.body;
    if (!spec.body.empty() || spec.method == "POST")
        req.prepare_payload();
    ec = s.run(deadline, [&](auto handler) { bhttp::async_write(s.stream, req, std::move(handler)); });
    if (ec) {
        ADD_FAILURE() << "writing " << s.where << ": " << ec.message();
        s.ended = true;
        return;
    }
    s.sent = true;
    if (read_head_now)
        read_head(timeout);
}

void response_stream::read_head(std::chrono::milliseconds timeout) {
    auto& s = *impl_;
    if (!s.sent || s.status != 0 || s.ended)
        return;
    auto const deadline = steady::now() + timeout;
    auto const ec = s.run(deadline, [&](auto handler) {
        bhttp::async_read_header(s.stream, s.buffer, s.parser, std::move(handler));
    });
    if (ec) {
        ADD_FAILURE() << "reading the response head for " << s.where << ": " << ec.message();
        s.ended = true;
        return;
    }
    auto const& head = s.parser.get();
    s.status = head.result_int();
    for (auto const& field : head)
        s.headers.push_back({std::string(field.name_string()), std::string(field.value())});
    if (s.parser.is_done())
        s.ended = true;
    s.take_body();
}

response_stream::~response_stream() {
    close();
}

unsigned response_stream::status() const noexcept {
    return impl_->status;
}

std::vector<header_field> const& response_stream::headers() const noexcept {
    return impl_->headers;
}

std::optional<std::string> response_stream::header(std::string_view name) const {
    return find_header(impl_->headers, name);
}

bool response_stream::ended() const noexcept {
    return impl_->ended && impl_->events.empty();
}

std::optional<sse_event> response_stream::next(std::chrono::milliseconds timeout) {
    auto const deadline = steady::now() + timeout;
    for (;;) {
        auto e = next_event(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()));
        if (!e || !e->priming())
            return e;
    }
}

std::string const& response_stream::last_event_id() const noexcept {
    return impl_->last_id;
}

std::optional<long> response_stream::retry() const noexcept {
    return impl_->retry;
}

std::optional<sse_event> response_stream::next_event(std::chrono::milliseconds timeout) {
    auto& s = *impl_;
    auto const deadline = steady::now() + timeout;
    for (;;) {
        s.take_body();
        if (!s.events.empty()) {
            auto e = std::move(s.events.front());
            s.events.pop_front();
            if (!e.id.empty())
                s.last_id = e.id;
            if (e.retry)
                s.retry = e.retry;
            return e;
        }
        if (!s.read_more(deadline)) {
            s.take_body();
            if (!s.events.empty())
                continue;
            return std::nullopt;
        }
    }
}

json::value response_stream::next_message(std::chrono::milliseconds timeout) {
    auto e = next(timeout);
    if (!e)
        return nullptr;
    return parse_json(e->data, "an SSE data field");
}

reply response_stream::finish(std::chrono::milliseconds timeout) {
    auto& s = *impl_;
    auto const deadline = steady::now() + timeout;
    while (s.read_more(deadline)) {
    }
    reply r;
    r.status = s.status;
    r.headers = s.headers;
    for (auto const& e : s.events)
        r.body += serialize_event(e);
    s.events.clear();
    r.body += s.pending;
    r.body += s.parser.get().body();
    s.pending.clear();
    s.parser.get().body().clear();
    return r;
}

void response_stream::close() {
    auto& s = *impl_;
    boost::system::error_code ignored;
    if (s.stream.socket().is_open()) {
        s.stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
        s.stream.socket().close(ignored);
    }
    s.ended = true;
}

bool response_stream::server_closes(std::chrono::milliseconds timeout) {
    auto& s = *impl_;
    if (!s.stream.socket().is_open())
        return false;
    char byte = 0;
    std::size_t got = 0;
    auto const ec = s.run(steady::now() + timeout, [&](auto handler) {
        s.stream.async_read_some(
            asio::buffer(&byte, 1),
            [&got, handler = std::move(handler)](boost::system::error_code e, std::size_t n) mutable {
                got = n;
                handler(e);
            });
    });
    if (!ec && got > 0)
        ADD_FAILURE() << "the server sent more after the response to " << s.where;
    return ec == asio::error::eof || ec == asio::error::connection_reset;
}

reply exchange(endpoint const& ep, request_spec const& spec, std::chrono::milliseconds timeout) {
    response_stream s(ep, spec, timeout);
    return s.finish(timeout);
}

} // namespace duet::test::http
