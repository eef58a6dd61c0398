// Running tools/call requests as tasks, in both eras (protocol/tasks.hpp for the wire). A call that may
// become a task starts as a plain request linked to a task_link; it becomes a task at once, when its tool's
// task_after elapses, or when its handler asks (request_context::async_become_task), and the request is then
// answered with the task while the handler goes on. The registry answers tasks/get, update, cancel (modern)
// and tasks/get, result, list, cancel (2025-11-25) from its task_store, delivers answers to a task's input
// requests, and stores each task's outcome when its handler ends.
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/protocol/method_table.hpp>
#include <duet/protocol/tasks.hpp>
#include <duet/server/request_context.hpp>
#include <duet/server/server.hpp>

#include "task_store.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace duet::server::detail {

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
/// request_context, and the registry once it is a task.
class task_link : public std::enable_shared_from_this<task_link> {
public:
    task_link(std::shared_ptr<task_registry> registry, task_plan plan, protocol::era era,
              protocol::version version, std::weak_ptr<request_state> state,
              boost::asio::any_io_executor dispatcher);

    // ---- the dispatcher's side

    /// Makes the call a task now, unless it is one already or its handler committed to answering the
    /// request; the -32603 of a full task store.
    [[nodiscard]] boost::system::result<void, jsonrpc::error_object> promote();
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
    /// already (its questions then go to the task instead).
    [[nodiscard]] bool commit_to_rounds();
    /// Wakes the dispatcher after the handler made the call a task itself (become_task): it answers the
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
    enum class phase { request, answering, task };

    std::shared_ptr<task_registry> registry_;
    task_plan plan_;
    protocol::era era_;
    protocol::version version_;
    std::weak_ptr<request_state> state_;
    wake_signal dispatcher_wake_;
    mutable std::mutex mutex_;
    phase phase_ = phase::request;
    std::optional<protocol::task_view> created_;
    std::optional<answer_result> outcome_;
    std::shared_ptr<wake_signal> input_wake_;
    boost::json::object answers_; ///< answers to the task's input requests, by key
    bool cancelled_ = false;
};

/// Who owns the tasks of a modern request: its caller, as its transport established them; "" without an
/// identity (a task id is then its own secret).
[[nodiscard]] std::string modern_task_owner(protocol::caller_identity const* caller);

/// A task as the extension's tasks/get and notifications/tasks show it: the Task with what its status has
/// inline (inputRequests, result, error).
[[nodiscard]] boost::json::object detailed_task(task_entry const& e);

class task_registry : public std::enable_shared_from_this<task_registry> {
public:
    struct options {
        std::chrono::milliseconds ttl = std::chrono::hours(1);
        std::chrono::milliseconds max_ttl = std::chrono::hours(24);
        std::chrono::milliseconds poll_interval = std::chrono::seconds(1);
        std::size_t max_per_owner = 1000;
        std::size_t page_size = 100;
    };

    explicit task_registry(options o) : options_(o), store_({.max_per_owner = o.max_per_owner}) {}

    /// A new task for a call, attached to its link.
    [[nodiscard]] boost::system::result<task_entry, jsonrpc::error_object>
    create(std::shared_ptr<task_link> const& link, task_plan const& plan, protocol::era era,
           protocol::version version);

    /// Stores a task's outcome when its handler ends (unless it ended otherwise first: cancelled, expired).
    void complete(std::string const& id, answer_result outcome);
    /// Status and message changes the running handler makes.
    void move(std::string const& id, protocol::task_status to);
    void set_message(std::string const& id, std::string message);
    /// A modern task's handler asks: its questions become the task's inputRequests.
    void ask(std::string const& id, boost::json::object const& questions);

    /// Answers a tasks/* request of `owner` at once; empty for a tasks/result that must wait
    /// (async_result).
    [[nodiscard]] std::optional<answer_result> answer(protocol::method_id method,
                                                      boost::json::value const& params,
                                                      std::string const& owner, protocol::era era);
    /// Calls `w` with the task as tasks/get shows it (the extension's DetailedTask) after each change of a
    /// modern task, from the thread that changed it, for as long as the returned token lives.
    using task_watcher = std::function<void(boost::json::object const& detailed)>;
    [[nodiscard]] std::shared_ptr<void> watch(std::string const& id, task_watcher w);

    /// tasks/result (2025-11-25): waits for the task to end, then answers what its call would have.
    [[nodiscard]] boost::asio::awaitable<answer_result> async_result(std::string id, std::string owner);

    [[nodiscard]] task_store& store() noexcept { return store_; }
    [[nodiscard]] options const& settings() const noexcept { return options_; }

private:
    answer_result get(std::string_view id, std::string const& owner, protocol::era era);
    answer_result update(std::string_view id, boost::json::value const& params, std::string const& owner);
    answer_result cancel(std::string_view id, std::string const& owner, protocol::era era);
    answer_result list(boost::json::value const& params, std::string const& owner);
    std::optional<answer_result> finished(task_entry const& e) const;
    std::shared_ptr<task_link> running(std::string const& id);
    // A change made: tells the link, wakes tasks/result waiters on a terminal status.
    void changed(task_entry const& e);
    void sweep();

    options options_;
    task_store store_;
    std::mutex mutex_;
    std::map<std::string, std::weak_ptr<task_link>, std::less<>> running_;
    std::multimap<std::string, std::weak_ptr<wake_signal>, std::less<>> result_waiters_;
    std::multimap<std::string, std::weak_ptr<task_watcher>, std::less<>> watchers_;
    std::chrono::steady_clock::time_point swept_{};
};

} // namespace duet::server::detail
