// The Streamable HTTP client transport's face (the class and what each of its files holds:
// http_transport.hpp): starting it, sending a message, abandoning a request, the legacy session's begin and
// end, and the fields every request carries. What the session calls, apart from how a request travels.
#include "http_transport.hpp"

#include <duet/client/authorization.hpp>
#include <duet/client/detail/request_head.hpp>

#include "tls/context.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

namespace duet::client::detail {

namespace streamable_http {

http_transport::http_transport(asio::any_io_executor ex, http_target target, http_url url,
                               std::size_t max_message_bytes)
    : ex_(ex), target_(std::move(target)), url_(std::move(url)), authority_(url_.authority()),
      max_message_bytes_(max_message_bytes) {}

awaitable<result<void>> http_transport::async_start(std::weak_ptr<transport_sink> sink) {
    sink_ = std::move(sink);
    if (url_.tls) {
        auto made = tls::make_client_context(target_.tls);
        if (!made.context)
            co_return make_error(errc::usage, "TLS: " + made.error);
        tls_context_ = std::move(made.context);
    }
    co_return result<void>{};
}

void http_transport::send(jsonrpc::message m, send_facts facts) {
    if (closed_)
        return;
    auto self = shared_from_this();
    asio::co_spawn(ex_, async_post(std::move(self), std::move(m), std::move(facts)), asio::detached);
}

void http_transport::abandon(jsonrpc::request_id const& id) {
    auto const it = open_.find(id);
    if (it == open_.end())
        return;
    if (auto x = it->second.lock()) {
        x->abandoned = true;
        boost::system::error_code ignored;
        x->stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
        x->stream.socket().close(ignored);
    }
    open_.erase(it);
}

void http_transport::begin_legacy_session(protocol::version v) {
    legacy_version_ = v;
    auto self = shared_from_this();
    std::optional<jsonrpc::request_id> standalone; // awaits no answer
    std::string no_event_id;
    std::chrono::milliseconds const at_once{0};
    asio::co_spawn(ex_,
                   async_get_stream(std::move(self), std::move(standalone), std::move(no_event_id), at_once),
                   asio::detached);
}

awaitable<void> http_transport::async_close() {
    if (closed_)
        co_return;
    closed_ = true;
    for (auto& kv : open_)
        if (auto x = kv.second.lock()) {
            x->abandoned = true;
            boost::system::error_code ignored;
            x->stream.socket().close(ignored);
        }
    open_.clear();
    for (auto& w : streams_)
        if (auto x = w.lock()) {
            x->abandoned = true;
            boost::system::error_code ignored;
            x->stream.socket().close(ignored);
        }
    streams_.clear();
    for (auto& x : idle_) {
        boost::system::error_code ignored;
        x->stream.socket().close(ignored);
    }
    idle_.clear();
    if (session_id_) {
        // The session is over: tell the server (it may answer 405, which is fine).
        auto x = std::make_shared<exchange>(ex_);
        std::string credentials;
        if (target_.authorization)
            if (auto got = co_await target_.authorization->async_header())
                credentials = std::move(*got);
        outgoing req;
        auto fields = base_fields(true);
        if (!credentials.empty())
            fields.set("Authorization", credentials);
        append_request_head(req.head, "DELETE", url_.target, fields, 0);
        response_parser parser;
        [[maybe_unused]] auto ec = co_await async_open(x, req, parser);
    }
}

// The fields every request carries, in the order the client always set them. Views of members: the
// head is written before the caller's next suspension.
request_fields http_transport::base_fields(bool legacy_session) const {
    request_fields f;
    f.set("Host", authority_);
    f.set("User-Agent", "duet-client");
    for (auto const& h : target_.headers)
        f.set(h.first, h.second);
    if (legacy_session) {
        if (session_id_)
            f.set("Mcp-Session-Id", *session_id_);
        if (legacy_version_)
            f.set("MCP-Protocol-Version", protocol::to_string(*legacy_version_));
    }
    return f;
}

void http_transport::forget(std::shared_ptr<exchange> const& x,
                            std::optional<jsonrpc::request_id> const& id) {
    if (id) {
        auto const it = open_.find(*id);
        if (it != open_.end() && it->second.lock() == x)
            open_.erase(it);
    }
}

} // namespace streamable_http

std::shared_ptr<transport> make_http_transport(boost::asio::any_io_executor ex, http_target target,
                                               std::size_t max_message_bytes) {
    auto url = parse_http_url(target.url);
    if (!url)
        return nullptr;
    return std::make_shared<streamable_http::http_transport>(ex, std::move(target), std::move(*url),
                                                             max_message_bytes);
}

} // namespace duet::client::detail
