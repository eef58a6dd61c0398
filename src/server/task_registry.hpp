// Running tools/call requests as tasks, in both eras (protocol/tasks.hpp for the wire). A call that may
// become a task starts as a plain request linked to a task_link; it becomes a task at once, when its tool's
// task_after elapses, or when its handler asks (request_context::async_become_task), and the request is then
// answered with the task while the handler goes on. The registry answers tasks/get, update, cancel (modern)
// and tasks/get, result, list, cancel (2025-11-25) from the task store (duet/store/task_store.hpp), delivers
// answers to a task's input requests, and stores each task's outcome when its handler ends. Where the store
// is shared by several processes, each change is announced on the event bus, so the process running a task
// hears the answers and cancellations another took, and every process's listens and tasks/result waiters
// hear the task's changes.
#pragma once

#include <duet/protocol/method_table.hpp>
#include <duet/protocol/tasks.hpp>
#include <duet/server/server.hpp>
#include <duet/store/event_bus.hpp>
#include <duet/store/task_store.hpp>

#include "task_entry.hpp"
#include "task_link.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace duet::server::detail {

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
        /// Where the tasks live (null: in this process's memory), and, when the store is shared, the bus and
        /// topic its changes are announced on. The topic names the endpoint: a task belongs to its caller at
        /// this endpoint, so servers with other topics sharing the store never see each other's tasks.
        std::shared_ptr<store::task_store> store;
        std::shared_ptr<store::event_bus> bus;
        std::string topic = "duet/tasks";
    };

    /// Call start() once made, so that it hears the other processes.
    explicit task_registry(options o);
    ~task_registry();
    task_registry(task_registry const&) = delete;
    task_registry& operator=(task_registry const&) = delete;
    void start();

    /// A new task for a call, attached to its link.
    [[nodiscard]] boost::asio::awaitable<boost::system::result<task_entry, jsonrpc::error_object>>
    async_create(std::shared_ptr<task_link> link, task_plan plan, protocol::era era,
                 protocol::version version);

    /// Stores a task's outcome when its handler ends (unless it ended otherwise first: cancelled, expired).
    [[nodiscard]] boost::asio::awaitable<void> async_complete(std::string id, answer_result outcome);
    /// Status and message changes the running handler makes.
    [[nodiscard]] boost::asio::awaitable<void> async_move(std::string id, protocol::task_status to);
    [[nodiscard]] boost::asio::awaitable<void> async_set_message(std::string id, std::string message);
    /// A modern task's handler asks: its questions become the task's inputRequests.
    [[nodiscard]] boost::asio::awaitable<void> async_ask(std::string id, boost::json::object questions);

    /// Answers a tasks/* request of `owner`: tasks/result (2025-11-25) once its task ended.
    [[nodiscard]] boost::asio::awaitable<answer_result>
    async_answer(protocol::method_id method, boost::json::value params, std::string owner, protocol::era era);

    /// Whether a listen of `owner` may watch task `id`: its live task, as far as this process has heard
    /// (every task made or changed here, and, with a shared store, every one announced since this process
    /// started); with a shared store also any well-formed id not heard of yet (its creation may still be on
    /// the way), whose changes then reach the listen only if they are `owner`'s.
    [[nodiscard]] bool may_watch(std::string const& id, std::string const& owner);
    /// Calls `w` with the task as tasks/get shows it (the extension's DetailedTask) after each change of
    /// `owner`'s modern task `id`, wherever it changed, for as long as the returned token lives.
    using task_watcher = std::function<void(boost::json::object const& detailed)>;
    [[nodiscard]] std::shared_ptr<void> watch(std::string const& id, std::string owner, task_watcher w);

    [[nodiscard]] options const& settings() const noexcept { return options_; }
    /// Whether other processes share the store.
    [[nodiscard]] bool shared() const noexcept;
    /// What tasks/update took for task `id` so far (task_entry::answers), whoever owns it; nullopt when the
    /// task is no longer live (terminal or gone), empty when the store cannot be reached (the running
    /// handler's next look tries again).
    [[nodiscard]] boost::asio::awaitable<std::optional<boost::json::object>>
    async_stored_answers(std::string id);

private:
    using store_failure = store::task_store::failure;
    // The owner a caller is at this endpoint (options::topic), as the store keeps it.
    [[nodiscard]] std::string scoped(std::string const& owner) const;
    struct running_task {
        std::weak_ptr<task_link> link;
        std::chrono::system_clock::time_point expires;
    };
    struct watcher {
        std::string owner;
        std::weak_ptr<task_watcher> w;
    };
    struct known_task {
        std::string owner;
        std::chrono::system_clock::time_point expires;
    };

    boost::asio::awaitable<answer_result> async_get(std::string id, std::string owner, protocol::era era);
    boost::asio::awaitable<answer_result> async_update(std::string id, boost::json::value params,
                                                       std::string owner);
    boost::asio::awaitable<answer_result> async_cancel(std::string id, std::string owner, protocol::era era);
    boost::asio::awaitable<answer_result> async_list(boost::json::value params, std::string owner);
    boost::asio::awaitable<answer_result> async_result(std::string id, std::string owner);
    std::optional<answer_result> finished(task_entry const& e) const;

    // The store's operations, resumed on the caller's executor; a store out of reach is logged and becomes
    // the caller's -32603.
    boost::asio::awaitable<boost::system::result<std::optional<task_entry>, jsonrpc::error_object>>
    async_find(std::string id, std::string owner);
    boost::asio::awaitable<boost::system::result<std::optional<task_entry>, jsonrpc::error_object>>
    async_change(std::string id, std::function<bool(task_entry&)> change);

    std::shared_ptr<task_link> running(std::string const& id);
    // The task as the store has it while live (neither terminal nor gone); an empty entry when the store
    // cannot be reached.
    boost::asio::awaitable<std::optional<task_entry>> async_running_record(std::string id);
    // A shared store: every couple of seconds while tasks run here, each is looked up, and a handler whose
    // task is no longer live (cancelled elsewhere, expired) hears a cancellation.
    void watch_running(boost::asio::any_io_executor ex);
    static boost::asio::awaitable<void> async_watch_running(std::weak_ptr<task_registry> weak);
    boost::asio::awaitable<bool> async_check_running();
    // A change made here: its effects in this process, and its announcement to the others.
    void changed(task_entry const& e);
    // A change, wherever it was made: a 2025-11-25 session hears it, watchers hear it, tasks/result wakes.
    void apply(task_entry const& e, bool made_here);
    // Tells the other processes sharing the store (none: nothing to do).
    void announce(task_entry const& e);
    void on_announcement(std::string_view payload);
    void announce_answers(std::string const& id, boost::json::object const& answers);
    void sweep();

    options options_;
    std::shared_ptr<store::task_store> store_;
    std::string origin_; ///< this process's mark on its announcements
    std::uint64_t subscription_ = 0;
    bool subscribed_ = false;
    std::mutex mutex_;
    std::map<std::string, running_task, std::less<>> running_;
    std::map<std::string, known_task, std::less<>> known_;
    std::multimap<std::string, std::weak_ptr<wake_signal>, std::less<>> result_waiters_;
    std::multimap<std::string, watcher, std::less<>> watchers_;
    std::chrono::steady_clock::time_point swept_{};
    bool watching_ = false; ///< async_watch_running is on
};

} // namespace duet::server::detail
