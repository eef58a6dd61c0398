#include "support/transcript.hpp"

#include "stdio/messages.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <iostream>

namespace duet::test {

namespace json = boost::json;

namespace {

bool has_schema(std::string_view version) {
    return version == "2025-11-25" || version == "2025-06-18" || version == "2026-07-28";
}

// The envelope definitions: 2025-06-18 (draft-07) names them differently.
std::string_view result_envelope(std::string_view version) {
    return version == "2025-06-18" ? "JSONRPCResponse" : "JSONRPCResultResponse";
}
std::string_view error_envelope(std::string_view version) {
    return version == "2025-06-18" ? "JSONRPCError" : "JSONRPCErrorResponse";
}

// The result definition that answers `method`; empty when the schema has none.
std::string_view result_type(std::string_view method, bool modern) {
    if (method == "initialize")
        return "InitializeResult";
    if (method == "server/discover")
        return "DiscoverResult";
    if (method == "tools/list")
        return "ListToolsResult";
    if (method == "tools/call")
        return "CallToolResult";
    if (method == "resources/list")
        return "ListResourcesResult";
    if (method == "resources/templates/list")
        return "ListResourceTemplatesResult";
    if (method == "resources/read")
        return "ReadResourceResult";
    if (method == "prompts/list")
        return "ListPromptsResult";
    if (method == "prompts/get")
        return "GetPromptResult";
    if (method == "completion/complete")
        return "CompleteResult";
    if (method == "subscriptions/listen")
        return "SubscriptionsListenResult";
    if (!modern && (method == "ping" || method == "logging/setLevel" || method == "resources/subscribe" ||
                    method == "resources/unsubscribe"))
        return "EmptyResult";
    // 2025-11-25's core tasks (the modern extension's shapes are in its own schema, not the core one).
    if (!modern && method == "tasks/get")
        return "GetTaskResult";
    if (!modern && method == "tasks/list")
        return "ListTasksResult";
    if (!modern && method == "tasks/cancel")
        return "CancelTaskResult";
    if (!modern && method == "tasks/result")
        return "GetTaskPayloadResult";
    return {};
}

std::string_view notification_type(std::string_view method) {
    if (method == "notifications/progress")
        return "ProgressNotification";
    if (method == "notifications/message")
        return "LoggingMessageNotification";
    if (method == "notifications/tools/list_changed")
        return "ToolListChangedNotification";
    if (method == "notifications/prompts/list_changed")
        return "PromptListChangedNotification";
    if (method == "notifications/resources/list_changed")
        return "ResourceListChangedNotification";
    if (method == "notifications/resources/updated")
        return "ResourceUpdatedNotification";
    if (method == "notifications/subscriptions/acknowledged")
        return "SubscriptionsAcknowledgedNotification";
    if (method == "notifications/cancelled")
        return "CancelledNotification";
    if (method == "notifications/tasks/status")
        return "TaskStatusNotification";
    if (method == "notifications/tasks")
        return "JSONRPCNotification"; // the tasks extension's; its shape is in its own schema
    return {};
}

std::string_view server_request_type(std::string_view method) {
    if (method == "elicitation/create")
        return "ElicitRequest";
    if (method == "sampling/createMessage")
        return "CreateMessageRequest";
    if (method == "roots/list")
        return "ListRootsRequest";
    if (method == "ping")
        return "PingRequest";
    return {};
}

std::string key_of(json::value const& v) {
    return json::serialize(v);
}

json::value const* meta_of(json::object const& o) {
    auto const* p = o.if_contains("params");
    auto const* m = p && p->is_object() ? p->get_object().if_contains("_meta") : nullptr;
    return m && m->is_object() ? m : nullptr;
}

} // namespace

void transcript::record_sent(json::value const& message) {
    auto const* o = message.if_object();
    if (!o)
        return;
    auto const* method = o->if_contains("method");
    auto const* id = o->if_contains("id");
    if (!method || !method->is_string() || !id)
        return; // notifications and answers to server requests get no reply to classify
    std::string const m(method->get_string());
    tag at;
    auto const* meta = meta_of(*o);
    bool const claims_modern = meta && meta->get_object().contains(key_protocol_version);
    if (claims_modern && eras_ != served_eras::legacy_only)
        at.what = era::modern;
    else if (m == "initialize" && eras_ != served_eras::modern_only)
        at.what = era::legacy; // the version comes with the answer
    else if (m == "ping" && !legacy_version_ && eras_ != served_eras::modern_only)
        at = {era::legacy, "2025-11-25"}; // the legacy lifecycle allows ping before initialize
    else if (legacy_version_)
        at = {era::legacy, *legacy_version_};
    requests_[key_of(*id)] = {m, at};
    in_flight_[key_of(*id)] = at;
    if (meta)
        if (auto const* token = meta->get_object().if_contains("progressToken"))
            progress_tokens_[key_of(*token)] = at;
    if (m == "subscriptions/listen" && at.what == era::modern)
        listens_[key_of(*id)] = at;
}

transcript::tag transcript::classify_notification(json::object const& n) const {
    auto const method = n.at("method").as_string();
    if (!subscription_id_of(n).is_null())
        return {era::modern, {}};
    auto const* params = n.if_contains("params");
    auto const* p = params ? params->if_object() : nullptr;
    if (method == "notifications/progress" && p) {
        if (auto const* token = p->if_contains("progressToken"))
            if (auto it = progress_tokens_.find(key_of(*token)); it != progress_tokens_.end())
                return it->second;
    }
    if (method == "notifications/cancelled" && p) {
        if (auto const* rid = p->if_contains("requestId"))
            if (auto it = listens_.find(key_of(*rid)); it != listens_.end())
                return it->second;
    }
    if (method == "notifications/message") {
        // Logs belong to a request in flight; when those disagree on the era, the caller checks both.
        std::optional<tag> only;
        for (auto const& [id, t] : in_flight_) {
            if (only && (only->what != t.what || only->version != t.version))
                return {era::none, {}};
            only = t;
        }
        if (only)
            return *only;
    }
    if (legacy_version_)
        return {era::legacy, *legacy_version_};
    return {era::none, {}};
}

void transcript::record_one(json::value const& v, std::vector<entry>& out) {
    auto const* o = v.if_object();
    if (!o) {
        ADD_FAILURE() << "the server wrote a batch element that is not an object: " << v;
        return;
    }
    auto const* jsonrpc = o->if_contains("jsonrpc");
    if (!jsonrpc || *jsonrpc != "2.0")
        ADD_FAILURE() << "the server wrote a message without \"jsonrpc\":\"2.0\": " << v;
    auto const* method = o->if_contains("method");
    auto const* id = o->if_contains("id");
    entry e{v, {}, {}};
    if (method) {
        if (!method->is_string()) {
            ADD_FAILURE() << "non-string method: " << v;
            return;
        }
        if (id) {
            // A request from the server: legacy sessions only (DIGEST §10).
            if (!legacy_version_)
                ADD_FAILURE() << "the server sent a request outside a legacy session: " << v;
            e.eras.push_back({era::legacy, legacy_version_.value_or("")});
        } else {
            auto t = classify_notification(*o);
            if (t.what == era::none) {
                e.eras.push_back({era::modern, {}});
                e.eras.push_back({era::legacy, legacy_version_.value_or("2025-11-25")});
            } else {
                e.eras.push_back(t);
            }
        }
        out.push_back(std::move(e));
        return;
    }
    if (!o->contains("result") && !o->contains("error")) {
        ADD_FAILURE() << "the server wrote a message that is neither request, notification nor response: "
                      << v;
        return;
    }
    if (!id) {
        ADD_FAILURE() << "a response without an id member: " << v;
        return;
    }
    auto it = id->is_null() ? requests_.end() : requests_.find(key_of(*id));
    if (it == requests_.end()) {
        if (!id->is_null())
            ADD_FAILURE() << "a response to a request the test never sent: " << v;
        e.eras = {{era::modern, {}}, {era::legacy, "2025-11-25"}};
        out.push_back(std::move(e));
        return;
    }
    in_flight_.erase(key_of(*id));
    e.method = it->second.method;
    tag at = it->second.at;
    if (e.method == "initialize" && at.what == era::legacy && o->contains("result")) {
        auto const* pv = o->at("result").is_object()
                             ? o->at("result").get_object().if_contains("protocolVersion")
                             : nullptr;
        if (pv && pv->is_string()) {
            legacy_version_ = std::string(pv->get_string());
            at.version = *legacy_version_;
        }
    }
    if (at.what == era::legacy && at.version.empty())
        at.version = legacy_version_.value_or("2025-11-25");
    if (at.what == era::none)
        e.eras = {{era::modern, {}}, {era::legacy, "2025-11-25"}};
    else
        e.eras.push_back(at);
    out.push_back(std::move(e));
}

json::value transcript::record_received(std::string_view line) {
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (ec) {
        ADD_FAILURE() << "the server wrote a line that is not JSON (" << ec.message() << "): " << line;
        return nullptr;
    }
    received_.push_back(v);
    if (auto const* batch = v.if_array()) {
        if (batch->empty())
            ADD_FAILURE() << "the server wrote an empty batch";
        for (auto const& element : *batch)
            record_one(element, checks_);
    } else {
        record_one(v, checks_);
    }
    return v;
}

std::size_t transcript::expect_schema_valid(schema_validator& validator) const {
    std::vector<schema_check> checks;
    std::vector<std::string> what; // one description per check, for failures
    auto add = [&](std::string version, std::string_view type, json::value value, schema_mode mode) {
        what.push_back(version + " " + std::string(type) + ": " + json::serialize(value));
        checks.push_back({std::move(version), std::string(type), std::move(value), mode});
    };
    for (auto const& e : checks_) {
        auto const& o = e.message.as_object();
        for (auto const& t : e.eras) {
            bool const modern = t.what == era::modern;
            std::string const version = modern ? std::string(modern_version) : t.version;
            if (!has_schema(version))
                continue;
            auto const mode = modern ? schema_mode::open : schema_mode::closed;
            if (auto const* method = o.if_contains("method")) {
                std::string_view const m = method->get_string();
                // 2025-06-18 (draft-07) defines notifications and requests without their JSON-RPC members.
                json::value specific = e.message;
                if (version == "2025-06-18") {
                    specific.as_object().erase("jsonrpc");
                    specific.as_object().erase("id");
                }
                if (o.contains("id")) {
                    add(version, "JSONRPCRequest", e.message, schema_mode::open);
                    auto const type = server_request_type(m);
                    if (type.empty())
                        ADD_FAILURE() << "the server sent an unexpected request: " << e.message;
                    else
                        add(version, type, specific, mode);
                } else {
                    add(version, "JSONRPCNotification", e.message, schema_mode::open);
                    auto const type = notification_type(m);
                    if (type.empty())
                        ADD_FAILURE() << "the server sent an unexpected notification: " << e.message;
                    else if (type == "TaskStatusNotification")
                        // Its params are allOf [NotificationParams, Task]: a closed check of each part alone
                        // rejects the other's members, so the composition is checked open.
                        add(version, type, specific, schema_mode::open);
                    else
                        add(version, type, specific, mode);
                }
            } else if (auto const* error = o.if_contains("error")) {
                if (o.at("id").is_null()) {
                    // JSON-RPC 2.0 §5 requires `"id": null` when the id could not be read; the MCP schemas
                    // type RequestId as string | integer and make the member optional instead. The error
                    // object itself must still be an MCP Error.
                    add(version, "Error", *error, schema_mode::open);
                } else {
                    add(version, error_envelope(version), e.message, schema_mode::open);
                }
            } else {
                add(version, result_envelope(version), e.message, schema_mode::open);
                auto const& result = o.at("result");
                bool const needs_input = modern && result.is_object() &&
                                         result.as_object().contains("resultType") &&
                                         result.at("resultType") == "input_required";
                // An input_required round answers call/get/read with an InputRequiredResult instead, and a
                // call that became a task with a task: 2025-11-25's CreateTaskResult, or the extension's
                // (whose shape is in its own schema, so only Result here).
                bool const task_created =
                    e.method == "tools/call" && result.is_object() &&
                    (modern ? result.as_object().contains("resultType") && result.at("resultType") == "task"
                            : result.as_object().contains("task") && !result.as_object().contains("content"));
                auto const type = needs_input    ? std::string_view("InputRequiredResult")
                                  : task_created ? std::string_view(modern ? "Result" : "CreateTaskResult")
                                                 : result_type(e.method, modern);
                if (!type.empty())
                    add(version, type, o.at("result"), mode);
                else if (modern)
                    add(version, "Result", o.at("result"), mode);
            }
        }
    }
    auto const verdicts = validator.validate(checks);
    for (std::size_t i = 0; i < verdicts.size(); ++i)
        EXPECT_TRUE(verdicts[i].ok) << (verdicts[i].bad_check ? "schema check failed to run: "
                                                              : "not schema-valid: ")
                                    << what[i] << "\n  " << verdicts[i].errors;
    return checks.size();
}

void transcript::expect_schema_valid() const {
    if (auto* validator = schemas_or_skip()) {
        EXPECT_GT(expect_schema_valid(*validator), 0u);
    }
}

} // namespace duet::test
