// A call that may become a task (task_link), as the dispatcher, the handler's request_context and the
// registry share it; how it waits (wake_signal) and what it is planned as (task_plan). The registry itself is
// in task_registry.hpp.
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/protocol/tasks.hpp>
#include <duet/server/request_context.hpp>
#include <duet/server/server.hpp>

#include "task_entry.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace duet::server::detail {

/// How long a waiter on a task (its handler's input, a tasks/result) sleeps at most before it looks again.
inline constexpr std::chrono::steady_clock::duration task_recheck_every = std::chrono::seconds(1);

/// Wakes one waiting coroutine from any thread; a wake that finds nobody waiting is kept for the next wait.
class wake_signal {
public:
    explicit wake_signal(boost::asio::any_io_executor ex) : channel_(std::move(ex), 1) {}
    void notify() { channel_.try_send(boost::system::error_code{}); }
    /// Until notified (true) or `timeout` has passed (false).
    [[nodiscard]] boost::asio::awaitable<bool> async_wait_for(std::chrono::steady_clock::duration timeout);

private:
    boost::asio::experimental::concurrent_channel<void(boost::system::error_code)> channel_;
};

/// What the dispatcher knows before a call that may become a task runs.
struct task_plan {
    std::string owner;                            ///< whose task it is (task_store)
    std::chrono::milliseconds after{0};           ///< how long it runs as a plain request first
    std::optional<std::chrono::milliseconds> ttl; ///< the 2025-11-25 client's requested TTL
};

class task_registry;

/// One call that may become a task: shared by the dispatcher that answers its request, the handler's
/// request_context, and the registry once it is a task. The handler's changes to its task (status messages,
/// questions, its outcome) are written to the store one after another, in the order it made them.
class task_link : public std::enable_shared_from_this<task_link> {
public:
    task_link(std::shared_ptr<task_registry> registry, task_plan plan, protocol::era era,
              protocol::version version, std::weak_ptr<request_state> state,
              boost::asio::any_io_executor dispatcher);

    // ---- the dispatcher's side, and the handler's (async_become_task)

    /// Makes the call a task now, unless it is one already, is becoming one, or its handler committed to
    /// answering the request; the -32603 of a full task store (or one out of reach).
    [[nodiscard]] boost::asio::awaitable<boost::system::result<void, jsonrpc::error_object>> async_promote();
    /// The task the request is answered with, once there is one.
    [[nodiscard]] std::optional<protocol::task_view> created() const;
    /// The handler's outcome, when it ended before the call became a task.
    [[nodiscard]] std::optional<answer_result> take_outcome();
    [[nodiscard]] wake_signal& dispatcher_wake() noexcept { return dispatcher_wake_; }

    // ---- the handler's side

    /// Where the handler runs; called once, before it starts.
    void start(boost::asio::any_io_executor handler);
    /// The handler ended: its request is answered with `outcome`, or the task stores it.
    void finish(answer_result outcome);
    /// The task's id, once the call is a task.
    [[nodiscard]] std::optional<std::string> task_id() const;
    /// A modern handler about to end its run with an input_required round: true unless the call is a task
    /// already (its questions then go to the task instead). Waits while the call is becoming a task.
    [[nodiscard]] boost::asio::awaitable<bool> async_commit_to_rounds();
    /// Wakes the dispatcher after the handler made the call a task itself (async_become_task): it answers the
    /// request with the task.
    void wake_dispatcher() { dispatcher_wake_.notify(); }
    /// Modern task: asks the client through the task (input_required, tasks/update) and waits for every
    /// answer, or for the task to end.
    [[nodiscard]] boost::asio::awaitable<std::vector<peer_result>>
    async_task_inputs(std::vector<input_request> requests, boost::json::object const& client_caps);
    /// A handler's progress message becomes the task's statusMessage.
    void note_status(std::string message);
    /// Legacy task: the status while the handler waits on requests to the client.
    void note_waiting_for_client(bool waiting);

    // ---- the registry's side

    /// Answers to this task's input requests arrived (tasks/update).
    void deliver(boost::json::object const& answers);
    /// The task was cancelled or expired: the handler sees ctx.cancelled(), and stops waiting for input.
    void cancel();
    /// The task changed: 2025-11-25 sessions hear notifications/tasks/status.
    void changed(task_entry const& e);

    [[nodiscard]] protocol::era era() const noexcept { return era_; }

private:
    enum class phase { request, promoting, answering, task };
    // One change of the handler's to its task, waiting its turn to be written.
    struct task_write {
        enum class kind { message, status, ask, complete } what;
        std::string message;
        protocol::task_status status = protocol::task_status::working;
        boost::json::object questions;
        std::optional<answer_result> outcome;
    };

    void write(task_write w);
    static boost::asio::awaitable<void> async_write_all(std::shared_ptr<task_link> self,
                                                        std::shared_ptr<request_state> state);

    std::shared_ptr<task_registry> registry_;
    task_plan plan_;
    protocol::era era_;
    protocol::version version_;
    std::weak_ptr<request_state> state_;
    boost::asio::any_io_executor dispatcher_;
    wake_signal dispatcher_wake_;
    mutable std::mutex mutex_;
    phase phase_ = phase::request;
    std::optional<protocol::task_view> created_;
    std::optional<answer_result> outcome_;
    std::shared_ptr<wake_signal> input_wake_;
    boost::json::object answers_; ///< answers to the task's input requests, by key
    bool cancelled_ = false;
    std::deque<task_write> writes_;
    bool writing_ = false;
};

} // namespace duet::server::detail
