#include <duet/protocol/capabilities.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/protocol/tasks.hpp>

#include <cstdio>
#include <ctime>

namespace duet::protocol {

std::string_view to_string(task_status s) noexcept {
    switch (s) {
    case task_status::working:
        return "working";
    case task_status::input_required:
        return "input_required";
    case task_status::completed:
        return "completed";
    case task_status::failed:
        return "failed";
    case task_status::cancelled:
        return "cancelled";
    }
    return "working";
}

std::optional<task_status> parse_task_status(std::string_view s) noexcept {
    for (auto t : {task_status::working, task_status::input_required, task_status::completed,
                   task_status::failed, task_status::cancelled})
        if (to_string(t) == s)
            return t;
    return std::nullopt;
}

bool is_terminal(task_status s) noexcept {
    return s == task_status::completed || s == task_status::failed || s == task_status::cancelled;
}

bool may_move(task_status from, task_status to) noexcept {
    return !is_terminal(from) && from != to;
}

std::string_view to_string(task_support s) noexcept {
    switch (s) {
    case task_support::forbidden:
        return "forbidden";
    case task_support::optional:
        return "optional";
    case task_support::required:
        return "required";
    }
    return "forbidden";
}

std::string iso8601(std::chrono::system_clock::time_point t) {
    auto const ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
    auto const seconds = static_cast<std::time_t>(ms / 1000 - (ms % 1000 < 0 ? 1 : 0));
    auto const millis = static_cast<int>(((ms % 1000) + 1000) % 1000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char out[64];
    std::snprintf(out, sizeof out, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                  utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
    return out;
}

boost::json::object task_json(task_view const& t, era e) {
    bool const modern = e == era::modern;
    boost::json::object o;
    o["taskId"] = t.id;
    o["status"] = to_string(t.status);
    if (!t.status_message.empty())
        o["statusMessage"] = t.status_message;
    o["createdAt"] = iso8601(t.created);
    o["lastUpdatedAt"] = iso8601(t.updated);
    auto& ttl = o[modern ? "ttlMs" : "ttl"];
    if (t.ttl_ms)
        ttl = *t.ttl_ms;
    else
        ttl = nullptr;
    if (t.poll_interval_ms)
        o[modern ? "pollIntervalMs" : "pollInterval"] = *t.poll_interval_ms;
    return o;
}

boost::json::object create_task_result(task_view const& t, era e) {
    if (e == era::legacy)
        return boost::json::object{{"task", task_json(t, e)}};
    auto o = task_json(t, e);
    o["resultType"] = "task";
    return o;
}

boost::system::result<std::string_view, error_object> task_id_param(boost::json::value const& params) {
    auto const* p = params.if_object();
    auto const* id = p ? p->if_contains("taskId") : nullptr;
    if (!id || !id->is_string())
        return invalid_params("Invalid params: taskId must be a string");
    return std::string_view(id->get_string());
}

boost::system::result<std::optional<task_request>, error_object>
legacy_task_request(boost::json::value const& params) {
    auto const* p = params.if_object();
    auto const* task = p ? p->if_contains("task") : nullptr;
    if (!task || task->is_null())
        return std::optional<task_request>();
    if (!task->is_object())
        return invalid_params("Invalid params: task must be an object");
    task_request r;
    if (auto const* ttl = task->get_object().if_contains("ttl"); ttl && !ttl->is_null()) {
        if (ttl->is_int64() && ttl->get_int64() >= 0)
            r.ttl_ms = ttl->get_int64();
        else if (ttl->is_uint64())
            r.ttl_ms = static_cast<std::int64_t>(std::min<std::uint64_t>(ttl->get_uint64(), INT64_MAX));
        else
            return invalid_params("Invalid params: task.ttl must be a non-negative integer (milliseconds)");
    }
    return std::optional<task_request>(r);
}

task_decision decide_task(std::string_view tool, task_support support, era e, version v,
                          bool declares_extension, bool legacy_asked) {
    using kind = task_decision::kind;
    auto const refuse = [](error_object why) {
        return task_decision{kind::refuse, std::move(why)};
    };
    if (e == era::modern) {
        if (support == task_support::forbidden)
            return {};
        if (declares_extension)
            return {kind::task, std::nullopt};
        if (support == task_support::required)
            return refuse(missing_required_client_capability(requirement(client_capability::tasks)));
        return {};
    }
    bool const asked = legacy_asked && v == version::v2025_11_25;
    switch (support) {
    case task_support::forbidden:
        if (asked)
            return refuse(
                method_not_found("tools/call", "tool \"" + std::string(tool) +
                                                   "\" does not run as a task (execution.taskSupport "
                                                   "is \"forbidden\")"));
        return {};
    case task_support::optional:
        return asked ? task_decision{kind::task, std::nullopt} : task_decision{};
    case task_support::required:
        if (asked)
            return {kind::task, std::nullopt};
        if (v != version::v2025_11_25)
            return refuse(method_not_found("tools/call", "tool \"" + std::string(tool) +
                                                             "\" runs only as a task, and protocol version " +
                                                             std::string(to_string(v)) + " has no tasks"));
        return refuse(method_not_found("tools/call", "tool \"" + std::string(tool) +
                                                         "\" runs only as a task: call it with params.task "
                                                         "(execution.taskSupport is \"required\")"));
    }
    return {};
}

bool well_formed_input_response(std::string_view method, boost::json::value const& answer) {
    auto const* o = answer.if_object();
    if (!o)
        return false;
    auto is_string = [&](std::string_view k) {
        return o->contains(k) && o->at(k).is_string();
    };
    if (method == "elicitation/create") {
        if (!is_string("action"))
            return false;
        auto const a = o->at("action").get_string();
        if (a != "accept" && a != "decline" && a != "cancel")
            return false;
        return !o->contains("content") || o->at("content").is_object();
    }
    if (method == "sampling/createMessage")
        return is_string("role") && is_string("model") && o->contains("content") &&
               (o->at("content").is_object() || o->at("content").is_array());
    if (method == "roots/list")
        return o->contains("roots") && o->at("roots").is_array();
    return true;
}

} // namespace duet::protocol
