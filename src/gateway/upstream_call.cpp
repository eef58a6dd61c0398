// One forwarded call's upstream side (upstream_backend::impl::run, on ex_): a connection from the pool or
// the session, the request with its callbacks (progress, questions, log lines), an upstream task followed to
// its end, and the outcome handed to the call. Apart from the handler's side (upstream_handler.cpp), which
// only takes the call's steps.
#include <duet/gateway/translate.hpp>
#include <duet/protocol/tasks.hpp>

#include "upstream_impl.hpp"

#include <optional>

namespace duet::gateway {

awaitable<client::input_answer> upstream_backend::impl::ask(std::weak_ptr<forwarded_call> weak,
                                                            client::input_question q) {
    auto call = weak.lock();
    if (!call)
        co_return protocol::make_error(protocol::errc::internal_error, "the downstream request ended");
    auto a = co_await call->async_ask(std::move(q));
    co_return a;
}

awaitable<void> upstream_backend::impl::run(std::shared_ptr<impl> self, std::shared_ptr<forwarded_call> call,
                                            call_spec spec) {
    auto const& profile = *self->profile_;
    if (spec.session && !spec.session->own_connection)
        spec.session.reset(); // the session shares the pool
    bool const pooled = !spec.session;
    // A legacy HTTP upstream that forgot its session (404: it restarted, or expired the session) never
    // ran the call: it goes once more, on a session begun anew.
    std::optional<json::object> resend;
    if (profile.era == protocol::era::legacy && !profile.stdio())
        resend = spec.params;
    for (;;) {
        auto conn = self->pool_->ready_connection(spec.session.get(), spec.log_threshold.has_value(), call);
        if (!conn) {
            auto session = spec.session;
            json::object capabilities;
            if (profile.era == protocol::era::legacy && !session)
                capabilities = spec.capabilities;
            auto got = co_await upstream_pool::async_acquire(self->pool_, call, std::move(session),
                                                             std::move(capabilities),
                                                             spec.log_threshold.has_value());
            if (!got) {
                call->finish(upstream_unavailable(profile.name, got.error().to_string()));
                co_return;
            }
            conn = std::move(*got);
        }
        conn->active.push_back(call);

        // The call outlives its request (this frame holds it), so the callbacks the client calls during
        // the request may point at it; a question's answer is awaited beyond, so it holds it weakly.
        auto* const c = call.get();
        auto const options_for = [&] {
            client::request_options o;
            o.cancel = call->cancel();
            o.timeout = profile.options.request_timeout;
            o.trace = spec.trace;
            if (spec.wants_progress)
                o.on_progress = [c](client::progress_event const& e) {
                    c->relay_progress(e);
                };
            // Two raw pointers fit std::function's small buffer (a weak_ptr would be allocated for every
            // call); the weak reference is taken when the upstream asks, while the call is alive. The
            // client asks only while the request is in flight, so this frame holds the parked calls too.
            o.on_input = [c, parked = &self->parked_](client::input_question q) {
                // A modern downstream request's call is parked as it asks, here on this executor, so that
                // its handler needs no crossing of its own to park it before ending the round.
                if (c->parks())
                    parked->park(c->shared_from_this());
                std::weak_ptr<forwarded_call> weak = c->weak_from_this();
                return ask(std::move(weak), std::move(q));
            };
            // Lines on the call's own HTTP stream are its own, whoever else shares the connection.
            o.on_log = [c](client::log_event const& e) {
                c->relay_log(e);
            };
            if (profile.era == protocol::era::modern) {
                o.client_capabilities = spec.capabilities;
                if (spec.method == protocol::method_id::tools_call && profile.upstream_tasks) {
                    // The gateway follows an upstream task itself, whatever its own client can follow.
                    auto& ext = (*o.client_capabilities)["extensions"];
                    if (!ext.is_object())
                        ext = json::object{};
                    ext.get_object()[protocol::tasks_extension] = json::object{};
                }
                // The downstream's threshold, upstream: no lines it would drop, none at all when it
                // hears none.
                o.log_level = spec.log_threshold ? std::string(protocol::to_string(*spec.log_threshold)) : "";
            }
            return o;
        };
        std::string method(protocol::info(spec.method).name);
        auto o = options_for();
        auto r =
            co_await conn->client->async_request(std::move(method), std::move(spec.params), std::move(o));
        if (auto task =
                r && spec.method == protocol::method_id::tools_call ? client::task_in(*r) : std::nullopt) {
            // The upstream made a task: the downstream request becomes one (where its client can follow
            // it), and the gateway follows the upstream's to its end.
            c->relay_task({});
            auto follow = options_for();
            // The upstream task's status message becomes the gateway task's.
            follow.on_task = [c, last = std::string()](client::task_info const& t) mutable {
                if (t.status_message.empty() || t.status_message == last)
                    return;
                last = t.status_message;
                c->relay_task(t.status_message);
            };
            r = co_await conn->client->async_task_result(task->id, std::move(follow));
        }
        std::erase_if(conn->active, [&](auto const& w) { return w.expired() || w.lock() == call; });
        if (conn->log_owner.lock() == call)
            conn->log_owner.reset();

        if (!r && r.error().code == client::errc::session_expired && resend) {
            conn->broken = true; // its session is gone: the next call on this key begins another
            if (pooled)
                self->pool_->checkin(std::move(conn));
            spec.params = std::move(*resend);
            resend.reset();
            continue;
        }
        server::answer_result outcome = protocol::internal_error();
        if (r) {
            server::method_answer s;
            s.result = std::move(*r);
            s.hints = take_result_hints(s.result);
            outcome = std::move(s);
        } else if (r.error().code == client::errc::rpc_error && r.error().rpc) {
            outcome = *r.error().rpc;
        } else if (r.error().code == client::errc::too_large) {
            conn->broken = true; // left unread: replaced, never reused
            auto said = "Internal error: the upstream server " + profile.name +
                        " sent a message over the gateway's limit of " +
                        std::to_string(profile.options.max_message_bytes) +
                        " bytes; its connection was dropped and will be replaced";
            outcome = protocol::make_error(protocol::errc::internal_error, std::move(said));
        } else {
            if (r.error().code != client::errc::cancelled && r.error().code != client::errc::usage)
                conn->broken = true; // gone, timed out or confused: never reused
            outcome = upstream_unavailable(profile.name, r.error().to_string());
        }
        if (pooled)
            self->pool_->checkin(std::move(conn));
        call->finish(std::move(outcome));
        co_return;
    }
}

} // namespace duet::gateway
