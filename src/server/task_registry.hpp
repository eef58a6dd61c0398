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

#include <duet/jsonrpc/message.hpp>
#include <duet/protocol/method_table.hpp>
#include <duet/protocol/tasks.hpp>
#include <duet/server/request_context.hpp>
#include <duet/server/server.hpp>
#include <duet/store/event_bus.hpp>
#include <duet/store/task_store.hpp>

#include "task_entry.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <deque>
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

    /// Whether `owner` has a live task by that id, as far as this process has heard (every task made or
    /// changed here, and, with a shared store, every one announced since this process started).
    [[nodiscard]] bool known(std::string const& id, std::string const& owner);
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
