// A task as the server keeps it (status, timestamps, TTL, outcome, the input requests it waits on), and its
// form in a task store (duet/store/task_store.hpp): the record's body is this entry as JSON, so every process
// sharing the store reads what any of them wrote.
#pragma once

#include <duet/jsonrpc/error.hpp>
#include <duet/protocol/tasks.hpp>
#include <duet/protocol/version.hpp>
#include <duet/store/task_store.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <optional>
#include <string>

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
    /// What tasks/update took, by key, until the task ends: the handler's process reads them here should it
    /// have missed their announcement (another process took them).
    boost::json::object answers;
    std::chrono::system_clock::time_point expires = std::chrono::system_clock::time_point::max();
    /// As read: the process running it ended before it did (store::task_record::orphaned); never stored.
    bool orphaned = false;
};

[[nodiscard]] store::task_record to_record(task_entry const& e);
/// The entry a record holds; nullopt for a body this server cannot read (written by an incompatible one).
[[nodiscard]] std::optional<task_entry> from_record(store::task_record const& r);

} // namespace duet::server::detail
