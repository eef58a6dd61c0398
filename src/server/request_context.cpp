#include <duet/protocol/meta_keys.hpp>
#include <duet/server/request_context.hpp>

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
    if (state_->progress_token.is_null() || state_->cancelled.load())
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
    state_->notify(jsonrpc::notification{"notifications/progress", std::move(params)});
}

void request_context::log(protocol::log_level level, boost::json::value data, std::string_view logger) {
    if (state_->cancelled.load() || !state_->log_threshold)
        return;
    auto const threshold = state_->log_threshold();
    if (!threshold || level < *threshold)
        return;
    boost::json::object params{{"level", protocol::to_string(level)}, {"data", std::move(data)}};
    if (!logger.empty())
        params["logger"] = logger;
    state_->notify(jsonrpc::notification{"notifications/message", std::move(params)});
}

boost::asio::awaitable<peer_result> request_context::async_request_client(std::string method,
                                                                          boost::json::value params,
                                                                          std::chrono::milliseconds timeout) {
    if (state_->era == protocol::era::modern || !state_->request_client)
        co_return peer_failure{make_error_code(peer_errc::not_in_this_era), std::nullopt};
    co_return co_await state_->request_client(std::move(method), std::move(params), timeout);
}

} // namespace duet::server
