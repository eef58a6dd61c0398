// What comes back over HTTP: a JSON body or an SSE stream read into messages for the session's sink, and
// the failures a request meets told in words. Shared by POSTs and the legacy GET streams, so apart from
// both.
#include <duet/client/detail/sse_parser.hpp>
#include <duet/jsonrpc/codec.hpp>

#include "http_transport.hpp"

#include <boost/beast/http.hpp>

namespace duet::client::detail::streamable_http {

bool answers(jsonrpc::message const& m, jsonrpc::request_id const& id) {
    if (auto const* r = std::get_if<jsonrpc::response>(&m))
        return r->id == id;
    if (auto const* e = std::get_if<jsonrpc::error_response>(&m))
        return e->id && *e->id == id;
    return false;
}

error connect_error(std::string const& url, boost::system::error_code ec, exchange const& x) {
    if (!x.failure.empty())
        return make_error(errc::tls_failed, "cannot reach " + url + ": " + x.failure);
    return make_error(errc::connect_failed, "cannot reach " + url + ": " + ec.message());
}

error status_error(unsigned status, std::string_view reason, bool legacy_session) {
    if (status == 401 || status == 403)
        return make_error(errc::auth_required,
                          "the server requires authorization (HTTP " + std::to_string(status) + ")", status);
    if (status == 404 && legacy_session)
        return make_error(errc::session_expired, "the server no longer knows this session (HTTP 404)",
                          status);
    return make_error(errc::http_status, "HTTP " + std::to_string(status) + " " + std::string(reason),
                      status);
}

void http_transport::deliver(jsonrpc::message m, unsigned status,
                             std::optional<jsonrpc::request_id> const& related) {
    if (auto sink = sink_.lock())
        sink->on_message(std::move(m), status, related ? &*related : nullptr);
}

void http_transport::tell_authorizing(std::optional<jsonrpc::request_id> const& id, bool underway) {
    if (auto sink = sink_.lock(); sink && id)
        sink->on_authorizing(*id, underway);
}

void http_transport::fail(jsonrpc::request_id const& id, error e) {
    if (auto sink = sink_.lock())
        sink->on_request_failed(id, std::move(e));
}

// Parses one body (or SSE data field) and delivers its messages; true when one of them answers `id`.
bool http_transport::deliver_text(std::string_view text, unsigned status,
                                  std::optional<jsonrpc::request_id> const& id,
                                  std::optional<jsonrpc::error_object>* id_less_error) {
    bool answered = false;
    auto frame = jsonrpc::parse_frame(text);
    auto one = [&](jsonrpc::parsed& p) {
        if (!p)
            return;
        if (id && answers(*p, *id))
            answered = true;
        if (auto const* e = std::get_if<jsonrpc::error_response>(&*p); e && !e->id) {
            if (id_less_error)
                *id_less_error = e->error;
            return;
        }
        deliver(std::move(*p), status, id);
    };
    if (auto* single = std::get_if<jsonrpc::parsed>(&frame.content))
        one(*single);
    else
        for (auto& e : std::get<jsonrpc::batch>(frame.content).elements)
            one(e);
    return answered;
}

// Reads an SSE body to its end, delivering every message. Once `id`'s answer arrived, a resumption stream
// is left at once; a POST's stream (`finish_post`) is read to its end for up to stream_end_grace more: a
// server writes the stream's last chunk right after the answer's event, often in a write of its own, and
// a response read to its end keeps its connection for the next POST instead of costing a new one.
awaitable<http_transport::sse_outcome>
http_transport::async_read_sse(std::shared_ptr<exchange> x, response_parser& parser, unsigned status,
                               std::optional<jsonrpc::request_id> id, bool finish_post) {
    sse_parser sse(max_message_bytes_);
    sse_outcome out;
    auto take = [&] {
        auto& body = parser.body();
        for (auto const& e : sse.feed(body))
            if (e.has_data && !e.data.empty() && deliver_text(e.data, status, id, nullptr))
                out.answered = true;
        body.clear();
        if (sse.overflowed()) {
            // Never read to its end: the connection goes, and the rest of the stream with it.
            out.too_large = true;
            x->expire();
        }
    };
    take();
    bool finishing = false;
    while (!parser.is_done() && !x->abandoned && !closed_ && !out.too_large) {
        if (id && out.answered && !finishing) {
            if (!finish_post)
                break; // the response SHOULD end the stream; never wait for the server to close it
            finishing = true;
            tail_deadlines_.start(std::shared_ptr<exchange::tail_read>(x, &x->tail));
        }
        auto const got = co_await bhttp::async_read_some(x->io, x->buffer, parser, tuple_awaitable);
        take();
        if (std::get<0>(got))
            break;
    }
    if (finishing)
        decltype(tail_deadlines_)::stop(x->tail);
    out.last_event_id = sse.last_event_id();
    out.retry = sse.retry();
    co_return out;
}

} // namespace duet::client::detail::streamable_http
