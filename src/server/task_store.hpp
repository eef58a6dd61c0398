// The tasks of one server process: each task's status, timestamps, TTL and outcome, the input requests it
// waits on, and who may see it. A task is found only by its owner (a legacy session, or a modern caller's
// verified identity; "" for callers without one, whose ids are bearer secrets: 128 random bits); an expired
// task is gone, as if never made; one owner holds at most `max_per_owner` tasks at once. Terminal statuses
// never change, so a cancellation is sticky. Pure bookkeeping under one lock: the caller says what time it
// is, and the running of tasks lives in task_registry.
#pragma once

#include <duet/jsonrpc/error.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/protocol/tasks.hpp>
#include <duet/protocol/version.hpp>

#include <boost/json/object.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::server::detail {

struct task_entry {
    protocol::task_view view;
    std::string owner;
    protocol::era era = protocol::era::modern;
    protocol::version version = protocol::latest_modern_version;
    /// completed (and a 2025-11-25 tool result with isError, whose task is failed): the result as shaped for
    /// the task's era and version.
    std::optional<boost::json::object> result;
    std::optional<jsonrpc::error_object> error; ///< failed with a JSON-RPC error
    boost::json::object input_requests;         ///< outstanding, by key: {method, params}
    std::chrono::system_clock::time_point expires = std::chrono::system_clock::time_point::max();
};

class task_store {
public:
    using clock = std::chrono::system_clock;

    struct limits {
        std::size_t max_per_owner = 1000;
    };

    explicit task_store(limits l) : limits_(l) {}

    /// A new task, working, for `owner`; or the -32603 that refuses it when the owner holds its maximum.
    /// `ttl` empty: unlimited.
    [[nodiscard]] boost::system::result<task_entry, jsonrpc::error_object>
    create(std::string owner, protocol::era era, protocol::version version,
           std::optional<std::chrono::milliseconds> ttl, std::chrono::milliseconds poll_interval,
           clock::time_point now);

    /// The task, if `owner` has one by that id that has not expired.
    [[nodiscard]] std::optional<task_entry> find(std::string_view id, std::string_view owner,
                                                 clock::time_point now);

    /// Applies `change` to a task that is neither gone nor terminal, under the lock; when it returns true the
    /// change stands and lastUpdatedAt becomes `now`. The entry after the change, or empty when nothing
    /// changed.
    [[nodiscard]] std::optional<task_entry> update(std::string_view id, clock::time_point now,
                                                   std::function<bool(task_entry&)> const& change);

    /// Moves a task to `to` if the status machine allows it (protocol::may_move).
    std::optional<task_entry> move(std::string_view id, protocol::task_status to, clock::time_point now);

    /// `owner`'s tasks in id order after `after` (empty: from the first), at most `limit`, and whether more
    /// follow.
    [[nodiscard]] std::pair<std::vector<task_entry>, bool>
    list(std::string_view owner, std::string_view after, std::size_t limit, clock::time_point now);

    /// Forgets every task whose TTL has elapsed; their ids.
    std::vector<std::string> sweep(clock::time_point now);

    [[nodiscard]] std::size_t size() const;

private:
    bool expired(task_entry const& e, clock::time_point now) const { return e.expires <= now; }

    limits limits_;
    mutable std::mutex mutex_;
    std::map<std::string, task_entry, std::less<>> tasks_;
    std::map<std::string, std::size_t, std::less<>> per_owner_;
};

/// 32 lowercase hex digits from OpenSSL's generator: unguessable, as a task id must be (SEP-2663 §Security).
[[nodiscard]] std::string new_task_id();

} // namespace duet::server::detail
