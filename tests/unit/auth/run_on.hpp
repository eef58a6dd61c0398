// What the fetching auth suites share: one coroutine run to its end on a test's io_context, its result
// returned (its exception rethrown).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <utility>

namespace auth_test_support {

template<class T>
T run_on(boost::asio::io_context& io, boost::asio::awaitable<T> work) {
    auto done = boost::asio::co_spawn(io, std::move(work), boost::asio::use_future);
    io.restart();
    io.run();
    return done.get();
}

} // namespace auth_test_support
