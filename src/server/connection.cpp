#include <duet/protocol/admission.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/protocol/meta_keys.hpp>
#include <duet/protocol/shaping.hpp>
#include <duet/server/connection.hpp>
#include <duet/server/frame_storage.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <set>
#include <thread>
#include <utility>
#include <variant>

namespace duet::server {

namespace asio = boost::asio;
using protocol::method_id;

namespace {

// The resources one session or listen watches, counted at the server so that a backend hears of a resource's
// first watcher and its last. Whatever is still watched is released when the owner ends, however it ends.
class resource_watches {
public:
    resource_watches() = default;
    explicit resource_watches(server& srv) : srv_(&srv) {}
    resource_watches(resource_watches&& o) noexcept : srv_(o.srv_), uris_(std::exchange(o.uris_, {})) {}
    resource_watches& operator=(resource_watches&& o) noexcept {
        if (this != &o) {
            release();
            srv_ = o.srv_;
            uris_ = std::exchange(o.uris_, {});
        }
        return *this;
    }
    ~resource_watches() { release(); }

    void add(std::string const& uri) {
        if (uris_.insert(uri).second && srv_)
            srv_->watch_resource(uri, true);
    }
    void remove(std::string const& uri) {
        if (uris_.erase(uri) && srv_)
            srv_->watch_resource(uri, false);
    }
    [[nodiscard]] std::set<std::string> const& uris() const noexcept { return uris_; }

private:
    void release() noexcept {
        if (srv_)
            for (auto const& u : uris_)
                srv_->watch_resource(u, false);
        uris_.clear();
    }

    server* srv_ = nullptr;
    std::set<std::string> uris_;
};

struct legacy_session {
    protocol::version version;
    /// Shared with every request of the session rather than copied into each.
    std::shared_ptr<boost::json::object const> client_capabilities;
    std::shared_ptr<boost::json::object const> client_info;
    bool initialized = false;
    /// logging/setLevel's threshold, read by running handlers at send time (debug, i.e. every level, until
    /// set).
    std::shared_ptr<std::atomic<int>> threshold = std::make_shared<std::atomic<int>>(0);
    resource_watches subscriptions;
    /// What the server's backend keeps for this session (backend::on_session); released when it ends.
    std::shared_ptr<void> backend_data;
};

struct listen_filter {
    connection::writer out; ///< where this listen's messages go (HTTP: its own SSE stream)
    bool tools = false;
    bool prompts = false;
    bool resources = false;
    std::vector<std::string> uris;
    resource_watches watches; ///< the honoured resourceSubscriptions, counted while the listen lasts
};

struct pending_request {
    std::shared_ptr<asio::steady_timer> wake;
    std::optional<peer_result> outcome;
};

// A request admitted and ready to serve whose handler may suspend: what the coroutine that serves it needs.
struct deferred_serve {
    jsonrpc::request r;
    protocol::admission a;
    std::shared_ptr<detail::request_state> state;
};

// A watched URI covers itself and anything below it ("file:///dir" covers "file:///dir/a.txt").
bool covers(std::string const& watched, std::string const& uri) {
    if (uri == watched)
        return true;
    if (!uri.starts_with(watched))
        return false;
    return watched.ends_with("/") || uri[watched.size()] == '/';
}

std::optional<protocol::client_capability> capability_for(std::string_view method,
                                                          boost::json::value const& params) {
    if (method == "elicitation/create") {
        auto const* p = params.if_object();
        auto const* mode = p ? p->if_contains("mode") : nullptr;
        bool const url = mode && mode->is_string() && mode->get_string() == "url";
        return url ? protocol::client_capability::elicitation_url
                   : protocol::client_capability::elicitation_form;
    }
    if (method == "sampling/createMessage")
        return protocol::client_capability::sampling;
    if (method == "roots/list")
        return protocol::client_capability::roots;
    return std::nullopt;
}

void log_stderr(std::string const& s) {
    std::fprintf(stderr, "duet: %s\n", s.c_str());
}

} // namespace

class connection::impl : public std::enable_shared_from_this<connection::impl>, public detail::request_host {
public:
    impl(server& srv, asio::any_io_executor ex, writer w, connection_options o)
        : server_(srv), strand_(o.executor_is_serial ? asio::any_io_executor(std::move(ex))
                                                     : asio::any_io_executor(asio::make_strand(ex))),
          write_(std::move(w)), options_(o) {}

    void receive(std::string frame) {
        asio::post(strand_, [self = shared_from_this(), frame = std::move(frame)] { self->on_frame(frame); });
    }

    // A burst of frames in one hand-off to the strand (one post, not one per frame). Answering every frame of
    // the burst before any is written keeps the writes to one per burst; handing them out a few at a time,
    // so the client could send more while the rest are served, cost more in wake-ups than it gained.
    void receive(std::vector<std::string> frames) {
        asio::post(strand_, [self = shared_from_this(), frames = std::move(frames)] {
            for (auto const& frame : frames)
                self->on_frame(frame);
        });
    }

    void receive_lines(std::string lines) {
        asio::post(strand_, [self = shared_from_this(), lines = std::move(lines)] {
            std::string_view rest(lines);
            while (!rest.empty()) {
                auto const nl = rest.find('\n');
                self->on_frame(rest.substr(0, nl));
                if (nl == std::string_view::npos)
                    break;
                rest.remove_prefix(nl + 1);
            }
        });
    }

    void receive(jsonrpc::message message) {
        asio::post(strand_, [self = shared_from_this(), message = std::move(message)]() mutable {
            self->on_element(jsonrpc::parsed(std::move(message)));
        });
    }

    void receive_oversized() {
        asio::post(strand_, [self = shared_from_this()] {
            self->send(jsonrpc::error_response{std::nullopt,
                                               jsonrpc::to_error_object(jsonrpc::parse_errc::too_large)});
        });
    }

    void finish(std::function<void()> done) {
        asio::post(strand_, [self = shared_from_this(), done = std::move(done)]() mutable {
            self->draining_ = true;
            self->done_ = std::move(done);
            for (auto const& [id, filter] : self->listens_)
                self->end_listen(id, filter.out);
            self->listens_.clear();
            for (auto& [id, p] : self->pending_) {
                p.outcome = peer_failure{make_error_code(peer_errc::connection_closed), std::nullopt};
                p.wake->cancel();
            }
            self->maybe_done();
        });
    }

    void on_server_event(server_event const& e) {
        asio::post(strand_, [self = shared_from_this(), e] { self->deliver(e); });
    }

    asio::awaitable<handled> async_handle(jsonrpc::request r, protocol::http_facts const* http, writer out,
                                          std::function<void()> end_stream) {
        // Already on the connection's executor (a caller that shares it): served here, with no hand-off.
        auto const caller = co_await asio::this_coro::executor;
        if (caller == strand_)
            co_return co_await handle_on_strand(std::move(r), http, std::move(out), std::move(end_stream));
        // Run on the connection's own strand (a coroutine resumes on the executor it was spawned on, whatever
        // it awaited), and hand the answer back to the caller's executor. A named coroutine, not a capturing
        // lambda: co_spawn may move a lambda's closure after starting it.
        co_return co_await asio::co_spawn(
            strand_, handle_on_strand(std::move(r), http, std::move(out), std::move(end_stream)),
            asio::use_awaitable);
    }

    asio::awaitable<handled> handle_on_strand(jsonrpc::request r, protocol::http_facts const* http,
                                              writer out, std::function<void()> end_stream) {
        auto self = shared_from_this();
        ++active_;
        auto h = co_await answer(std::move(r), http, std::move(out), std::move(end_stream));
        --active_;
        maybe_done();
        co_return h;
    }

    std::optional<handled> handle_now(jsonrpc::request r, protocol::http_facts const* http, writer out,
                                      std::function<void(handled)> later, std::function<void()> end_stream) {
        if (!options_.executor_is_serial)
            return handle_on_own_strand(std::move(r), http, std::move(out), std::move(later),
                                        std::move(end_stream));
        auto attempt = answer_now(r, http, std::move(out), std::move(end_stream));
        if (auto* h = std::get_if<handled>(&attempt))
            return std::move(*h);
        ++active_;
        auto deferred = std::get<deferred_serve>(std::move(attempt));
        asio::co_spawn(strand_, deliver_later(std::move(deferred), std::move(later)), asio::detached);
        return std::nullopt;
    }

    // handle_now() on a connection with a strand of its own (a legacy HTTP session, which requests on many
    // sockets share). asio::dispatch enters the strand right here when nothing runs on it or waits for it and
    // the caller is one of the io_context's threads: the request is served inline, with no hand-off to the
    // strand and back. Otherwise it waits its turn there, as any other work of the connection, and `later`
    // gets its answer. Which of the two happened: the function ran on the caller's thread before dispatch
    // returned.
    struct strand_visit {
        std::thread::id caller = std::this_thread::get_id();
        bool dispatching = true;       ///< read and written on the caller's thread only
        std::optional<handled> answer; ///< an inline answer
    };

    std::optional<handled> handle_on_own_strand(jsonrpc::request r, protocol::http_facts const* http,
                                                writer out, std::function<void(handled)> later,
                                                std::function<void()> end_stream) {
        auto visit = std::make_shared<strand_visit>();
        // Copied for the trip: when the function waits its turn, the caller's facts may be gone.
        std::optional<protocol::http_facts> facts;
        if (http)
            facts = *http;
        asio::dispatch(strand_, [self = shared_from_this(), visit, r = std::move(r), facts = std::move(facts),
                                 out = std::move(out), later = std::move(later),
                                 end_stream = std::move(end_stream)]() mutable {
            bool const inline_visit = visit->caller == std::this_thread::get_id() && visit->dispatching;
            auto attempt =
                self->answer_now(r, facts ? &*facts : nullptr, std::move(out), std::move(end_stream));
            if (auto* h = std::get_if<handled>(&attempt)) {
                if (inline_visit)
                    visit->answer = std::move(*h);
                else
                    later(std::move(*h));
                return;
            }
            ++self->active_;
            auto deferred = std::get<deferred_serve>(std::move(attempt));
            asio::co_spawn(self->strand_, self->deliver_later(std::move(deferred), std::move(later)),
                           asio::detached);
        });
        visit->dispatching = false;
        return std::move(visit->answer);
    }

    void cancel_requests() {
        asio::post(strand_, [self = shared_from_this()] {
            for (auto& [id, state] : self->in_flight_)
                state->cancelled = true;
            self->listens_.clear();
        });
    }

    std::optional<protocol::version> legacy_version() const { return legacy_version_.load(); }

private:
    // ---- output -------------------------------------------------------------------------------------------

    void send(jsonrpc::message const& m) { write_(jsonrpc::serialize(m)); }
    // To a request's own stream when it has one (HTTP), else the connection's.
    void send(jsonrpc::message const& m, writer const& out) { (out ? out : write_)(jsonrpc::serialize(m)); }

    void end_listen(jsonrpc::request_id const& id, writer const& out) {
        boost::json::object result{
            {"_meta", boost::json::object{{protocol::meta_key::subscription_id, id.to_json()}}}};
        // A modern result like any other: resultType and serverInfo (ERA-POLICY "Consequences").
        protocol::shape_result(result, {.era = protocol::era::modern,
                                        .version = protocol::latest_modern_version,
                                        .method = method_id::subscriptions_listen,
                                        .server_info = &server_.server_info()});
        send(jsonrpc::response{id, std::move(result)}, out);
    }

    void maybe_done() {
        if (draining_ && active_ == 0 && done_) {
            auto done = std::move(done_);
            done_ = nullptr;
            done();
        }
    }

    // ---- input --------------------------------------------------------------------------------------------

    void on_frame(std::string_view frame) {
        auto parsed = jsonrpc::parse_frame(frame, options_.limits, frame_storage());
        if (auto* one = std::get_if<jsonrpc::parsed>(&parsed.content)) {
            on_element(std::move(*one));
            return;
        }
        auto& elements = std::get<jsonrpc::batch>(parsed.content).elements;
        // Batches exist only in 2025-03-26 (removed in 2025-06-18); everywhere else the whole frame is
        // refused.
        if (!session_ || !protocol::batches_allowed(session_->version)) {
            send(jsonrpc::error_response{
                std::nullopt, protocol::invalid_request("Invalid Request: JSON-RPC batches are only "
                                                        "allowed in a 2025-03-26 session")});
            return;
        }
        ++active_;
        asio::co_spawn(strand_, run_batch(std::move(elements)), asio::detached);
    }

    void on_element(jsonrpc::parsed p) {
        if (!p) {
            if (p.error().reply)
                send(*p.error().reply);
            return;
        }
        std::visit(jsonrpc::overloaded{
                       [&](jsonrpc::request& r) { on_request(r); },
                       [&](jsonrpc::notification& n) { on_notification(n); },
                       [&](jsonrpc::response& r) { on_reply(r.id, peer_result(std::move(r.result))); },
                       [&](jsonrpc::error_response& e) {
                           if (e.id)
                               on_reply(*e.id, peer_failure{{}, std::move(e.error)});
                       },
                   },
                   *p);
    }

    asio::awaitable<void> run_batch(std::vector<jsonrpc::parsed> elements) {
        auto self = shared_from_this(); // the connection outlives its requests
        std::vector<jsonrpc::message> replies;
        for (auto& element : elements) {
            if (!element) {
                if (element.error().reply)
                    replies.push_back(*element.error().reply);
                continue;
            }
            if (auto* r = std::get_if<jsonrpc::request>(&*element)) {
                writer none; // named: GCC 12 destroys a temporary coroutine argument twice
                std::function<void()> no_end;
                auto h = co_await answer(std::move(*r), nullptr, std::move(none), std::move(no_end));
                if (h.reply)
                    replies.push_back(std::move(*h.reply));
            } else {
                on_element(std::move(element));
            }
        }
        if (!replies.empty())
            write_(jsonrpc::serialize(replies));
        --active_;
        maybe_done();
    }

    asio::awaitable<void> deliver_later(deferred_serve d, std::function<void(handled)> later) {
        auto self = shared_from_this(); // the connection outlives its requests
        auto h = co_await answer_later(std::move(d));
        --active_;
        maybe_done();
        later(std::move(h));
    }

    // A request answered right away needs no coroutine at all; one whose handler may suspend gets one.
    void on_request(jsonrpc::request& r) {
        auto attempt = answer_now(r, nullptr, nullptr, nullptr);
        if (auto* h = std::get_if<handled>(&attempt)) {
            if (h->reply)
                send(*h->reply);
            return;
        }
        ++active_;
        auto later = std::get<deferred_serve>(std::move(attempt));
        asio::co_spawn(strand_, run_deferred(std::move(later)), asio::detached);
    }

    asio::awaitable<void> run_deferred(deferred_serve d) {
        auto self = shared_from_this(); // the connection outlives its requests
        auto h = co_await answer_later(std::move(d));
        if (h.reply)
            send(*h.reply);
        --active_;
        maybe_done();
    }

    void on_notification(jsonrpc::notification const& n) {
        if (n.method == "notifications/initialized") {
            if (session_)
                session_->initialized = true;
        } else if (n.method == "notifications/cancelled") {
            auto const* p = n.params.if_object();
            auto const* rid = p ? p->if_contains("requestId") : nullptr;
            auto const id = rid ? jsonrpc::request_id::from_json(*rid) : std::nullopt;
            if (!id)
                return;
            if (auto it = in_flight_.find(*id); it != in_flight_.end())
                it->second->cancelled = true;
            listens_.erase(*id); // a cancelled listen ends silently
        }
        // Other notifications (progress, roots/list_changed, ...) need no answer and change nothing here.
    }

    void on_reply(jsonrpc::request_id const& id, peer_result outcome) {
        auto it = pending_.find(id);
        if (it == pending_.end())
            return; // late (timed out) or never ours
        it->second.outcome = std::move(outcome);
        it->second.wake->cancel();
    }

    // ---- dispatch -----------------------------------------------------------------------------------------

    protocol::session_view session_view() const {
        protocol::session_view v;
        if (session_)
            v.legacy = session_->version;
        return v;
    }

    std::optional<jsonrpc::message> error_for(jsonrpc::request_id const& id, protocol::error_object e) {
        return jsonrpc::message{jsonrpc::error_response{id, std::move(e)}};
    }

    // Admits and serves one request. `http` carries the HTTP facts (null on stdio); `out` is the request's
    // own stream for its notifications (null: the connection's writer).
    asio::awaitable<handled> answer(jsonrpc::request r, protocol::http_facts const* http, writer out,
                                    std::function<void()> end_stream) {
        auto attempt = answer_now(r, http, std::move(out), std::move(end_stream));
        if (auto* h = std::get_if<handled>(&attempt))
            co_return std::move(*h);
        auto later = std::get<deferred_serve>(std::move(attempt));
        co_return co_await answer_later(std::move(later));
    }

    // As answer(), without a coroutine: the answer when it is ready without suspending (admission refused
    // it, a session method, a listen, or a handler that completed right away), else the request made ready
    // for answer_later(), its handler not yet run. `r` is moved from only in the second case.
    std::variant<handled, deferred_serve> answer_now(jsonrpc::request& r, protocol::http_facts const* http,
                                                     writer out, std::function<void()> end_stream) {
        // A snapshot: registrations may change while this request runs without moving what it was admitted
        // by.
        auto const caps = server_.capabilities();
        protocol::admission_context ac;
        ac.session = session_view();
        ac.capabilities = caps.get();
        ac.eras = server_.options().eras;
        ac.http = http;
        ac.param_headers = &server_.param_header_lookup();
        auto admitted = protocol::admit(r, ac);
        if (!admitted)
            return handled{error_for(r.id, std::move(admitted.error().error)), admitted.error().http_status};
        auto& a = *admitted;
        switch (a.what) {
        case protocol::admission::action::answer_ping:
            return handled{jsonrpc::response{r.id, boost::json::object{}}};
        case protocol::admission::action::handshake:
            return handled{handshake(r, a.version)};
        case protocol::admission::action::serve:
            break;
        }
        if (a.era == protocol::era::legacy) {
            if (auto reply = serve_session_method(r, a.method->id))
                return handled{std::move(reply)};
        } else if (a.method->id == method_id::subscriptions_listen) {
            return handled{listen(r, *caps, out)};
        }
        auto prepared = prepare(r, a, std::move(out), std::move(end_stream));
        if (auto* refused = std::get_if<jsonrpc::message>(&prepared))
            return answered(a, std::move(*refused));
        auto state = std::get<std::shared_ptr<detail::request_state>>(std::move(prepared));
        std::optional<serve_result> outcome;
        {
            request_context ctx(state);
            try {
                outcome = server_.serve_now(a.method->id, r.params, ctx);
            } catch (...) {
                outcome = failed(r, *state);
            }
        }
        if (!outcome) {
            // The handler may suspend: it runs in answer_later(), cancellable by id meanwhile.
            in_flight_[r.id] = state;
            return deferred_serve{std::move(r), std::move(a), std::move(state)};
        }
        return answered(a, finish(r, a, *state, std::move(*outcome)));
    }

    // The rest of answer() for a request whose handler may suspend.
    asio::awaitable<handled> answer_later(deferred_serve d) {
        serve_result outcome = protocol::internal_error();
        {
            request_context ctx(d.state);
            try {
                outcome = co_await server_.async_serve(d.a.method->id, d.r.params, ctx);
            } catch (...) {
                outcome = failed(d.r, *d.state);
            }
        }
        // Every connection coroutine is spawned on strand_, so even after a plain handler ran on the blocking
        // pool this continues on the strand.
        in_flight_.erase(d.r.id);
        auto reply = finish(d.r, d.a, *d.state, std::move(outcome));
        co_return answered(d.a, std::move(reply));
    }

    static handled answered(protocol::admission const& a, std::optional<jsonrpc::message> reply) {
        auto const status = a.era == protocol::era::modern ? served_error_status(reply) : 200u;
        return handled{std::move(reply), status};
    }

    // A handler that cannot go on without a capability fails as admission would have: -32021 is HTTP 400
    // wherever it arises (DIGEST §9). Other handler errors travel on a 200.
    static unsigned served_error_status(std::optional<jsonrpc::message> const& reply) {
        auto const* e = reply ? std::get_if<jsonrpc::error_response>(&*reply) : nullptr;
        auto const required = static_cast<std::int32_t>(protocol::errc::missing_required_client_capability);
        return e && e->error.code == required ? 400u : 200u;
    }

    jsonrpc::message handshake(jsonrpc::request const& r, protocol::version v) {
        auto const& p = r.params.get_object();
        legacy_session s;
        s.subscriptions = resource_watches(server_);
        s.version = v;
        s.client_capabilities =
            std::make_shared<boost::json::object const>(p.at("capabilities").get_object());
        s.client_info = std::make_shared<boost::json::object const>(p.at("clientInfo").get_object());
        if (auto b = server_.current_backend())
            s.backend_data = b->on_session(v, *s.client_capabilities, *s.client_info);
        // A second initialize renegotiates: the client gets the answer it asks for (ERA-POLICY).
        session_ = std::move(s);
        legacy_version_ = v;
        return jsonrpc::response{r.id, server_.initialize_result(v)};
    }

    // Legacy methods that live in the session rather than the server.
    std::optional<jsonrpc::message> serve_session_method(jsonrpc::request const& r, method_id m) {
        auto const* p = r.params.if_object();
        switch (m) {
        case method_id::ping:
            return jsonrpc::response{r.id, boost::json::object{}};
        case method_id::logging_set_level: {
            auto const* level = p ? p->if_contains("level") : nullptr;
            auto const parsed =
                level && level->is_string() ? protocol::parse_log_level(level->get_string()) : std::nullopt;
            if (!parsed)
                return error_for(r.id,
                                 protocol::invalid_params("Invalid params: level must be one of debug, info, "
                                                          "notice, warning, error, critical, alert, "
                                                          "emergency"));
            session_->threshold->store(static_cast<int>(*parsed));
            return jsonrpc::response{r.id, boost::json::object{}};
        }
        case method_id::resources_subscribe:
        case method_id::resources_unsubscribe: {
            auto const* uri = p ? p->if_contains("uri") : nullptr;
            if (!uri || !uri->is_string())
                return error_for(r.id, protocol::invalid_params("Invalid params: \"uri\" must be a string"));
            if (m == method_id::resources_subscribe)
                session_->subscriptions.add(std::string(uri->get_string()));
            else
                session_->subscriptions.remove(std::string(uri->get_string()));
            return jsonrpc::response{r.id, boost::json::object{}};
        }
        default:
            return std::nullopt;
        }
    }

    // The response of a listen comes when it ends; an open listen answers nothing now.
    std::optional<jsonrpc::message> listen(jsonrpc::request const& r,
                                           protocol::server_capabilities const& caps, writer out) {
        if (listens_.contains(r.id) || in_flight_.contains(r.id))
            return error_for(r.id,
                             protocol::invalid_request("Invalid Request: a request with this id is already "
                                                       "in flight"));
        auto const* p = r.params.if_object();
        auto const* n = p ? p->if_contains("notifications") : nullptr;
        if (!n || !n->is_object())
            return error_for(r.id, protocol::invalid_params("Invalid params: subscriptions/listen needs a "
                                                            "notifications object"));
        auto const& requested = n->get_object();
        auto flag = [&](std::string_view key) {
            auto const* v = requested.if_contains(key);
            return v && v->is_bool() && v->get_bool();
        };
        listen_filter f;
        f.out = out;
        boost::json::object honoured;
        if (flag("toolsListChanged") && caps.tools_list_changed)
            honoured["toolsListChanged"] = f.tools = true;
        if (flag("promptsListChanged") && caps.prompts_list_changed)
            honoured["promptsListChanged"] = f.prompts = true;
        if (flag("resourcesListChanged") && caps.resources_list_changed)
            honoured["resourcesListChanged"] = f.resources = true;
        if (auto const* subs = requested.if_contains("resourceSubscriptions")) {
            if (!subs->is_array())
                return error_for(r.id,
                                 protocol::invalid_params("Invalid params: resourceSubscriptions must be "
                                                          "an array of URIs"));
            boost::json::array uris;
            for (auto const& u : subs->get_array()) {
                if (!u.is_string())
                    return error_for(r.id,
                                     protocol::invalid_params("Invalid params: resourceSubscriptions must "
                                                              "be an array of URIs"));
                f.uris.emplace_back(u.get_string());
                uris.push_back(u);
            }
            if (caps.resources_subscribe) {
                honoured["resourceSubscriptions"] = std::move(uris);
                f.watches = resource_watches(server_);
                for (auto const& u : f.uris)
                    f.watches.add(u);
            } else {
                f.uris.clear();
            }
        }
        // The acknowledgement is the first message for this subscription id; events are delivered on this
        // strand after it, so none can overtake it.
        boost::json::object ack{
            {"_meta", boost::json::object{{protocol::meta_key::subscription_id, r.id.to_json()}}},
            {"notifications", std::move(honoured)}};
        send(jsonrpc::notification{"notifications/subscriptions/acknowledged", std::move(ack)}, out);
        if (draining_) {
            end_listen(r.id, out);
            return std::nullopt;
        }
        listens_[r.id] = std::move(f);
        return std::nullopt;
    }

    // The state a request's handler runs with, or the answer refusing it before the handler runs.
    std::variant<std::shared_ptr<detail::request_state>, jsonrpc::message>
    prepare(jsonrpc::request const& r, protocol::admission& a, writer out, std::function<void()> end_stream) {
        auto state = std::make_shared<detail::request_state>();
        state->era = a.era;
        state->version = a.version;
        state->id = r.id;
        if (a.era == protocol::era::modern) {
            // Moved: the admission's envelope is not read again. Declaring none (`{}`) shares the empty
            // object.
            if (!a.envelope->client_capabilities.empty())
                state->client_capabilities =
                    std::make_shared<boost::json::object const>(std::move(a.envelope->client_capabilities));
            if (a.envelope->client_info)
                state->client_info =
                    std::make_shared<boost::json::object const>(std::move(*a.envelope->client_info));
            state->progress_token = a.envelope->progress_token;
            state->log_level = a.envelope->log_level;
            if (a.method->may_require_input) {
                state->input_rounds = true;
                if (auto e = restore_input(r, *state))
                    return jsonrpc::message{jsonrpc::error_response{r.id, std::move(*e)}};
            }
        } else {
            state->client_capabilities = session_->client_capabilities;
            state->client_info = session_->client_info;
            state->session_data = session_->backend_data;
            state->end_stream = std::move(end_stream);
            if (auto const* p = r.params.if_object())
                if (auto const* meta = p->if_contains("_meta"); meta && meta->is_object())
                    if (auto const* t = meta->get_object().if_contains(protocol::meta_key::progress_token))
                        if (t->is_string() || t->is_int64() || t->is_uint64())
                            state->progress_token = *t;
            state->session_log_threshold = session_->threshold;
            state->may_request_client = true;
        }
        state->host = weak_from_this();
        state->out = std::move(out);
        if (in_flight_.contains(r.id))
            return jsonrpc::message{jsonrpc::error_response{
                r.id,
                protocol::invalid_request("Invalid Request: a request with this id is already in flight")}};
        return state;
    }

    // What a handler's exception becomes; called from the handler's catch block.
    serve_result failed(jsonrpc::request const& r, detail::request_state& state) {
        try {
            throw;
        } catch (detail::input_required_signal const&) {
            return input_required(r, state);
        } catch (protocol_error const& e) {
            return e.error();
        } catch (std::exception const& e) {
            log_stderr("handler for " + r.method + " failed: " + e.what());
            return protocol::internal_error();
        } catch (...) {
            log_stderr("handler for " + r.method + " failed with a non-standard exception");
            return protocol::internal_error();
        }
    }

    // The answer to a served request: none when it was cancelled, else its error or its shaped result.
    std::optional<jsonrpc::message> finish(jsonrpc::request const& r, protocol::admission const& a,
                                           detail::request_state const& state, serve_result outcome) {
        if (state.cancelled.load())
            return std::nullopt; // a cancelled request gets no answer
        if (!outcome)
            return error_for(r.id, std::move(outcome.error()));
        auto& s = *outcome;
        // DIGEST §5: the result of an MRTR retry must not be cached, whatever the configured hints (it may
        // rest on what the user answered). A retry is what carries a requestState (checked above).
        if (state.input_rounds && r.params.get_object().contains("requestState"))
            s.hints = protocol::cache_hints{};
        bool info_left_out = false;
        protocol::shape_result(s.result, {.era = a.era,
                                          .version = a.version,
                                          .method = a.method->id,
                                          .hints = s.hints,
                                          .server_info = &server_.server_info(),
                                          .server_info_left_out = &info_left_out});
        jsonrpc::response reply{r.id, std::move(s.result)};
        if (info_left_out)
            reply.result_tail = server_.server_info_tail(); // shared, not copied into every result
        return jsonrpc::message{std::move(reply)};
    }

    // A modern retry: the sealed state of earlier rounds, plus the answers to what the last round asked.
    std::optional<protocol::error_object> restore_input(jsonrpc::request const& r,
                                                        detail::request_state& state) {
        // Both members in one walk over params (its keys are unique): most requests carry neither, and an
        // absent member cost a full lookup each.
        boost::json::value const* token = nullptr;
        boost::json::value const* responses = nullptr;
        for (auto const& kv : r.params.get_object()) {
            if (kv.key() == "requestState")
                token = &kv.value();
            else if (kv.key() == "inputResponses")
                responses = &kv.value();
        }
        if (token) {
            if (!token->is_string())
                return protocol::invalid_params("Invalid params: requestState must be a string");
            auto opened = server_.sealer().open(token->get_string(), r.method, r.params,
                                                std::chrono::system_clock::now());
            if (!opened)
                return protocol::invalid_params("Invalid params: " + opened.error().message);
            state.input = std::move(*opened);
        }
        if (responses) {
            if (!responses->is_object())
                return protocol::invalid_params("Invalid params: inputResponses must be an object");
            // Answers to what the last round asked replace nothing sealed before them; any other key is
            // only offered: the handler may ask it in this run, and what it never asks is ignored (DIGEST
            // §4).
            for (auto const& kv : responses->get_object()) {
                bool const asked = std::any_of(
                    state.input.pending.begin(), state.input.pending.end(),
                    [&](boost::json::value const& k) { return k.is_string() && k.get_string() == kv.key(); });
                if (asked)
                    state.input.answers[kv.key()] = kv.value();
                else if (!state.input.answers.contains(kv.key()))
                    state.offered[kv.key()] = kv.value();
            }
        }
        state.input.pending.clear();
        return std::nullopt;
    }

    // The InputRequiredResult of a round that asked for input: its questions, and everything the next retry
    // needs, sealed.
    served input_required(jsonrpc::request const& r, detail::request_state& state) {
        input_state next = state.input;
        next.pending.clear();
        for (auto const& kv : state.asked)
            next.pending.emplace_back(kv.key());
        auto const expiry = std::chrono::system_clock::now() + server_.options().request_state_ttl;
        served s;
        s.result["resultType"] = "input_required";
        s.result["inputRequests"] = state.asked;
        s.result["requestState"] = server_.sealer().seal(r.method, r.params, next, expiry);
        return s;
    }

    // ---- detail::request_host: what a request's context reaches back for
    // ------------------------------------

    void notify(detail::request_state const& request, jsonrpc::notification n) override {
        if (request.cancelled.load())
            return;
        asio::dispatch(strand_, [self = shared_from_this(), n = std::move(n), out = request.out] {
            self->send(n, out);
        });
    }

    asio::awaitable<peer_result> request_client(detail::request_state const& request, std::string method,
                                                boost::json::value params,
                                                std::chrono::milliseconds timeout) override {
        auto self = shared_from_this(); // the connection outlives the question
        writer out = request.out;
        co_return co_await request_client(std::move(method), std::move(params), timeout, std::move(out));
    }

    asio::awaitable<peer_result> request_client(std::string method, boost::json::value params,
                                                std::chrono::milliseconds timeout, writer out) {
        co_await asio::dispatch(strand_, asio::use_awaitable);
        if (draining_ || !session_)
            co_return peer_failure{make_error_code(peer_errc::connection_closed), std::nullopt};
        // Only what the client declared at initialize may be asked of it (ping needs nothing).
        if (auto const needed = capability_for(method, params);
            needed && !protocol::declares(*session_->client_capabilities, *needed))
            co_return peer_failure{make_error_code(peer_errc::capability_missing), std::nullopt};
        jsonrpc::request_id const id{next_outbound_id_++};
        if (timeout <= std::chrono::milliseconds::zero())
            timeout = options_.client_request_timeout; // the caller left it to the connection
        auto timer = std::make_shared<asio::steady_timer>(strand_, timeout);
        pending_[id] = pending_request{timer, std::nullopt};
        send(jsonrpc::request{id, std::move(method), std::move(params)}, out);
        co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
        auto node = pending_.extract(id);
        if (node.empty() || !node.mapped().outcome) {
            // Tell the client we gave up, so it can stop asking its user (cancellation goes both ways).
            send(jsonrpc::notification{"notifications/cancelled",
                                       boost::json::object{{"requestId", id.to_json()},
                                                           {"reason", "timed out"}}},
                 out);
            co_return peer_failure{make_error_code(peer_errc::timed_out), std::nullopt};
        }
        co_return std::move(*node.mapped().outcome);
    }

    // ---- events -------------------------------------------------------------------------------------------

    void deliver(server_event const& e) {
        using kind = server_event::kind;
        auto const snapshot = server_.capabilities();
        auto const& caps = *snapshot;
        auto method = [&]() -> std::string_view {
            switch (e.what) {
            case kind::tools_changed:
                return "notifications/tools/list_changed";
            case kind::prompts_changed:
                return "notifications/prompts/list_changed";
            case kind::resources_changed:
                return "notifications/resources/list_changed";
            case kind::resource_updated:
                return "notifications/resources/updated";
            }
            return "";
        }();
        if (session_ && session_->initialized) {
            bool wanted = false;
            switch (e.what) {
            case kind::tools_changed:
                wanted = caps.tools_list_changed;
                break;
            case kind::prompts_changed:
                wanted = caps.prompts_list_changed;
                break;
            case kind::resources_changed:
                wanted = caps.resources_list_changed;
                break;
            case kind::resource_updated:
                for (auto const& s : session_->subscriptions.uris())
                    wanted = wanted || covers(s, e.uri);
                break;
            }
            if (wanted) {
                boost::json::value params;
                if (e.what == kind::resource_updated)
                    params = boost::json::object{{"uri", e.uri}};
                send(jsonrpc::notification{std::string(method), std::move(params)});
            }
        }
        for (auto const& [id, f] : listens_) {
            bool wanted = false;
            switch (e.what) {
            case kind::tools_changed:
                wanted = f.tools;
                break;
            case kind::prompts_changed:
                wanted = f.prompts;
                break;
            case kind::resources_changed:
                wanted = f.resources;
                break;
            case kind::resource_updated:
                for (auto const& u : f.uris)
                    wanted = wanted || covers(u, e.uri);
                break;
            }
            if (!wanted)
                continue;
            boost::json::object params{
                {"_meta", boost::json::object{{protocol::meta_key::subscription_id, id.to_json()}}}};
            if (e.what == kind::resource_updated)
                params["uri"] = e.uri;
            send(jsonrpc::notification{std::string(method), std::move(params)}, f.out);
        }
    }

    server& server_;
    asio::any_io_executor strand_; ///< a strand: the connection's own, or the caller's (executor_is_serial)
    writer write_;
    connection_options options_;
    std::optional<legacy_session> session_;
    std::atomic<std::optional<protocol::version>> legacy_version_; ///< session_'s version, readable anywhere
    std::map<jsonrpc::request_id, std::shared_ptr<detail::request_state>> in_flight_;
    std::map<jsonrpc::request_id, listen_filter> listens_;
    std::map<jsonrpc::request_id, pending_request> pending_;
    std::int64_t next_outbound_id_ = 1;
    std::size_t active_ = 0;
    bool draining_ = false;
    std::function<void()> done_;
};

std::shared_ptr<connection> connection::create(server& srv, asio::any_io_executor executor, writer write,
                                               connection_options options) {
    auto p = std::make_shared<impl>(srv, std::move(executor), std::move(write), options);
    std::shared_ptr<connection> c(new connection(p));
    if (options.hears_server_events)
        srv.subscribe(c);
    return c;
}

connection::~connection() = default;

void connection::receive(std::string frame) {
    impl_->receive(std::move(frame));
}
void connection::receive(std::vector<std::string> frames) {
    impl_->receive(std::move(frames));
}
void connection::receive_lines(std::string lines) {
    impl_->receive_lines(std::move(lines));
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
void connection::on_server_event(server_event const& e) {
    impl_->on_server_event(e);
}
asio::awaitable<connection::handled> connection::async_handle(jsonrpc::request r,
                                                              protocol::http_facts const* http, writer out) {
    auto keep = impl_;
    std::function<void()> no_end; // named: GCC 12 destroys a temporary coroutine argument twice
    co_return co_await keep->async_handle(std::move(r), http, std::move(out), std::move(no_end));
}
asio::awaitable<connection::handled> connection::async_handle(jsonrpc::request r,
                                                              protocol::http_facts const* http, writer out,
                                                              std::function<void()> end_stream) {
    auto keep = impl_;
    co_return co_await keep->async_handle(std::move(r), http, std::move(out), std::move(end_stream));
}
std::optional<connection::handled> connection::handle_now(jsonrpc::request r,
                                                          protocol::http_facts const* http, writer out,
                                                          std::function<void(handled)> later,
                                                          std::function<void()> end_stream) {
    return impl_->handle_now(std::move(r), http, std::move(out), std::move(later), std::move(end_stream));
}
void connection::cancel_requests() {
    impl_->cancel_requests();
}
std::optional<protocol::version> connection::legacy_version() const {
    return impl_->legacy_version();
}

} // namespace duet::server
