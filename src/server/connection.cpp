// The connection's order and lifetime: its strand, draining at the end of input, server events, and what a
// request's context reaches back for (notifications, requests to the client). The class is in
// connection_impl.hpp.
#include <duet/server/connection.hpp>

#include "connection_impl.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <utility>

namespace duet::server {

namespace asio = boost::asio;

void connection::impl::finish(std::function<void()> done) {
    asio::post(strand_, [self = shared_from_this(), done = std::move(done)]() mutable {
        self->draining_ = true;
        self->done_ = std::move(done);
        self->listens_.end_all();
        self->client_requests_.fail_all();
        self->maybe_done();
    });
}

void connection::impl::on_server_event(server_event const& e) {
    asio::post(strand_, [self = shared_from_this(), e] { self->deliver(e); });
}

void connection::impl::cancel_requests() {
    asio::post(strand_, [self = shared_from_this()] {
        self->dispatch_.cancel_all();
        self->listens_.cancel_all();
    });
}

void connection::impl::restore_session(session_state const& st) {
    std::shared_ptr<void> kept;
    if (auto b = server_.current_backend())
        if (auto admitted = b->on_session(st.version, st.client_capabilities, st.client_info))
            kept = std::move(*admitted);
    session_.emplace(server_, st, std::move(kept));
    legacy_version_ = st.version;
}

void connection::impl::refresh_session(session_state st) {
    asio::dispatch(strand_, [self = shared_from_this(), st = std::move(st)] {
        if (self->session_)
            self->session_->apply(st);
    });
}

void connection::impl::maybe_done() {
    if (draining_ && active_ == 0 && done_) {
        auto done = std::move(done_);
        done_ = nullptr;
        done();
    }
}

void connection::impl::session_changed() {
    if (options_.on_session_change)
        options_.on_session_change(session_->state());
}

void connection::impl::notify(detail::request_state const& request, jsonrpc::notification n) {
    if (request.cancelled.load())
        return;
    auto out = request.detached.load() ? writer() : request.out;
    asio::dispatch(
        strand_, [self = shared_from_this(), n = std::move(n), out = std::move(out)] { self->send(n, out); });
}

asio::awaitable<peer_result> connection::impl::async_request_client(detail::request_state const& request,
                                                                    std::string method,
                                                                    boost::json::value params,
                                                                    std::chrono::milliseconds timeout) {
    auto self = shared_from_this(); // the connection outlives the question
    // Copied before the first suspension, as `request` is only lent; a task's go on the session's stream.
    writer out = request.detached.load() ? writer() : request.out;
    co_await asio::dispatch(strand_, asio::use_awaitable);
    if (draining_ || !session_)
        co_return peer_failure{make_error_code(peer_errc::connection_closed), std::nullopt};
    // Only what the client declared at initialize may be asked of it.
    if (!session_->client_can_answer(method, params))
        co_return peer_failure{make_error_code(peer_errc::capability_missing), std::nullopt};
    if (timeout <= std::chrono::milliseconds::zero())
        timeout = options_.client_request_timeout; // the caller left it to the connection
    auto const sent = client_requests_.open(strand_, timeout, options_.client_request_id_prefix);
    send(jsonrpc::request{sent.id, std::move(method), std::move(params)}, out);
    co_await sent.wake->async_wait(asio::as_tuple(asio::use_awaitable));
    auto outcome = client_requests_.close(sent.id);
    if (!outcome) {
        // Tell the client we gave up, so it can stop asking its user (cancellation goes both ways).
        send(jsonrpc::notification{"notifications/cancelled",
                                   boost::json::object{{"requestId", sent.id.to_json()},
                                                       {"reason", "timed out"}}},
             out);
        co_return peer_failure{make_error_code(peer_errc::timed_out), std::nullopt};
    }
    co_return std::move(*outcome);
}

void connection::impl::deliver(server_event const& e) {
    if (session_ && session_events_) {
        auto const caps = server_.capabilities();
        if (auto n = session_->notification_for(e, *caps))
            send(*n);
    }
    listens_.deliver(e);
}

std::shared_ptr<connection> connection::create(server& srv, asio::any_io_executor executor, writer write,
                                               connection_options options) {
    auto p = std::make_shared<impl>(srv, std::move(executor), std::move(write), options);
    std::shared_ptr<connection> c(new connection(p));
    if (options.hears_server_events)
        srv.subscribe(c);
    return c;
}

connection::~connection() = default;

void connection::receive(std::string frames) {
    impl_->receive(std::move(frames));
}
void connection::receive(jsonrpc::message message) {
    impl_->receive(std::move(message));
}
void connection::receive_oversized() {
    impl_->receive_oversized();
}
void connection::finish(std::function<void()> done) {
    impl_->finish(std::move(done));
}
asio::awaitable<connection::answer> connection::async_answer(admitted_request ad,
                                                             protocol::http_facts const* http, writer out) {
    return impl::async_answer(impl_, std::move(ad), http, std::move(out));
}
std::optional<connection::answer> connection::answer_now(admitted_request ad,
                                                         protocol::http_facts const* http, writer out,
                                                         std::function<void(answer)> later,
                                                         std::function<void()> end_stream) {
    return impl_->answer_now(std::move(ad), http, std::move(out), std::move(later), std::move(end_stream));
}
void connection::cancel_requests() {
    impl_->cancel_requests();
}
void connection::on_server_event(server_event const& e) {
    impl_->on_server_event(e);
}
std::optional<protocol::version> connection::legacy_version() const {
    return impl_->legacy_version();
}

void connection::restore_session(session_state const& s) {
    impl_->restore_session(s);
}

void connection::refresh_session(session_state s) {
    impl_->refresh_session(std::move(s));
}

void connection::deliver_session_events(bool on) {
    impl_->deliver_session_events(on);
}

} // namespace duet::server
