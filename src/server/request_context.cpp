#include <duet/protocol/errors.hpp>
#include <duet/protocol/input_key.hpp>
#include <duet/protocol/meta_keys.hpp>
#include <duet/protocol/tasks.hpp>
#include <duet/server/protocol_error.hpp>
#include <duet/server/request_context.hpp>

#include "task_registry.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/throw_exception.hpp>

#include <stdexcept>

namespace duet::server {

namespace {

class peer_category_impl final : public boost::system::error_category {
public:
    char const* name() const noexcept override { return "duet.server.peer"; }
    std::string message(int ev) const override {
        switch (static_cast<peer_errc>(ev)) {
        case peer_errc::timed_out:
            return "the client did not answer in time";
        case peer_errc::connection_closed:
            return "the connection to the client closed";
        case peer_errc::not_in_this_era:
            return "modern requests cannot send requests to the client";
        case peer_errc::capability_missing:
            return "the client did not declare the capability this needs";
        }
        return "unknown peer error";
    }
};

} // namespace

boost::system::error_category const& peer_category() noexcept {
    static peer_category_impl const instance;
    return instance;
}

boost::system::error_code make_error_code(peer_errc e) noexcept {
    return {static_cast<int>(e), peer_category()};
}

std::string peer_failure::to_string() const {
    if (remote)
        return "client error " + std::to_string(remote->code) + ": " + remote->message;
    return local.message();
}

void throw_exception_from_error(peer_failure const& f, boost::source_location const& loc) {
    boost::throw_exception(std::runtime_error(f.to_string()), loc);
}

void request_context::report_progress(double progress, std::optional<double> total,
                                      std::string_view message) {
    if (state_->cancelled.load())
        return;
    // In a task, progress is the task's statusMessage; the extension sends no progress notifications
    // (SEP-2663), 2025-11-25 keeps sending them for the call's progressToken.
    if (state_->task && state_->task->task_id()) {
        std::string note(message);
        if (note.empty()) {
            auto const amount = [](double v) {
                auto text = std::to_string(v);
                text.erase(text.find_last_not_of('0') + 1);
                if (text.back() == '.')
                    text.pop_back();
                return text;
            };
            note = "progress " + amount(progress) + (total ? " of " + amount(*total) : "");
        }
        state_->task->note_status(std::move(note));
        if (state_->era == protocol::era::modern)
            return;
    }
    if (state_->progress_token.is_null())
        return;
    double last = state_->last_progress.load();
    do {
        if (progress <= last)
            return;
    } while (!state_->last_progress.compare_exchange_weak(last, progress));
    boost::json::object params{{"progressToken", state_->progress_token}, {"progress", progress}};
    if (total)
        params["total"] = *total;
    if (!message.empty())
        params["message"] = message;
    if (auto host = state_->host.lock())
        host->notify(*state_, jsonrpc::notification{"notifications/progress", std::move(params)});
}

void request_context::log(protocol::log_level level, boost::json::value data, std::string_view logger) {
    if (state_->cancelled.load())
        return;
    if (state_->era == protocol::era::modern && state_->task && state_->task->task_id())
        return; // the extension carries no log messages for a task (SEP-2663)
    auto const threshold = log_threshold();
    if (!threshold || level < *threshold)
        return;
    boost::json::object params{{"level", protocol::to_string(level)}, {"data", std::move(data)}};
    if (!logger.empty())
        params["logger"] = logger;
    if (auto host = state_->host.lock())
        host->notify(*state_, jsonrpc::notification{"notifications/message", std::move(params)});
}

boost::asio::awaitable<peer_result> request_context::async_request_client(std::string method,
                                                                          boost::json::value params,
                                                                          std::chrono::milliseconds timeout) {
    if (state_->era == protocol::era::modern || !state_->may_request_client)
        co_return peer_failure{make_error_code(peer_errc::not_in_this_era), std::nullopt};
    auto host = state_->host.lock();
    if (!host)
        co_return peer_failure{make_error_code(peer_errc::connection_closed), std::nullopt};
    co_return co_await host->async_request_client(*state_, std::move(method), std::move(params), timeout);
}

} // namespace duet::server

namespace duet::server {

boost::asio::awaitable<peer_result> request_context::async_input(input_request request) {
    std::vector<input_request> one;
    one.push_back(std::move(request));
    auto results = co_await async_inputs(std::move(one));
    co_return std::move(results.front());
}

boost::asio::awaitable<std::vector<peer_result>>
request_context::async_inputs(std::vector<input_request> requests) {
    std::vector<peer_result> results;
    results.reserve(requests.size());
    auto const missing = [] {
        return peer_failure{make_error_code(peer_errc::capability_missing), std::nullopt};
    };
    auto& st = *state_;

    if (st.era == protocol::era::legacy) {
        // Every question is sent before any answer is awaited, as a modern round asks them together: the
        // client (or a gateway turning them into one input_required round) sees them at once.
        auto const ex = co_await boost::asio::this_coro::executor;
        // A 2025-11-25 task's questions say which task they serve, and the task waits on them meanwhile.
        auto const task = st.task ? st.task->task_id() : std::nullopt;
        using ask_op = decltype(boost::asio::co_spawn(ex, std::declval<boost::asio::awaitable<peer_result>>(),
                                                      boost::asio::deferred));
        std::vector<ask_op> asks;
        std::vector<std::size_t> asked_at;
        for (std::size_t i = 0; i < requests.size(); ++i) {
            auto& r = requests[i];
            if (auto c = protocol::capability_needed(r.method, r.params); c && !declares(*c)) {
                results.emplace_back(missing());
                continue;
            }
            results.emplace_back(peer_failure{make_error_code(peer_errc::connection_closed), std::nullopt});
            asked_at.push_back(i);
            // The question's modern key rides along, for a gateway that turns this into a modern round
            // (2025-11-25 is the first version whose input requests allow `_meta`).
            if (r.params.is_null() && st.version >= protocol::version::v2025_11_25)
                r.params = boost::json::object{};
            if (auto* p = r.params.if_object(); p && st.version >= protocol::version::v2025_11_25) {
                auto& meta = (*p)["_meta"];
                if (!meta.is_object())
                    meta = boost::json::object{};
                meta.get_object()[protocol::meta_key::input_key] = r.key;
                if (task)
                    meta.get_object()[protocol::related_task_key] = boost::json::object{{"taskId", *task}};
            }
            asks.push_back(boost::asio::co_spawn(
                ex, async_request_client(std::move(r.method), std::move(r.params)), boost::asio::deferred));
        }
        if (asks.empty())
            co_return results;
        if (task)
            st.task->note_waiting_for_client(true);
        auto answered =
            co_await boost::asio::experimental::make_parallel_group(std::move(asks))
                .async_wait(boost::asio::experimental::wait_for_all(), boost::asio::use_awaitable);
        if (task)
            st.task->note_waiting_for_client(false);
        auto const& completion_order = std::get<0>(answered);
        auto& exceptions = std::get<1>(answered);
        auto& answers = std::get<2>(answered);
        for (std::size_t k = 0; k < completion_order.size(); ++k) {
            if (exceptions[k])
                std::rethrow_exception(exceptions[k]);
            results[asked_at[k]] = std::move(answers[k]);
        }
        co_return results;
    }
    if (st.task && st.task->task_id())
        co_return co_await st.task->async_task_inputs(std::move(requests), *st.client_capabilities);
    if (!st.input_rounds) {
        for (std::size_t i = 0; i < requests.size(); ++i)
            results.emplace_back(peer_failure{make_error_code(peer_errc::not_in_this_era), std::nullopt});
        co_return results;
    }
    for (auto& r : requests) {
        if (auto c = protocol::capability_needed(r.method, r.params); c && !declares(*c)) {
            results.emplace_back(missing());
            continue;
        }
        // An answer the client offered before being asked (no requestState yet, or a key the last round did
        // not ask) counts once the handler asks for it; from then on it is sealed with the others.
        if (!st.input.answers.contains(r.key))
            if (auto const* offered = st.offered.if_contains(r.key))
                st.input.answers[r.key] = *offered;
        if (auto const* answer = st.input.answers.if_contains(r.key)) {
            if (!protocol::well_formed_input_response(r.method, *answer))
                throw protocol_error(protocol::invalid_params("Invalid params: inputResponses[\"" + r.key +
                                                                  "\"] is not a valid result of " + r.method,
                                                              boost::json::object{{"key", r.key}}));
            results.emplace_back(*answer);
            continue;
        }
        boost::json::object ask{{"method", r.method}};
        if (!r.params.is_null())
            ask["params"] = std::move(r.params);
        st.asked[r.key] = std::move(ask);
        results.emplace_back(peer_failure{make_error_code(peer_errc::not_in_this_era), std::nullopt});
    }
    if (st.asked.empty())
        co_return results;
    // A call that may become a task answers its request with this round, unless it became a task first:
    // then the task asks instead.
    if (st.task) {
        bool const as_request = co_await st.task->async_commit_to_rounds();
        if (!as_request) {
            st.asked.clear();
            co_return co_await st.task->async_task_inputs(std::move(requests), *st.client_capabilities);
        }
    }
    throw detail::input_required_signal{};
}

boost::asio::awaitable<bool> request_context::async_become_task() {
    auto const link = state_->task;
    if (!link)
        co_return false;
    auto const made = co_await link->async_promote();
    if (!made)
        co_return false;
    link->wake_dispatcher(); // it answers the request with the task
    co_return link->task_id().has_value();
}

void request_context::set_task_status(std::string_view message) {
    if (state_->task && state_->task->task_id() && !state_->cancelled.load())
        state_->task->note_status(std::string(message));
}

std::optional<std::string> request_context::task_id() const {
    return state_->task ? state_->task->task_id() : std::nullopt;
}

void request_context::require(protocol::client_capability c) const {
    if (!declares(c))
        throw protocol_error(protocol::missing_required_client_capability(protocol::requirement(c)));
}

} // namespace duet::server
