// A stream of frames (stdio, or anything framed like it): each frame parsed, its request admitted in turn
// (server::admit, by the connection's own session), batches where the session's version allows them.
#include <duet/protocol/errors.hpp>
#include <duet/server/frame_storage.hpp>

#include "connection_impl.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace duet::server {

namespace asio = boost::asio;

void connection::impl::receive(std::string frames) {
    asio::post(strand_, [self = shared_from_this(), frames = std::move(frames)] {
        std::string_view rest(frames);
        while (!rest.empty()) {
            auto const nl = rest.find('\n');
            self->on_frame(rest.substr(0, nl));
            if (nl == std::string_view::npos)
                break;
            rest.remove_prefix(nl + 1);
        }
    });
}

void connection::impl::receive(jsonrpc::message message) {
    asio::post(strand_, [self = shared_from_this(), message = std::move(message)]() mutable {
        self->on_element(jsonrpc::parsed(std::move(message)));
    });
}

void connection::impl::receive_oversized() {
    asio::post(strand_, [self = shared_from_this()] {
        self->send(
            jsonrpc::error_response{std::nullopt, jsonrpc::to_error_object(jsonrpc::parse_errc::too_large)});
    });
}

void connection::impl::on_frame(std::string_view frame) {
    auto parsed = jsonrpc::parse_frame(frame, options_.limits, frame_storage());
    if (auto* one = std::get_if<jsonrpc::parsed>(&parsed.content)) {
        on_element(std::move(*one));
        return;
    }
    auto& elements = std::get<jsonrpc::batch>(parsed.content).elements;
    // Batches exist only in 2025-03-26 (removed in 2025-06-18); everywhere else the whole frame is
    // refused.
    if (!session_ || !protocol::batches_allowed(session_->version())) {
        send(jsonrpc::error_response{std::nullopt, protocol::batch_not_allowed()});
        return;
    }
    ++active_;
    asio::co_spawn(strand_, async_answer_batch(std::move(elements)), asio::detached);
}

void connection::impl::on_element(jsonrpc::parsed p) {
    if (!p) {
        if (p.error().reply)
            send(*p.error().reply);
        return;
    }
    std::visit(
        jsonrpc::overloaded{
            [&](jsonrpc::request& r) { on_request(r); },
            [&](jsonrpc::notification& n) { on_notification(n); },
            [&](jsonrpc::response& r) { client_requests_.on_answer(r.id, peer_result(std::move(r.result))); },
            [&](jsonrpc::error_response& e) {
                if (e.id)
                    client_requests_.on_answer(*e.id, peer_failure{{}, std::move(e.error)});
            },
        },
        *p);
}

void connection::impl::on_request(jsonrpc::request& r) {
    auto ad = server_.admit(std::move(r), session_view(), nullptr);
    auto attempt = answer_or_defer(ad, nullptr, nullptr, nullptr);
    if (auto* a = std::get_if<answer>(&attempt)) {
        if (a->message)
            send(*a->message);
        return;
    }
    ++active_;
    auto deferred = std::get<detail::deferred_request>(std::move(attempt));
    asio::co_spawn(strand_, async_answer_and_send(std::move(deferred)), asio::detached);
}

void connection::impl::on_notification(jsonrpc::notification const& n) {
    if (n.method == "notifications/initialized") {
        if (session_ && !session_->initialized()) {
            session_->mark_initialized();
            session_changed();
        }
    } else if (n.method == "notifications/cancelled") {
        auto const* p = n.params.if_object();
        auto const* rid = p ? p->if_contains("requestId") : nullptr;
        auto const id = rid ? jsonrpc::request_id::from_json(*rid) : std::nullopt;
        if (!id)
            return;
        dispatch_.cancel(*id);
        listens_.cancel(*id); // a cancelled listen ends silently
    }
    // Other notifications (progress, roots/list_changed, ...) need no answer and change nothing here.
}

asio::awaitable<void> connection::impl::async_answer_batch(std::vector<jsonrpc::parsed> elements) {
    auto self = shared_from_this(); // the connection outlives its requests
    std::vector<jsonrpc::message> answers;
    for (auto& element : elements) {
        if (!element) {
            if (element.error().reply)
                answers.push_back(*element.error().reply);
            continue;
        }
        if (auto* r = std::get_if<jsonrpc::request>(&*element)) {
            // Admitted in turn: an element answers by the session as the ones before it left it.
            auto ad = server_.admit(std::move(*r), session_view(), nullptr);
            writer none; // named: GCC 12 destroys a temporary coroutine argument twice
            std::function<void()> no_end;
            auto a = co_await async_answer_one(std::move(ad), nullptr, std::move(none), std::move(no_end));
            if (a.message)
                answers.push_back(std::move(*a.message));
        } else {
            on_element(std::move(element));
        }
    }
    if (!answers.empty())
        write_(jsonrpc::serialize(answers));
    --active_;
    maybe_done();
}

asio::awaitable<void> connection::impl::async_answer_and_send(detail::deferred_request d) {
    auto self = shared_from_this(); // the connection outlives its requests
    auto a = co_await dispatch_.async_answer(std::move(d));
    if (a.message)
        send(*a.message);
    --active_;
    maybe_done();
}

} // namespace duet::server
