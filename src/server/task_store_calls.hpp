// What the registry's parts share to reach the task store (duet/store/task_store.hpp) from a coroutine, and
// the errors they answer with when a task is not there or the store is out of reach.
#pragma once

#include <duet/log/log.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/store/task_store.hpp>

#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace duet::server::detail {

inline protocol::error_object task_not_found(std::string_view id) {
    return protocol::invalid_params("Invalid params: no task \"" + std::string(id) +
                                    "\" (it never existed, belongs to another caller, or has expired)");
}

inline protocol::error_object task_store_failed(std::string const& why) {
    log::write(log::event{.severity = log::level::error, .name = "task_store_failed", .message = why});
    return protocol::internal_error();
}

template<class T>
using store_result = boost::system::result<T, store::task_store::failure>;

// Runs one store operation (`start` hands it the callback) and resumes the awaiting coroutine on its own
// executor with the answer: a shared store answers on a thread of its own. Not a coroutine itself, so that
// nothing it is given lives in a frame GCC 12 might destroy twice.
template<class T>
using store_call = std::function<void(std::function<void(store_result<T>)>)>;

template<class T>
boost::asio::awaitable<store_result<T>> async_store(store_call<T> start) {
    return boost::asio::async_initiate<decltype(boost::asio::use_awaitable), void(store_result<T>)>(
        [](auto handler, store_call<T> begin) {
            auto const ex = boost::asio::get_associated_executor(handler);
            auto held = std::make_shared<decltype(handler)>(std::move(handler));
            begin([ex, held](store_result<T> answer) {
                boost::asio::post(ex, [held, answer = std::move(answer)]() mutable {
                    std::move (*held)(std::move(answer));
                });
            });
        },
        boost::asio::use_awaitable, std::move(start));
}

/// The record `id` names, as async_store() brings it.
inline boost::asio::awaitable<store_result<std::optional<store::task_record>>>
async_find_record(std::shared_ptr<store::task_store> target, std::string id) {
    store_call<std::optional<store::task_record>> find = [target = std::move(target),
                                                          id = std::move(id)](auto done) {
        target->find(id, std::move(done));
    };
    return async_store(std::move(find));
}

} // namespace duet::server::detail
