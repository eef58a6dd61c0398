#include "fetch.hpp"

#include <duet/client/target.hpp>
#include <duet/protocol/header_codec.hpp>

#include "support/descriptors.hpp"
#include "tls/context.hpp"
#include "tls/either_stream.hpp"
#include "tls/peer_check.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace duet::auth::detail {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

namespace {

bool unreserved(unsigned char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

void percent(std::string& out, unsigned char c) {
    constexpr char hex[] = "0123456789ABCDEF";
    out += '%';
    out += hex[c >> 4];
    out += hex[c & 0xF];
}

int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// A query component decoded: '+' is a space, %XX a byte (a malformed escape stays as it is).
std::string form_decode(std::string_view text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '+') {
            out += ' ';
        } else if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 &&
                   hex_value(text[i + 2]) >= 0) {
            out += static_cast<char>(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

client::error fetch_error(client::errc code, http_request const& r, std::string const& why) {
    return client::make_error(code, r.method + " " + r.url + ": " + why);
}

} // namespace

std::optional<std::string_view> http_response::header(std::string_view name) const noexcept {
    for (auto const& h : headers)
        if (protocol::iequals(h.first, name))
            return std::string_view(h.second);
    return std::nullopt;
}

std::vector<std::string> http_response::headers_named(std::string_view name) const {
    std::vector<std::string> out;
    for (auto const& h : headers)
        if (protocol::iequals(h.first, name))
            out.push_back(h.second);
    return out;
}

std::string url_encode(std::string_view text) {
    std::string out;
    for (unsigned char c : text)
        if (unreserved(c))
            out += static_cast<char>(c);
        else
            percent(out, c);
    return out;
}

std::string form_encode(std::span<std::pair<std::string, std::string> const> fields) {
    std::string out;
    auto add = [&](std::string_view text) {
        for (unsigned char c : text)
            if (c == ' ')
                out += '+';
            else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '*' ||
                     c == '-' || c == '.' || c == '_')
                out += static_cast<char>(c);
            else
                percent(out, c);
    };
    for (auto const& f : fields) {
        if (!out.empty())
            out += '&';
        add(f.first);
        out += '=';
        add(f.second);
    }
    return out;
}

std::optional<std::string> query_value(std::string_view url, std::string_view name, bool* several) {
    auto const q = url.find('?');
    if (several)
        *several = false;
    if (q == std::string_view::npos)
        return std::nullopt;
    auto query = url.substr(q + 1);
    query = query.substr(0, query.find('#'));
    std::optional<std::string> found;
    while (!query.empty()) {
        auto const amp = query.find('&');
        auto const pair = query.substr(0, amp);
        auto const eq = pair.find('=');
        if (form_decode(pair.substr(0, eq)) == name) {
            if (found && several)
                *several = true;
            if (!found)
                found = eq == std::string_view::npos ? std::string() : form_decode(pair.substr(eq + 1));
        }
        if (amp == std::string_view::npos)
            break;
        query.remove_prefix(amp + 1);
    }
    return found;
}

asio::awaitable<client::result<http_response>> async_fetch(asio::any_io_executor ex, http_request request,
                                                           tls::client_config const& tls,
                                                           fetch_limits limits) {
    auto url = client::parse_http_url(request.url);
    if (!url)
        co_return fetch_error(client::errc::usage, request, url.error().message);
    std::shared_ptr<asio::ssl::context> context;
    if (url->tls) {
        auto made = tls::make_client_context(tls);
        if (!made.context)
            co_return fetch_error(client::errc::usage, request, "TLS: " + made.error);
        context = std::move(made.context);
    }
    tcp::socket socket(ex);
    tls::either_stream io(socket);
    // One deadline for the whole exchange: on expiry the socket closes and whatever waits on it fails.
    asio::steady_timer deadline(ex);
    deadline.expires_after(limits.timeout);
    auto expired = std::make_shared<bool>(false);
    auto const on_expiry = [&socket, expired](boost::system::error_code ec) {
        if (ec)
            return;
        *expired = true;
        boost::system::error_code ignored;
        socket.close(ignored);
    };
    deadline.async_wait(on_expiry);
    auto const failed = [&](std::string const& what, boost::system::error_code ec) {
        deadline.cancel();
        if (*expired)
            return fetch_error(client::errc::timeout, request, "no answer within the time allowed");
        return fetch_error(client::errc::connect_failed, request, what + ": " + ec.message());
    };

    tcp::resolver resolver(ex);
    auto const port = std::to_string(url->port);
    auto const resolved = co_await resolver.async_resolve(url->host, port, tuple_awaitable);
    if (std::get<0>(resolved))
        co_return failed("cannot resolve " + url->host, std::get<0>(resolved));
    auto const endpoints = std::get<1>(resolved);
    auto const connected = co_await asio::async_connect(socket, endpoints, tuple_awaitable);
    if (std::get<0>(connected))
        co_return failed("cannot connect", std::get<0>(connected));
    support::set_close_on_exec(socket.native_handle());
    if (context) {
        io.start_tls(*context);
        auto const verdict = tls::check_peer(*io.tls(), url->host, tls.insecure && !tls.context);
        auto const shaken =
            co_await io.tls()->async_handshake(asio::ssl::stream_base::client, tuple_awaitable);
        if (std::get<0>(shaken)) {
            deadline.cancel();
            if (*expired)
                co_return fetch_error(client::errc::timeout, request, "the TLS handshake timed out");
            co_return fetch_error(client::errc::tls_failed, request,
                                  tls::describe_handshake_failure(std::get<0>(shaken), *verdict));
        }
    }

    bhttp::request<bhttp::string_body> out;
    out.method_string(request.method);
    out.target(url->target);
    out.version(11);
    out.set(bhttp::field::host, url->authority());
    out.set(bhttp::field::user_agent, "duet-client");
    out.set(bhttp::field::connection, "close");
    for (auto const& h : request.headers)
        out.set(h.first, h.second);
    out.body() = std::move(request.body);
    out.prepare_payload();
    auto const written = co_await bhttp::async_write(io, out, tuple_awaitable);
    if (std::get<0>(written))
        co_return failed("cannot send the request", std::get<0>(written));

    boost::beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(limits.max_body);
    parser.header_limit(64 * 1024);
    auto const read = co_await bhttp::async_read(io, buffer, parser, tuple_awaitable);
    deadline.cancel();
    if (auto ec = std::get<0>(read)) {
        if (ec == bhttp::error::body_limit)
            co_return fetch_error(client::errc::too_large, request,
                                  "the answer is over " + std::to_string(limits.max_body) + " bytes");
        co_return failed("cannot read the answer", ec);
    }
    auto& message = parser.get();
    http_response response;
    response.status = message.result_int();
    for (auto const& field : message)
        response.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    response.body = std::move(message.body());
    co_return response;
}

} // namespace duet::auth::detail
