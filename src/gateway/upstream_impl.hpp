// File: src/gateway/upstream_impl.hpp (private)
//
// The inside of upstream_backend: what a downstream request's handler hands to the upstream side to start a
// call (call_spec), and the impl that holds the parts the backend stands on (the upstream pool, the control
// connection, the parked calls, the log) and runs each forwarded call between the handler and ex_.
// upstream_backend.cpp holds the public class and the impl's making and closing, upstream_tasks.cpp the
// upstream tools' task support, upstream_call.cpp a call's upstream side, upstream_handler.cpp the handler
// (async_forward) and what it hands to ex_.
#pragma once

#include <duet/gateway/upstream_backend.hpp>

#include "control_connection.hpp"
#include "forwarded_call.hpp"
#include "gateway_log.hpp"
#include "parked_calls.hpp"
#include "upstream_pool.hpp"
#include "upstream_profile.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/object.hpp>

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace duet::gateway {

namespace detail {

inline void append_era(std::string& out, protocol::era e, protocol::version v) {
    out += e == protocol::era::modern ? "modern(" : "legacy(";
    out += protocol::to_string(v);
    out += ')';
}

inline std::string era_text(protocol::era e, protocol::version v) {
    std::string out;
    append_era(out, e, v);
    return out;
}

} // namespace detail

// The private names the impl below and the upstream_*.cpp files are written with.
namespace upstream_names {
namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using detail::append_era;
using detail::call_step;
using detail::control_connection;
using detail::era_text;
using detail::forwarded_call;
using detail::session_upstream;
using detail::upstream_pool;
} // namespace upstream_names
using namespace upstream_names;

/// What a handler hands to the upstream side to start a call.
struct call_spec {
    std::string handle; ///< the parked call a retry names (empty: none)
    protocol::method_id method{};
    json::object params;
    json::object capabilities;
    /// The downstream request's log threshold (none: it hears no log lines).
    std::optional<protocol::log_level> log_threshold;
    /// The downstream request carries a progressToken: only then is one minted upstream, so an upstream
    /// never sets up progress reporting that nobody hears.
    bool wants_progress = false;
    /// The downstream request's trace, with the gateway's hop as its parent (none: it carried none).
    std::optional<protocol::trace_context> trace;
    bool modern_downstream = false;
    std::shared_ptr<session_upstream> session;
};

class upstream_backend::impl : public std::enable_shared_from_this<impl> {
public:
    impl(asio::any_io_executor ex, std::shared_ptr<detail::upstream_profile const> profile,
         std::shared_ptr<detail::gateway_log> log, std::shared_ptr<control_connection> control);
    static std::function<void(std::size_t)>
    parked_drop_logger(std::shared_ptr<detail::gateway_log> const& log);
    static upstream_pool::announce_fn announcer(std::shared_ptr<control_connection> const& control);
    ~impl();

    // ---- tasks (upstream_tasks.cpp) -----------------------------------------------------------------------

    void learn_tools(json::object& list);
    bool upstream_task_wanted(json::object const& params, bool downstream_follows) const;
    bool upstream_requires_task(std::string_view tool) const;

    // ---- one forwarded call, upstream (on ex_; upstream_call.cpp) -----------------------------------------

    static awaitable<client::input_answer> ask(std::weak_ptr<forwarded_call> weak, client::input_question q);
    static awaitable<void> run(std::shared_ptr<impl> self, std::shared_ptr<forwarded_call> call,
                               call_spec spec);

    // ---- the handler's side: what it hands to ex_ and gets back (upstream_handler.cpp) --------------------

    std::shared_ptr<forwarded_call> attach_call(call_spec spec);
    void await_step(std::shared_ptr<forwarded_call> const& call, forwarded_call::step_handler h,
                    asio::any_io_executor h_ex);

    using step_signature = void(std::shared_ptr<forwarded_call>, call_step);

    template<typename Token>
    auto async_begin(call_spec spec, Token&& token);
    template<typename Token>
    auto async_step(std::shared_ptr<forwarded_call> call, Token&& token);

    /// The downstream client's answers to a call's questions, by question key.
    using answers = std::vector<std::pair<std::string, client::input_answer>>;

    template<typename Token>
    auto async_answer(std::shared_ptr<forwarded_call> call, answers given, Token&& token);

    static awaitable<void> end_call(std::shared_ptr<impl> self, std::shared_ptr<forwarded_call> call,
                                    bool abandon);
    // Closing (upstream_backend.cpp).
    static awaitable<void> close_all(std::shared_ptr<impl> self);

    asio::any_io_executor ex_;
    std::shared_ptr<detail::upstream_profile const> profile_;
    std::shared_ptr<detail::gateway_log> log_;
    std::shared_ptr<control_connection> control_;
    std::shared_ptr<upstream_pool> pool_;
    detail::parked_calls parked_;
    detail::waiting_calls waiting_; ///< the calls whose handlers wait for a step
    asio::steady_timer tick_;       ///< their periodic wake-up, armed while any waits
    bool ticking_ = false;
    /// Legacy sessions with a stdio child of their own now (gateway_options::max_session_children).
    std::shared_ptr<std::atomic<std::size_t>> session_children_ =
        std::make_shared<std::atomic<std::size_t>>(0);
    /// Downstream requests forwarded now (calls_in_flight()).
    std::atomic<std::size_t> in_flight_{0};
};

} // namespace duet::gateway
