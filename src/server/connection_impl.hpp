// connection::impl: the state of one connection and what its parts share. The stream's order and
// lifetime (the strand, draining, requests to the client) are in connection.cpp; a stream of frames (stdio)
// in connection_frames.cpp; one admitted request carried out (the legacy session's own methods, a listen,
// or the dispatch of a handler) in connection_answers.cpp.
#pragma once

#include <duet/protocol/admission.hpp>
#include <duet/server/admitted_request.hpp>
#include <duet/server/connection.hpp>

#include "client_requests.hpp"
#include "dispatch.hpp"
#include "legacy_session.hpp"
#include "listen_registry.hpp"
#include "request_metrics.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

namespace duet::server {

// The stream's order and lifetime (the strand, draining, requests to the client) and the routing of each
// admitted request to what answers it: the legacy session, the listens, or the dispatch of a handler.
class connection::impl : public std::enable_shared_from_this<connection::impl>, public detail::request_host {
public:
    impl(server& srv, boost::asio::any_io_executor ex, writer w, connection_options o)
        : server_(srv),
          strand_(o.executor_is_serial ? boost::asio::any_io_executor(std::move(ex))
                                       : boost::asio::any_io_executor(boost::asio::make_strand(ex))),
          write_(std::move(w)), options_(o), dispatch_(srv, options_.session_id), listens_(srv, write_) {}

    // ---- a stream of frames -------------------------------------------------------------------------------

    // A burst of frames in one hand-off to the strand (one post, not one per frame). Answering every frame of
    // the burst before any is written keeps the writes to one per burst; handing them out a few at a time,
    // so the client could send more while the rest are answered, cost more in wake-ups than it gained.
    void receive(std::string frames);

    void receive(jsonrpc::message message);

    void receive_oversized();

    void finish(std::function<void()> done);

    void on_server_event(server_event const& e);

    // ---- one request whose answer the caller delivers ----------------------------------------------------

    // A named coroutine, not a capturing lambda (co_spawn may move a lambda's closure after starting it);
    // `self` keeps the connection alive until the answer.
    static boost::asio::awaitable<answer> async_answer(std::shared_ptr<impl> self, admitted_request ad,
                                                       protocol::http_facts const* http, writer out);

    std::optional<answer> answer_now(admitted_request ad, protocol::http_facts const* http, writer out,
                                     std::function<void(answer)> later, std::function<void()> end_stream);

    void cancel_requests();

    std::optional<protocol::version> legacy_version() const { return legacy_version_.load(); }

    void restore_session(session_state const& st);

    void refresh_session(session_state st);

    void deliver_session_events(bool on) { session_events_ = on; }

private:
    // answer_now() on a connection with a strand of its own (a legacy HTTP session, which requests on many
    // sockets share). boost::asio::dispatch enters the strand right here when nothing runs on it or waits for
    // it and the caller is one of the io_context's threads: the request is answered inline, with no hand-off
    // to the strand and back. Otherwise it waits its turn there, as any other work of the connection, and
    // `later` gets its answer. Which of the two happened: the function ran on the caller's thread before
    // dispatch returned.
    struct strand_visit {
        std::thread::id caller = std::this_thread::get_id();
        bool dispatching = true; ///< read and written on the caller's thread only
        std::optional<answer> inline_answer;
    };

    std::optional<answer> answer_now_on_own_strand(admitted_request ad, protocol::http_facts const* http,
                                                   writer out, std::function<void(answer)> later,
                                                   std::function<void()> end_stream);

    // ---- output -------------------------------------------------------------------------------------------

    void send(jsonrpc::message const& m) { write_(jsonrpc::serialize(m)); }
    // To a request's own stream when it has one (HTTP), else the connection's.
    void send(jsonrpc::message const& m, writer const& out) { (out ? out : write_)(jsonrpc::serialize(m)); }

    void maybe_done();

    // ---- input --------------------------------------------------------------------------------------------

    void on_frame(std::string_view frame);

    void on_element(jsonrpc::parsed p);

    // A request answered right away needs no coroutine at all; one whose handler may suspend gets one.
    void on_request(jsonrpc::request& r);

    void on_notification(jsonrpc::notification const& n);

    // ---- answering: the coroutines, each spawned on strand_ ----------------------------------------------

    boost::asio::awaitable<answer> async_answer_counted(admitted_request ad, protocol::http_facts const* http,
                                                        writer out);

    boost::asio::awaitable<answer> async_answer_one(admitted_request ad, protocol::http_facts const* http,
                                                    writer out, std::function<void()> end_stream);

    boost::asio::awaitable<void> async_answer_batch(std::vector<jsonrpc::parsed> elements);

    boost::asio::awaitable<void> async_answer_to(detail::deferred_request d,
                                                 std::function<void(answer)> later);

    boost::asio::awaitable<void> async_answer_and_send(detail::deferred_request d);

    // ---- routing ------------------------------------------------------------------------------------------

    // Carries out one admitted request's verdict, answering it when that needs no coroutine: admission
    // refused it, a handshake, a method the session answers itself, a listen, or a handler that completed
    // right away. Otherwise the request made ready for dispatch::async_answer(), its handler not yet run;
    // `ad` is moved from only then. `http` carries the HTTP facts (null on stdio); `out` is the request's
    // own stream (null: write_).
    std::variant<answer, detail::deferred_request> answer_or_defer(admitted_request& ad,
                                                                   protocol::http_facts const* http,
                                                                   writer out,
                                                                   std::function<void()> end_stream);

    // answer_or_defer's work; `seen` (null: no metrics) learns the method and era admission named.
    std::variant<answer, detail::deferred_request> carry_out(admitted_request& ad,
                                                             protocol::http_facts const* http, writer out,
                                                             std::function<void()> end_stream,
                                                             detail::observed_request* seen);

    protocol::session_view session_view() const;

    answer open_session(jsonrpc::request const& r, protocol::version v);

    void session_changed();

    // The answer of a listen comes when it ends; an open listen answers nothing now.
    std::optional<jsonrpc::message> open_listen(jsonrpc::request const& r,
                                                protocol::server_capabilities const& caps, writer out,
                                                protocol::http_facts const* http, bool declares_tasks);

    // ---- detail::request_host: what a request's context reaches back for ---------------------------------

    void notify(detail::request_state const& request, jsonrpc::notification n) override;

    boost::asio::awaitable<peer_result> async_request_client(detail::request_state const& request,
                                                             std::string method, boost::json::value params,
                                                             std::chrono::milliseconds timeout) override;

    // ---- events -------------------------------------------------------------------------------------------

    void deliver(server_event const& e);

    server& server_;
    boost::asio::any_io_executor
        strand_; ///< a strand: the connection's own, or the caller's (executor_is_serial)
    writer write_;
    connection_options options_;
    detail::dispatch dispatch_;
    detail::listen_registry listens_; ///< holds a reference to write_
    std::optional<detail::legacy_session> session_;
    std::atomic<std::optional<protocol::version>> legacy_version_; ///< session_'s version, readable anywhere
    std::atomic<bool> session_events_{true};
    detail::client_requests client_requests_;
    std::size_t active_ = 0;
    bool draining_ = false;
    std::function<void()> done_;
};

} // namespace duet::server
