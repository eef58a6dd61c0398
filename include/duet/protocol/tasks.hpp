/// @file duet/protocol/tasks.hpp
///
/// Tasks on the wire, in both eras: the status machine they share, and the shapes each era gives a task.
/// 2025-11-25 has experimental core tasks (the client asks with `params.task`; `CreateTaskResult{task}`;
/// `ttl`, `pollInterval`; tasks/get, result, list, cancel); 2026-07-28 moved them to the extension
/// `io.modelcontextprotocol/tasks` (SEP-2663: the server decides; a flat `resultType:"task"` result; `ttlMs`,
/// `pollIntervalMs`; tasks/get, update, cancel). Pure: no I/O, no clock.
///
///     task_view t{.id = "4f…", .status = task_status::working, .created = now, .updated = now,
///                 .ttl_ms = 3'600'000, .poll_interval_ms = 1000};
///     create_task_result(t, era::modern);   // {"resultType":"task","taskId":"4f…","status":"working",…}
///     create_task_result(t, era::legacy);   // {"task":{"taskId":"4f…","status":"working","ttl":…}}
#pragma once

#include <duet/protocol/errors.hpp>
#include <duet/protocol/version.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace duet::protocol {

/// The extension's identifier, under `capabilities.extensions` on both sides.
inline constexpr std::string_view tasks_extension = "io.modelcontextprotocol/tasks";
/// The 2025-11-25 `_meta` key that ties a message to its task.
inline constexpr std::string_view related_task_key = "io.modelcontextprotocol/related-task";

enum class task_status : std::uint8_t { working, input_required, completed, failed, cancelled };

[[nodiscard]] std::string_view to_string(task_status s) noexcept;
[[nodiscard]] std::optional<task_status> parse_task_status(std::string_view s) noexcept;
/// completed, failed and cancelled: a task there never changes again.
[[nodiscard]] bool is_terminal(task_status s) noexcept;
/// Whether a task may move from `from` to `to`: working <-> input_required, either to a terminal status;
/// nothing leaves a terminal status, and no status moves to itself.
[[nodiscard]] bool may_move(task_status from, task_status to) noexcept;

/// Whether a tool runs as a task (2025-11-25's `execution.taskSupport`; Duet keeps the word for both eras).
enum class task_support : std::uint8_t {
    forbidden, ///< never a task (the default)
    optional,  ///< a task when the client can follow one, else a plain call
    required,  ///< only as a task: a client that cannot follow one is refused
};
[[nodiscard]] std::string_view to_string(task_support s) noexcept;

/// What every task shape shows.
struct task_view {
    std::string id;
    task_status status = task_status::working;
    std::string status_message; ///< empty: none
    std::chrono::system_clock::time_point created;
    std::chrono::system_clock::time_point updated;
    std::optional<std::int64_t> ttl_ms; ///< empty: unlimited (null on the wire)
    std::optional<std::int64_t> poll_interval_ms;
};

/// An ISO 8601 UTC timestamp with milliseconds: "2026-12-05T12:43:57.123Z".
[[nodiscard]] std::string iso8601(std::chrono::system_clock::time_point t);

/// The Task object as `e` writes it: `ttlMs` / `pollIntervalMs` (modern), `ttl` / `pollInterval` (legacy).
[[nodiscard]] boost::json::object task_json(task_view const& t, era e);

/// The answer that hands the client a task instead of a result: modern `{resultType:"task", ...Task}`,
/// legacy `{task: Task}`.
[[nodiscard]] boost::json::object create_task_result(task_view const& t, era e);

/// The `taskId` of a tasks/* request's params, or the -32602 that refuses them.
[[nodiscard]] boost::system::result<std::string_view, error_object>
task_id_param(boost::json::value const& params);

/// A 2025-11-25 tools/call's `params.task`: whether the client asked for a task, and the TTL it asked for.
struct task_request {
    std::optional<std::int64_t> ttl_ms;
};
/// Empty: the call asks for no task. A `task` that is not an object, or a `ttl` that is not a non-negative
/// integer, is a -32602.
[[nodiscard]] boost::system::result<std::optional<task_request>, error_object>
legacy_task_request(boost::json::value const& params);

/// How one tools/call runs, given its tool's task_support and what the request can follow (ERA-POLICY for
/// tasks): a modern request that declares the extension may get a task; a 2025-11-25 request gets one only
/// when it asks (`params.task`), and asking for a tool that forbids tasks is -32601; a `required` tool
/// refuses a request that cannot follow a task (-32021 naming the extension for modern, -32601 for legacy).
/// Modern requests ignore `params.task`, as older legacy versions do (they have no tasks).
struct task_decision {
    enum class kind : std::uint8_t { plain, task, refuse } what = kind::plain;
    std::optional<error_object> refusal; ///< set for `refuse`
};
[[nodiscard]] task_decision decide_task(std::string_view tool, task_support support, era e, version v,
                                        bool declares_extension, bool legacy_asked);

/// Whether `answer` has the shape the result of input request `method` must have (ElicitResult,
/// CreateMessageResult, ListRootsResult): a malformed answer is the client's error, never a reason to ask
/// again.
[[nodiscard]] bool well_formed_input_response(std::string_view method, boost::json::value const& answer);

} // namespace duet::protocol
