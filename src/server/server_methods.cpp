// The stateless half of answering, the same for both eras: server/discover, the lists, tools/call,
// resources/read, prompts/get and completion/complete, from the registries or the backend.
#include <duet/protocol/errors.hpp>
#include <duet/protocol/meta_keys.hpp>
#include <duet/server/server.hpp>
#include <duet/server/uri_template.hpp>

#include "support/hex.hpp"

#include <algorithm>

namespace duet::server {

namespace {

using protocol::method_id;

constexpr std::size_t max_completion_values = 100;

// Cursors are opaque to clients: the hex of the last key a page held, so pages stay stable when items are
// added or removed between calls.
std::string encode_cursor(std::string const& key) {
    return "k" + support::to_hex(key);
}

std::optional<std::string> decode_cursor(std::string_view cursor) {
    if (cursor.empty() || cursor.front() != 'k')
        return std::nullopt;
    return support::from_hex(cursor.substr(1));
}

boost::json::object const* params_object(boost::json::value const& params) {
    return params.if_object();
}

std::optional<std::string_view> string_field(boost::json::value const& params, std::string_view key) {
    auto const* p = params_object(params);
    auto const* v = p ? p->if_contains(key) : nullptr;
    if (!v || !v->is_string())
        return std::nullopt;
    return std::string_view(v->get_string());
}

protocol::error_object missing_field(std::string_view key) {
    return protocol::invalid_params("Invalid params: \"" + std::string(key) + "\" must be a string");
}

// Whether `token` (null: the caller carries none, and nothing is left out) holds every scope of `required`.
bool permitted(std::vector<std::string> const& required, protocol::verified_token const* token) {
    if (!token)
        return true;
    return std::all_of(required.begin(), required.end(),
                       [token](auto const& s) { return token->has_scope(s); });
}

template<class Map, class ToJson, class Required>
method_answer page_of(Map const& items, std::optional<std::string> const& after, std::size_t page_size,
                      std::string_view key, protocol::verified_token const* token, ToJson to_json,
                      Required required) {
    boost::json::array out;
    auto it = after ? items.upper_bound(*after) : items.begin();
    std::string last;
    for (; it != items.end() && out.size() < page_size; ++it) {
        if (!permitted(required(*it->second), token))
            continue;
        out.push_back(to_json(*it->second));
        last = it->first;
    }
    method_answer s;
    s.result[key] = std::move(out);
    if (it != items.end())
        s.result["nextCursor"] = encode_cursor(last);
    return s;
}

} // namespace

answer_result server::discover() const {
    method_answer s;
    s.result["supportedVersions"] = protocol::advertised_modern_versions();
    s.result["capabilities"] = capabilities()->to_json(protocol::latest_modern_version);
    if (!options_.instructions.empty())
        s.result["instructions"] = options_.instructions;
    s.hints = hints_for(method_id::server_discover);
    return s;
}

answer_result server::list(method_id method, boost::json::value const& params,
                           protocol::caller_identity const* caller) const {
    std::optional<std::string> after;
    if (auto const* p = params_object(params)) {
        if (auto const* c = p->if_contains("cursor"); c && !c->is_null()) {
            if (!c->is_string())
                return protocol::invalid_params("Invalid params: cursor must be a string");
            if (!c->get_string().empty()) {
                after = decode_cursor(c->get_string());
                if (!after)
                    return protocol::invalid_params("Invalid params: invalid cursor",
                                                    boost::json::object{{"cursor", c->get_string()}});
            }
        }
    }
    protocol::verified_token const* const token =
        options_.list_permitted_only && caller ? caller->token.get() : nullptr;
    auto const scopes = [](auto const& item) -> std::vector<std::string> const& {
        return item.required_scopes;
    };
    std::shared_lock lock(mutex_);
    method_answer s;
    auto const n = options_.page_size ? options_.page_size : 100;
    switch (method) {
    case method_id::tools_list:
        s = page_of(
            tools_, after, n, "tools", token, [](registered_tool const& t) { return t.definition.to_json(); },
            [](registered_tool const& t) -> std::vector<std::string> const& {
                return t.definition.required_scopes;
            });
        break;
    case method_id::prompts_list:
        s = page_of(
            prompts_, after, n, "prompts", token, [](prompt const& p) { return p.to_json(); }, scopes);
        break;
    case method_id::resources_list:
        s = page_of(
            resources_, after, n, "resources", token, [](resource const& r) { return r.to_json(); }, scopes);
        break;
    default:
        s = page_of(
            templates_, after, n, "resourceTemplates", token,
            [](resource_template const& t) { return t.to_json(); }, scopes);
        break;
    }
    s.hints = hints_for(method);
    if (token) // this caller's list, not everyone's
        s.hints.scope = protocol::cache_scope::private_cache;
    return s;
}

std::variant<server::tool_call, answer_result> server::resolve_call(boost::json::value const& params) const {
    // One walk over params for both members (an object's keys are unique) rather than a lookup each.
    boost::json::value const* name_value = nullptr;
    boost::json::value const* arguments = nullptr;
    if (auto const* p = params_object(params))
        for (auto const& kv : *p) {
            if (kv.key() == "name")
                name_value = &kv.value();
            else if (kv.key() == "arguments")
                arguments = &kv.value();
        }
    if (!name_value || !name_value->is_string())
        return missing_field("name");
    std::string_view const name = name_value->get_string();
    std::shared_ptr<registered_tool const> t;
    {
        std::shared_lock lock(mutex_);
        if (auto it = tools_.find(name); it != tools_.end())
            t = it->second;
    }
    if (!t)
        return protocol::invalid_params("Unknown tool: " + std::string(name),
                                        boost::json::object{{"name", name}});
    // The handler reads the arguments where they lie in the request, which outlives the call.
    static boost::json::object const no_arguments;
    boost::json::object const* args = &no_arguments;
    if (arguments && !arguments->is_null()) {
        if (!arguments->is_object())
            return protocol::invalid_params("Invalid params: arguments must be an object");
        args = &arguments->get_object();
    }
    if (auto problem = t->arguments.problem(*args))
        return method_answer{tool_result::error("Invalid arguments: " + *problem).to_json(), {}};
    tool const* definition = &t->definition;
    return tool_call{std::shared_ptr<tool const>(std::move(t), definition), args};
}

boost::asio::awaitable<answer_result> server::async_call_tool(boost::json::value const& params,
                                                              request_context& ctx) {
    auto resolved = resolve_call(params);
    if (auto* refused = std::get_if<answer_result>(&resolved))
        co_return std::move(*refused);
    auto const call = std::get<tool_call>(std::move(resolved));
    tool_result r = co_await call.definition->handler(*call.arguments, ctx);
    co_return method_answer{std::move(r).to_json(), {}};
}

boost::asio::awaitable<answer_result> server::async_read_resource(boost::json::value const& params,
                                                                  request_context& ctx) const {
    auto const uri = string_field(params, "uri");
    if (!uri)
        co_return missing_field("uri");
    std::shared_ptr<resource const> exact;
    std::shared_ptr<resource_template const> templ;
    uri_variables vars;
    {
        std::shared_lock lock(mutex_);
        if (auto it = resources_.find(std::string(*uri)); it != resources_.end()) {
            exact = it->second;
        } else {
            for (auto const& [key, t] : templates_) {
                if (auto m = match_uri_template(t->uri_template, *uri)) {
                    templ = t;
                    vars = std::move(*m);
                    break;
                }
            }
        }
    }
    std::string const u(*uri);
    read_result r;
    protocol::cache_hints hints = hints_for(method_id::resources_read);
    if (exact) {
        r = co_await exact->read(u, ctx);
        if (exact->hints)
            hints = *exact->hints;
    } else if (templ) {
        r = co_await templ->read(u, vars, ctx);
        if (templ->hints)
            hints = *templ->hints;
    }
    // A read that finds nothing is not-found, never an empty `contents` (DIGEST §8).
    if (r.contents.empty())
        co_return protocol::resource_not_found(ctx.era(), u);
    co_return method_answer{std::move(r).to_json(), hints};
}

boost::asio::awaitable<answer_result> server::async_get_prompt(boost::json::value const& params,
                                                               request_context& ctx) const {
    auto const name = string_field(params, "name");
    if (!name)
        co_return missing_field("name");
    std::shared_ptr<prompt const> p;
    {
        std::shared_lock lock(mutex_);
        if (auto it = prompts_.find(std::string(*name)); it != prompts_.end())
            p = it->second;
    }
    if (!p)
        co_return protocol::invalid_params("Unknown prompt: " + std::string(*name),
                                           boost::json::object{{"name", *name}});
    prompt_arguments args;
    if (auto const* a = params.get_object().if_contains("arguments"); a && !a->is_null()) {
        if (!a->is_object())
            co_return protocol::invalid_params("Invalid params: arguments must be an object");
        for (auto const& kv : a->get_object()) {
            if (!kv.value().is_string())
                co_return protocol::invalid_params("Invalid params: prompt argument \"" +
                                                   std::string(kv.key()) + "\" must be a string");
            args.emplace(kv.key(), kv.value().get_string());
        }
    }
    for (auto const& declared : p->arguments)
        if (declared.required && !args.contains(declared.name))
            co_return protocol::invalid_params("Invalid params: missing required prompt argument \"" +
                                               declared.name + "\"");
    prompt_result r = co_await p->get(args, ctx);
    co_return method_answer{std::move(r).to_json(), {}};
}

answer_result server::complete(boost::json::value const& params) const {
    auto const* p = params_object(params);
    auto const* ref = p ? p->if_contains("ref") : nullptr;
    auto const* arg = p ? p->if_contains("argument") : nullptr;
    if (!ref || !ref->is_object() || !arg || !arg->is_object())
        return protocol::invalid_params("Invalid params: completion/complete needs ref and argument objects");
    auto const arg_name = string_field(*arg, "name");
    auto const arg_value = string_field(*arg, "value");
    if (!arg_name || !arg_value)
        return protocol::invalid_params("Invalid params: argument needs string name and value");
    std::map<std::string, std::string> context;
    if (auto const* c = p->if_contains("context"); c && c->is_object())
        if (auto const* ca = c->get_object().if_contains("arguments"); ca && ca->is_object())
            for (auto const& kv : ca->get_object())
                if (kv.value().is_string())
                    context.emplace(kv.key(), kv.value().get_string());

    auto const type = string_field(*ref, "type");
    completion_handler handler;
    {
        std::shared_lock lock(mutex_);
        if (type == "ref/prompt") {
            auto const name = string_field(*ref, "name");
            auto it = name ? prompts_.find(std::string(*name)) : prompts_.end();
            if (it == prompts_.end())
                return protocol::invalid_params("Unknown prompt: " + std::string(name.value_or("")));
            handler = it->second->complete;
        } else if (type == "ref/resource") {
            auto const uri = string_field(*ref, "uri");
            auto it = uri ? templates_.find(std::string(*uri)) : templates_.end();
            if (it == templates_.end())
                return protocol::invalid_params("Unknown resource template: " +
                                                std::string(uri.value_or("")));
            handler = it->second->complete;
        } else {
            return protocol::invalid_params("Invalid params: ref.type must be ref/prompt or ref/resource");
        }
    }
    std::vector<std::string> values;
    if (handler)
        values = handler(std::string(*arg_name), std::string(*arg_value), context);
    boost::json::array out;
    for (std::size_t i = 0; i < values.size() && i < max_completion_values; ++i)
        out.emplace_back(values[i]);
    boost::json::object completion{{"values", std::move(out)},
                                   {"total", values.size()},
                                   {"hasMore", values.size() > max_completion_values}};
    return method_answer{boost::json::object{{"completion", std::move(completion)}}, {}};
}

namespace {
// A request without params reads as one with `{}`: the methods whose params are all optional accept both.
boost::json::value const& params_or_empty(boost::json::value const& params) {
    static boost::json::value const empty_params = boost::json::object{};
    return params.is_null() ? empty_params : params;
}
} // namespace

std::optional<answer_result> server::answer_before_dispatch(method_id method,
                                                            boost::json::value const& params) const {
    if (!params.is_object())
        return protocol::invalid_params("Invalid params: params must be an object");
    if (method == method_id::server_discover)
        return discover();
    return std::nullopt;
}

std::optional<answer_result> server::answer_now(method_id method, boost::json::value const& params,
                                                request_context& ctx) {
    boost::json::value const& p = params_or_empty(params);
    if (auto first = answer_before_dispatch(method, p))
        return first;
    {
        std::shared_lock lock(mutex_);
        if (backend_)
            return std::nullopt;
    }
    switch (method) {
    case method_id::tools_list:
    case method_id::prompts_list:
    case method_id::resources_list:
    case method_id::resources_templates_list:
        return list(method, p, ctx.caller());
    case method_id::completion_complete:
        return complete(p);
    case method_id::tools_call: {
        auto resolved = resolve_call(p);
        if (auto* refused = std::get_if<answer_result>(&resolved))
            return std::move(*refused);
        auto const& call = std::get<tool_call>(resolved);
        if (!call.definition->direct)
            return std::nullopt;
        tool_result r = call.definition->direct(*call.arguments, ctx);
        return method_answer{std::move(r).to_json(), {}};
    }
    default:
        return std::nullopt;
    }
}

boost::asio::awaitable<answer_result> server::async_answer(method_id method, boost::json::value const& params,
                                                           request_context& ctx) {
    boost::json::value const& p = params_or_empty(params);
    if (auto first = answer_before_dispatch(method, p))
        co_return std::move(*first);
    std::shared_ptr<backend> b;
    {
        std::shared_lock lock(mutex_);
        b = backend_;
    }
    if (b) {
        auto a = co_await b->async_answer(method, p.get_object(), ctx);
        co_return a;
    }
    switch (method) {
    case method_id::tools_list:
    case method_id::prompts_list:
    case method_id::resources_list:
    case method_id::resources_templates_list:
        co_return list(method, p, ctx.caller());
    case method_id::tools_call:
        co_return co_await async_call_tool(p, ctx);
    case method_id::resources_read:
        co_return co_await async_read_resource(p, ctx);
    case method_id::prompts_get:
        co_return co_await async_get_prompt(p, ctx);
    case method_id::completion_complete:
        co_return complete(p);
    default:
        co_return protocol::method_not_found(protocol::info(method).name, "not served here");
    }
}

} // namespace duet::server
