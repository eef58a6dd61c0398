// A legacy session's GET streams over HTTP: the standalone one for the server's own messages, reconnecting
// while the session lives, and the resumption of a POST stream that ended before its answer (Last-Event-ID,
// SEP-1699). Apart from POSTs: a loop of its own, of reconnects, refusals and resumptions.
#include <duet/client/authorization.hpp>
#include <duet/client/detail/request_head.hpp>

#include "http_transport.hpp"

#include <boost/asio/steady_timer.hpp>

#include <algorithm>

namespace duet::client::detail::streamable_http {

// A legacy GET stream: the standalone one (`awaited` empty; reconnects while the session lives) or the
// resumption of a POST stream (`awaited` set; ends once that answer arrived).
awaitable<void> http_transport::async_get_stream(std::shared_ptr<http_transport> self,
                                                 std::optional<jsonrpc::request_id> awaited,
                                                 std::string last_event_id, std::chrono::milliseconds delay) {
    asio::steady_timer timer(self->ex_);
    int refusals = 0;
    int unreachable = 0; ///< connections refused in a row
    for (int attempt = 0; !self->closed_; ++attempt) {
        if (delay.count() > 0) {
            timer.expires_after(delay);
            co_await timer.async_wait(tuple_awaitable);
            if (self->closed_)
                co_return;
        }
        if (awaited && attempt >= max_resumptions) {
            self->fail(*awaited, make_error(errc::closed, "the response stream could not be resumed"));
            co_return;
        }
        auto x = std::make_shared<exchange>(self->ex_);
        std::erase_if(self->streams_, [](auto const& w) { return w.expired(); });
        self->streams_.push_back(x);
        if (awaited)
            self->open_[*awaited] = x;
        std::string credentials;
        if (self->target_.authorization) {
            auto got = co_await self->async_credentials(awaited, *x);
            if (!got) {
                self->forget(x, awaited);
                co_return;
            }
            credentials = std::move(*got);
        }
        outgoing req;
        {
            auto fields = self->base_fields(true);
            fields.set("Accept", "text/event-stream");
            if (!last_event_id.empty())
                fields.set("Last-Event-ID", last_event_id);
            if (!credentials.empty())
                fields.set("Authorization", credentials);
            append_request_head(req.head, "GET", self->url_.target, fields, 0);
        }
        response_parser parser;
        auto const ec = co_await self->async_open(x, req, parser);
        if (x->abandoned || self->closed_) {
            self->forget(x, awaited);
            co_return;
        }
        unsigned const status = ec ? 0 : parser.status();
        if ((status == 401 || status == 403) && self->target_.authorization &&
            refusals++ < max_authorization_rounds) {
            // Asked again with what the provider then holds; the answer's body is not needed.
            x->expire();
            auto const challenges = parser.www_authenticate();
            auto again = co_await self->target_.authorization->async_refused(status, challenges, credentials);
            if (x->abandoned || self->closed_) {
                self->forget(x, awaited);
                co_return;
            }
            if (again && *again) {
                delay = std::chrono::milliseconds(0);
                --attempt;
                continue;
            }
        }
        bool const sse = !ec && parser.content_type().starts_with("text/event-stream");
        if (ec && ++unreachable <= max_resumptions) {
            // The server is away (restarting, say): try again, waiting longer each time.
            self->forget(x, awaited);
            delay = std::max(delay * 2, default_reconnect);
            continue;
        }
        if (ec && !awaited) {
            // Gone for good: the connection is over for its owner, as when the session is forgotten.
            self->forget(x, awaited);
            if (auto sink = self->sink_.lock())
                sink->on_closed(connect_error(self->target_.url, ec, *x));
            co_return;
        }
        if (ec || status != 200 || !sse) {
            // No stream offered (405) or none for us: the standalone stream is optional; a resumption
            // that cannot happen loses its request.
            self->forget(x, awaited);
            if (awaited)
                self->fail(*awaited, ec ? connect_error(self->target_.url, ec, *x)
                                        : status_error(status, parser.reason(), true));
            else if (!ec && status == 404 && self->session_id_)
                // The server no longer knows the session (it restarted, or expired it): nothing will
                // come on it again, and the connection is over for its owner to begin anew.
                if (auto sink = self->sink_.lock())
                    sink->on_closed(status_error(status, parser.reason(), true));
            co_return;
        }
        unreachable = 0;
        auto outcome = co_await self->async_read_sse(x, parser, 0, awaited, false);
        self->forget(x, awaited);
        if (awaited && outcome.answered)
            co_return;
        if (awaited && outcome.too_large) {
            self->fail(*awaited, message_too_large(self->max_message_bytes_));
            co_return;
        }
        if (x->abandoned)
            co_return;
        if (!outcome.last_event_id.empty())
            last_event_id = outcome.last_event_id;
        delay = outcome.retry.value_or(default_reconnect);
    }
}

} // namespace duet::client::detail::streamable_http
