// Not compiled: the sample scripts/check-coroutine-rules is run against (ctest
// CoroutineRulesCatchBrokenSample). Every break of the README's GCC 12 coroutine rules is marked `BROKEN:
// <rule>` on the line the check reports; the unmarked calls are the safe ways to write the same, which it
// must let pass.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <tuple>

namespace sample {

namespace asio = boost::asio;
using asio::awaitable;

enum class color { red, green };

struct session : std::enable_shared_from_this<session> {
    static awaitable<void> async_run(std::shared_ptr<session> self, std::string name, color c);
    awaitable<std::tuple<int, std::string>> async_pair();
    awaitable<int> async_count(std::chrono::milliseconds wait, bool twice);
    void start(asio::any_io_executor ex);
    std::string name_;
    asio::steady_timer timer_;
};

void session::start(asio::any_io_executor ex) {
    // BROKEN: temporary-argument
    asio::co_spawn(ex, async_run(shared_from_this(), name_, color::red), asio::detached);
    auto self = shared_from_this();
    // BROKEN: temporary-argument
    asio::co_spawn(ex, async_run(self, "text", color::red), asio::detached);
    // BROKEN: temporary-argument
    asio::co_spawn(ex, async_run(self, std::string{}, color::green), asio::detached);
    // BROKEN: temporary-argument
    asio::co_spawn(ex, async_run(self, name_ + "!", color::green), asio::detached);
    // BROKEN: capturing-lambda
    asio::co_spawn(
        ex, [self]() -> awaitable<void> { co_await self->async_pair(); }, asio::detached);
    // Named first: safe.
    std::string name = name_ + "!";
    asio::co_spawn(ex, async_run(self, std::move(name), color::green), asio::detached);
    asio::co_spawn(ex, async_run(std::move(self), name_, color::red), asio::detached);
    asio::co_spawn(
        ex, []() -> awaitable<void> { co_return; }, asio::detached);
}

awaitable<void> session::async_run(std::shared_ptr<session> self, std::string name, color c) {
    // BROKEN: co-await-binding
    auto [count, text] = co_await self->async_pair();
    // BROKEN: co-await-binding
    auto const& [n, s] = co_await self->async_pair();
    // BROKEN: temporary-argument
    auto waited = co_await self->async_count(std::chrono::milliseconds(5), true);
    // Named first, then bound: safe. Values without a destructor may be passed as they are.
    auto pair = co_await self->async_pair();
    auto [count2, text2] = pair;
    std::chrono::milliseconds const wait{5};
    auto again = co_await self->async_count(wait, count > 1 && !name.empty());
    co_await self->timer_.async_wait(asio::use_awaitable); // an Asio operation, not a coroutine of this tree
    std::ignore = std::tie(c, n, s, text, waited, count2, text2, again);
}

} // namespace sample
