// The gateway's log lines, gathered for stderr (gateway_log.hpp).
#include "gateway_log.hpp"

#include <duet/log/log.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>
#include <string_view>

namespace duet::gateway::detail {

namespace asio = boost::asio;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
/// How long a log line may wait for others to share its write to stderr.
constexpr auto log_flush_delay = std::chrono::milliseconds(20);

} // namespace

gateway_log::gateway_log(asio::any_io_executor ex, std::function<void(std::string const&)> sink)
    : ex_(std::move(ex)), sink_(std::move(sink)) {}

gateway_log::~gateway_log() {
    flush();
}

void gateway_log::line(std::string const& message) const {
    if (!log::enabled(log::level::info))
        return;
    if (sink_ || log::current_format() == log::format::text) {
        write_with([&](std::string& out) { out.append("duet gateway: ").append(message); });
        return;
    }
    write_with([&](std::string& out) {
        log::append(out, {.component = "duet gateway", .name = "gateway", .message = message},
                    log::format::json);
    });
}

void gateway_log::arm_flush() const {
    auto weak = weak_from_this();
    asio::co_spawn(ex_, flush_later(weak), asio::detached);
}

asio::awaitable<void> gateway_log::flush_later(std::weak_ptr<gateway_log const> weak) {
    asio::steady_timer wait(co_await asio::this_coro::executor, log_flush_delay);
    co_await wait.async_wait(tuple_awaitable);
    if (auto self = weak.lock())
        self->flush();
}

void gateway_log::flush() const {
    std::string lines;
    {
        std::lock_guard lock(mutex_);
        lines.swap(pending_);
        flush_armed_ = false;
    }
    if (!lines.empty()) {
        std::fwrite(lines.data(), 1, lines.size(), stderr);
        std::fflush(stderr);
    }
}

} // namespace duet::gateway::detail
