#include <duet/protocol/meta_keys.hpp>
#include <duet/protocol/shaping.hpp>

namespace duet::protocol {

namespace {

constexpr std::string_view result_type = "resultType";
constexpr std::string_view input_required = "input_required";

bool before(version v, version introduced) noexcept {
    return v < introduced;
}

boost::json::object* object_at(boost::json::object& o, std::string_view key) {
    auto* v = o.if_contains(key);
    return v ? v->if_object() : nullptr;
}

boost::json::array* array_at(boost::json::object& o, std::string_view key) {
    auto* v = o.if_contains(key);
    return v ? v->if_array() : nullptr;
}

// Fields every display-named entity (tool, prompt, resource, template, resource_link) gained over time.
void shape_named(boost::json::object& o, version v) {
    if (before(v, version::v2025_06_18))
        o.erase("title");
    if (before(v, version::v2025_11_25))
        o.erase("icons");
}

void shape_annotations(boost::json::object& o, version v) {
    if (auto* a = object_at(o, "annotations"); a && before(v, version::v2025_06_18))
        a->erase("lastModified");
}

// False when the block does not exist in version v and has to go.
bool shape_content_block(boost::json::object& block, version v) {
    auto const* type = block.if_contains("type");
    std::string_view const t = type && type->is_string() ? std::string_view(type->get_string()) : "";
    if (t == "audio" && before(v, version::v2025_03_26))
        return false;
    if (t == "resource_link") {
        if (before(v, version::v2025_06_18))
            return false;
        shape_named(block, v);
    }
    shape_annotations(block, v);
    if (auto* r = object_at(block, "resource"))
        shape_annotations(*r, v);
    return true;
}

void shape_content_array(boost::json::array& content, version v) {
    for (auto it = content.begin(); it != content.end();) {
        auto* block = it->if_object();
        if (block && !shape_content_block(*block, v))
            it = content.erase(it);
        else
            ++it;
    }
}

void shape_tool(boost::json::object& tool, version v) {
    shape_named(tool, v);
    if (before(v, version::v2025_03_26))
        tool.erase("annotations");
    if (auto const* out = tool.if_contains("outputSchema")) {
        // Before 2026-07-28 an outputSchema must be an object schema with type "object".
        auto const* o = out->if_object();
        auto const* type = o ? o->if_contains("type") : nullptr;
        bool const object_schema = type && type->is_string() && type->get_string() == "object";
        if (before(v, version::v2025_06_18) || !object_schema)
            tool.erase("outputSchema");
    }
    // 2025-11-25's experimental `execution.taskSupport` exists in no other version.
    if (v != version::v2025_11_25)
        tool.erase("execution");
}

void shape_prompt(boost::json::object& prompt, version v) {
    shape_named(prompt, v);
    if (auto* args = array_at(prompt, "arguments"))
        for (auto& a : *args)
            if (auto* ao = a.if_object(); ao && before(v, version::v2025_06_18))
                ao->erase("title");
}

template<class F>
void for_each_object(boost::json::object& result, std::string_view key, F&& f) {
    if (auto* items = array_at(result, key))
        for (auto& item : *items)
            if (auto* o = item.if_object())
                f(*o);
}

void shape_capabilities(boost::json::object& caps, version v) {
    if (before(v, version::v2025_03_26))
        caps.erase("completions");
    caps.erase("extensions");
    if (v != version::v2025_11_25)
        caps.erase("tasks");
}

// Which of the members shaping adds or removes at a result's top level it already has: one walk over the
// result instead of a lookup per member (a result has a handful of members; an absent one cost a full
// lookup each, several per message).
struct top_members {
    boost::json::value* result_type = nullptr;
    bool ttl_ms = false;
    bool cache_scope = false;
    bool meta = false;
};

top_members top_members_of(boost::json::object& result) {
    top_members m;
    for (auto& kv : result) {
        std::string_view const k = kv.key();
        if (k == result_type)
            m.result_type = &kv.value();
        else if (k == "ttlMs")
            m.ttl_ms = true;
        else if (k == "cacheScope")
            m.cache_scope = true;
        else if (k == "_meta")
            m.meta = true;
    }
    return m;
}

void shape_legacy(boost::json::object& result, version v, method_id method) {
    auto const top = top_members_of(result);
    if (top.result_type)
        result.erase(result_type);
    if (top.ttl_ms)
        result.erase("ttlMs");
    if (top.cache_scope)
        result.erase("cacheScope");
    if (auto* meta = top.meta ? object_at(result, "_meta") : nullptr) {
        meta->erase(meta_key::server_info);
        if (meta->empty())
            result.erase("_meta");
    }

    switch (method) {
    case method_id::initialize:
        if (auto* info = object_at(result, "serverInfo"))
            shape_implementation(*info, v);
        if (auto* caps = object_at(result, "capabilities"))
            shape_capabilities(*caps, v);
        break;
    case method_id::tools_list:
        for_each_object(result, "tools", [v](boost::json::object& t) { shape_tool(t, v); });
        break;
    case method_id::tools_call:
        if (auto const* sc = result.if_contains("structuredContent");
            sc && (!sc->is_object() || before(v, version::v2025_06_18)))
            result.erase("structuredContent");
        if (auto* content = array_at(result, "content"))
            shape_content_array(*content, v);
        break;
    case method_id::prompts_list:
        for_each_object(result, "prompts", [v](boost::json::object& p) { shape_prompt(p, v); });
        break;
    case method_id::prompts_get:
        if (auto* messages = array_at(result, "messages")) {
            for (auto it = messages->begin(); it != messages->end();) {
                auto* m = it->if_object();
                auto* content = m ? object_at(*m, "content") : nullptr;
                if (content && !shape_content_block(*content, v))
                    it = messages->erase(it);
                else
                    ++it;
            }
        }
        break;
    case method_id::resources_list:
        for_each_object(result, "resources", [v](boost::json::object& r) {
            shape_named(r, v);
            shape_annotations(r, v);
        });
        break;
    case method_id::resources_templates_list:
        for_each_object(result, "resourceTemplates", [v](boost::json::object& r) {
            shape_named(r, v);
            shape_annotations(r, v);
        });
        break;
    default:
        break;
    }
}

void shape_modern(boost::json::object& result, shape_context const& ctx) {
    result.reserve(result.size() + 4); // what may be added below: the object grows once at most
    auto const top = top_members_of(result);
    auto* rt = top.result_type;
    bool const needs_input = rt && rt->is_string() && rt->get_string() == input_required;
    // A task, as created or as tasks/get shows it, carries the task's own `ttlMs` (not a cache hint) and is
    // never cached; only a created one says "task".
    bool const task_created =
        ctx.method == method_id::tools_call && rt && rt->is_string() && rt->get_string() == "task";
    bool const task_shaped = task_created || ctx.method == method_id::tasks_get;
    if (!needs_input && !task_created) {
        if (rt)
            *rt = "complete"; // where it stands, as operator[] would
        else
            result.emplace(result_type, "complete");
    }
    // 2025-11-25's experimental `execution.taskSupport` is gone from the modern Tool.
    if (ctx.method == method_id::tools_list)
        for_each_object(result, "tools", [](boost::json::object& t) { t.erase("execution"); });
    // Results of an input_required round must not be cached; cacheable methods always carry hints otherwise.
    if (!task_shaped && (needs_input || !info(ctx.method).cacheable)) {
        if (top.ttl_ms)
            result.erase("ttlMs");
        if (top.cache_scope)
            result.erase("cacheScope");
    } else if (!task_shaped) {
        result["ttlMs"] = ctx.hints.ttl_ms < 0 ? 0 : ctx.hints.ttl_ms;
        result["cacheScope"] = to_string(ctx.hints.scope);
    }
    if (ctx.server_info && ctx.server_info_left_out && !top.meta) {
        *ctx.server_info_left_out = true;
        return;
    }
    if (ctx.server_info) {
        auto& meta = result["_meta"];
        if (!meta.is_object())
            meta = boost::json::object{};
        meta.get_object()[meta_key::server_info] = *ctx.server_info;
    }
}

} // namespace

void shape_implementation(boost::json::object& implementation, version v) {
    if (before(v, version::v2025_06_18))
        implementation.erase("title");
    if (before(v, version::v2025_11_25)) {
        implementation.erase("description");
        implementation.erase("websiteUrl");
        implementation.erase("icons");
    }
}

void shape_result(boost::json::object& result, shape_context const& ctx) {
    if (ctx.era == era::modern)
        shape_modern(result, ctx);
    else
        shape_legacy(result, ctx.version, ctx.method);
}

} // namespace duet::protocol
