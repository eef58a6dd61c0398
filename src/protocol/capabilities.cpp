#include <duet/protocol/capabilities.hpp>
#include <duet/protocol/server_changes.hpp>
#include <duet/protocol/tasks.hpp>

namespace duet::protocol {

bool server_capabilities::advertises(capability c) const noexcept {
    switch (c) {
    case capability::none:
        return true;
    case capability::tools:
        return tools;
    case capability::resources:
        return resources;
    case capability::resources_subscribe:
        return resources && resources_subscribe;
    case capability::prompts:
        return prompts;
    case capability::completions:
        return completions;
    case capability::logging:
        return logging;
    case capability::tasks:
        return tasks;
    }
    return false;
}

boost::json::object server_capabilities::to_json(version v) const {
    boost::json::object o;
    auto with_list_changed = [](bool list_changed) {
        boost::json::object cap;
        if (list_changed)
            cap["listChanged"] = true;
        return cap;
    };
    if (!experimental.empty())
        o["experimental"] = experimental;
    if (logging)
        o["logging"] = boost::json::object{};
    // The `completions` capability arrived in 2025-03-26; 2024-11-05 clients call completion/complete
    // ungated.
    if (completions && v >= version::v2025_03_26)
        o["completions"] = boost::json::object{};
    if (prompts)
        o["prompts"] = with_list_changed(prompts_list_changed);
    if (resources) {
        auto cap = with_list_changed(resources_list_changed);
        if (resources_subscribe)
            cap["subscribe"] = true;
        o["resources"] = std::move(cap);
    }
    if (tools)
        o["tools"] = with_list_changed(tools_list_changed);
    // 2025-11-25 alone has core tasks; Duet serves tasks/list and tasks/cancel, and tools/call as a task.
    if (tasks && v == version::v2025_11_25)
        o["tasks"] = boost::json::object{{"list", boost::json::object{}},
                                         {"cancel", boost::json::object{}},
                                         {"requests", {{"tools", {{"call", boost::json::object{}}}}}}};
    if (is_modern_version(v) && (!extensions.empty() || tasks)) {
        auto& ext = o["extensions"].emplace_object();
        ext = extensions;
        if (tasks && !ext.contains(tasks_extension))
            ext[tasks_extension] = boost::json::object{};
    }
    return o;
}

server_capabilities server_capabilities::from_json(boost::json::object const& caps) {
    auto const object_member = [](boost::json::object const& o,
                                  std::string_view key) -> boost::json::object const* {
        auto const* v = o.if_contains(key);
        return v && v->is_object() ? &v->get_object() : nullptr;
    };
    server_capabilities c;
    for (auto const& row : change_table()) {
        auto const* cap = object_member(caps, row.capability_key);
        if (!cap)
            continue;
        c.*row.offered = true;
        auto const* flag = cap->if_contains(row.capability_flag);
        c.*row.advertised = flag && flag->is_bool() && flag->get_bool();
    }
    c.completions = object_member(caps, "completions") != nullptr;
    c.logging = object_member(caps, "logging") != nullptr;
    if (auto const* e = object_member(caps, "experimental"))
        c.experimental = *e;
    if (auto const* e = object_member(caps, "extensions"))
        c.extensions = *e;
    auto const* legacy_tasks = object_member(caps, "tasks");
    auto const* requests = legacy_tasks ? object_member(*legacy_tasks, "requests") : nullptr;
    auto const* tools_requests = requests ? object_member(*requests, "tools") : nullptr;
    bool const extension = c.extensions.erase(tasks_extension) > 0;
    c.tasks = extension || (tools_requests && object_member(*tools_requests, "call"));
    return c;
}

bool declares(boost::json::object const& client_caps, client_capability c) noexcept {
    auto object_at = [&](std::string_view key) -> boost::json::object const* {
        auto const* v = client_caps.if_contains(key);
        return v ? v->if_object() : nullptr;
    };
    switch (c) {
    case client_capability::roots:
        return object_at("roots") != nullptr;
    case client_capability::sampling:
        return object_at("sampling") != nullptr;
    case client_capability::sampling_tools: {
        auto const* s = object_at("sampling");
        return s && s->if_contains("tools") && s->at("tools").is_object();
    }
    case client_capability::elicitation_form: {
        auto const* e = object_at("elicitation");
        if (!e)
            return false;
        // `elicitation: {}` means form only (DIGEST §3); an explicit `form` or `url` lists the modes.
        bool const has_form = e->contains("form");
        return has_form || !e->contains("url");
    }
    case client_capability::elicitation_url: {
        auto const* e = object_at("elicitation");
        return e && e->contains("url");
    }
    case client_capability::tasks: {
        auto const* e = object_at("extensions");
        auto const* t = e ? e->if_contains(tasks_extension) : nullptr;
        return t && t->is_object();
    }
    }
    return false;
}

boost::json::object requirement(client_capability c) {
    switch (c) {
    case client_capability::roots:
        return {{"roots", boost::json::object{}}};
    case client_capability::sampling:
        return {{"sampling", boost::json::object{}}};
    case client_capability::sampling_tools:
        return {{"sampling", boost::json::object{{"tools", boost::json::object{}}}}};
    case client_capability::elicitation_form:
        return {{"elicitation", boost::json::object{}}};
    case client_capability::elicitation_url:
        return {{"elicitation", boost::json::object{{"url", boost::json::object{}}}}};
    case client_capability::tasks:
        return {{"extensions", boost::json::object{{tasks_extension, boost::json::object{}}}}};
    }
    return {};
}

std::optional<client_capability> capability_needed(std::string_view method,
                                                   boost::json::value const& params) noexcept {
    if (method == "elicitation/create") {
        auto const* p = params.if_object();
        auto const* mode = p ? p->if_contains("mode") : nullptr;
        bool const url = mode && mode->is_string() && mode->get_string() == "url";
        return url ? client_capability::elicitation_url : client_capability::elicitation_form;
    }
    if (method == "sampling/createMessage")
        return client_capability::sampling;
    if (method == "roots/list")
        return client_capability::roots;
    return std::nullopt;
}

} // namespace duet::protocol
