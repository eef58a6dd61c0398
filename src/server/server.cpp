#include <duet/protocol/errors.hpp>
#include <duet/protocol/meta_keys.hpp>
#include <duet/server/server.hpp>
#include <duet/server/uri_template.hpp>

#include "support/hex.hpp"

#include <algorithm>
#include <stdexcept>

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

template<class Map, class ToJson>
method_answer page_of(Map const& items, std::optional<std::string> const& after, std::size_t page_size,
                      std::string_view key, ToJson to_json) {
    boost::json::array out;
    auto it = after ? items.upper_bound(*after) : items.begin();
    std::string last;
    for (; it != items.end() && out.size() < page_size; ++it) {
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

boost::json::object implementation_info::to_json() const {
    boost::json::object o{{"name", name}, {"version", version}};
    if (!title.empty())
        o["title"] = title;
    if (!description.empty())
        o["description"] = description;
    if (!website_url.empty())
        o["websiteUrl"] = website_url;
    if (!icons.empty())
        o["icons"] = icons;
    return o;
}

namespace {

// `"_meta":{"<serverInfo key>":{...}}`: the bytes boost::json writes for that member, without the braces of
// an object around it.
std::shared_ptr<std::string const> meta_tail(boost::json::object const& info) {
    auto const text = boost::json::serialize(
        boost::json::object{{"_meta", boost::json::object{{protocol::meta_key::server_info, info}}}});
    return std::make_shared<std::string const>(text.substr(1, text.size() - 2));
}

} // namespace

server::server(server_options options)
    : options_(std::move(options)), server_info_(options_.info.to_json()),
      server_info_tail_(meta_tail(server_info_)), sealer_(options_.request_state_key),
      pool_(std::max<std::size_t>(1, options_.blocking_threads)) {
    lookup_ = [this](std::string_view tool_name) -> std::span<protocol::param_header const> {
        std::shared_lock lock(mutex_);
        auto it = param_headers_.find(std::string(tool_name));
        if (it == param_headers_.end())
            return {};
        return it->second; // entries are replaced, never mutated in place, while a request uses them
    };
    std::unique_lock lock(mutex_);
    refresh_capabilities();
}

server::~server() {
    pool_.join();
}

void server::add_tool(tool t) {
    if (t.name.empty())
        throw std::invalid_argument("a tool needs a name");
    if (!t.handler)
        throw std::invalid_argument("tool " + t.name + " has no handler");
    auto const* type = t.input_schema.if_contains("type");
    if (!type || !type->is_string() || type->get_string() != "object")
        throw std::invalid_argument("tool " + t.name + ": inputSchema needs type \"object\" at its root");
    auto bindings = protocol::collect_param_headers(t.input_schema);
    if (!bindings)
        throw std::invalid_argument("tool " + t.name + ": " + bindings.error().message);
    {
        std::unique_lock lock(mutex_);
        auto name = t.name; // the assignment's right side runs first and moves `t`
        param_headers_[name] = std::move(*bindings);
        auto check = argument_check(t.input_schema);
        tools_[name] =
            std::make_shared<registered_tool const>(registered_tool{std::move(t), std::move(check)});
        refresh_capabilities();
    }
    announce({server_event::kind::tools_changed, {}});
}

bool server::remove_tool(std::string const& name) {
    {
        std::unique_lock lock(mutex_);
        if (tools_.erase(name) == 0)
            return false;
        param_headers_.erase(name);
        refresh_capabilities();
    }
    announce({server_event::kind::tools_changed, {}});
    return true;
}

void server::add_resource(resource r) {
    if (r.uri.empty() || r.name.empty() || !r.read)
        throw std::invalid_argument("a resource needs a uri, a name and a read handler");
    {
        std::unique_lock lock(mutex_);
        auto uri = r.uri;
        resources_[uri] = std::make_shared<resource const>(std::move(r));
        refresh_capabilities();
    }
    announce({server_event::kind::resources_changed, {}});
}

bool server::remove_resource(std::string const& uri) {
    {
        std::unique_lock lock(mutex_);
        if (resources_.erase(uri) == 0)
            return false;
        refresh_capabilities();
    }
    announce({server_event::kind::resources_changed, {}});
    return true;
}

void server::add_resource_template(resource_template t) {
    if (t.uri_template.empty() || t.name.empty() || !t.read)
        throw std::invalid_argument("a resource template needs a uriTemplate, a name and a read handler");
    if (uri_template_variables(t.uri_template).empty())
        throw std::invalid_argument("resource template " + t.uri_template + " has no {variable}");
    {
        std::unique_lock lock(mutex_);
        auto key = t.uri_template;
        templates_[key] = std::make_shared<resource_template const>(std::move(t));
        refresh_capabilities();
    }
    announce({server_event::kind::resources_changed, {}});
}

bool server::remove_resource_template(std::string const& uri_template) {
    {
        std::unique_lock lock(mutex_);
        if (templates_.erase(uri_template) == 0)
            return false;
        refresh_capabilities();
    }
    announce({server_event::kind::resources_changed, {}});
    return true;
}

void server::add_prompt(prompt p) {
    if (p.name.empty() || !p.get)
        throw std::invalid_argument("a prompt needs a name and a get handler");
    {
        std::unique_lock lock(mutex_);
        auto name = p.name;
        prompts_[name] = std::make_shared<prompt const>(std::move(p));
        refresh_capabilities();
    }
    announce({server_event::kind::prompts_changed, {}});
}

bool server::remove_prompt(std::string const& name) {
    {
        std::unique_lock lock(mutex_);
        if (prompts_.erase(name) == 0)
            return false;
        refresh_capabilities();
    }
    announce({server_event::kind::prompts_changed, {}});
    return true;
}

void server::notify_resource_updated(std::string const& uri) {
    announce({server_event::kind::resource_updated, uri});
}

void server::subscribe(std::weak_ptr<event_listener> l) {
    std::lock_guard lock(listeners_mutex_);
    // Connections come and go without the server hearing of it (HTTP makes one per modern request); sweep
    // the expired ones whenever the list has doubled, so it stays bounded on a server that never changes.
    if (listeners_.size() >= std::max<std::size_t>(64, 2 * listeners_pruned_at_)) {
        std::erase_if(listeners_, [](auto const& w) { return w.expired(); });
        listeners_pruned_at_ = listeners_.size();
    }
    listeners_.push_back(std::move(l));
}

std::size_t server::listener_count() {
    std::lock_guard lock(listeners_mutex_);
    return listeners_.size();
}

void server::set_backend(std::shared_ptr<backend> b) {
    std::unique_lock lock(mutex_);
    backend_ = std::move(b);
    refresh_capabilities();
}

std::shared_ptr<backend> server::current_backend() const {
    std::shared_lock lock(mutex_);
    return backend_;
}

void server::refresh_backend() {
    std::unique_lock lock(mutex_);
    refresh_capabilities();
}

void server::set_param_headers(std::string const& tool, std::vector<protocol::param_header> headers) {
    std::unique_lock lock(mutex_);
    if (headers.empty())
        param_headers_.erase(tool);
    else
        param_headers_[tool] = std::move(headers);
}

void server::notify_list_changed(server_event::kind what) {
    announce({what, {}});
}

void server::watch_resource(std::string const& uri, bool watch) {
    std::shared_ptr<backend> b;
    {
        std::shared_lock lock(mutex_);
        b = backend_;
    }
    // The edge is reported under the count's lock, so a backend hears a resource's first and last watcher
    // in the order they happened even when sessions on different threads race.
    std::lock_guard lock(watch_mutex_);
    auto& n = watchers_[uri];
    bool edge = false;
    if (watch)
        edge = ++n == 1;
    else if (n > 0)
        edge = --n == 0;
    if (n == 0)
        watchers_.erase(uri);
    if (edge && b)
        b->on_watch(uri, watch);
}

void server::announce(server_event const& e) {
    // Copy the live listeners under the lock, deliver outside it.
    std::vector<std::shared_ptr<event_listener>> live;
    {
        std::lock_guard lock(listeners_mutex_);
        std::erase_if(listeners_, [](auto const& w) { return w.expired(); });
        for (auto const& w : listeners_)
            if (auto l = w.lock())
                live.push_back(std::move(l));
    }
    for (auto const& l : live)
        l->on_server_event(e);
}

void server::refresh_capabilities() {
    if (backend_) {
        capabilities_.store(std::make_shared<protocol::server_capabilities const>(backend_->capabilities()),
                            std::memory_order_release);
        return;
    }
    auto next = std::make_shared<protocol::server_capabilities>();
    auto& c = *next;
    c.tools = !tools_.empty();
    c.tools_list_changed = c.tools;
    c.prompts = !prompts_.empty();
    c.prompts_list_changed = c.prompts;
    c.resources = !resources_.empty() || !templates_.empty();
    c.resources_list_changed = c.resources;
    c.resources_subscribe = c.resources;
    c.logging = true;
    bool completes = std::any_of(prompts_.begin(), prompts_.end(),
                                 [](auto const& p) { return bool(p.second->complete); }) ||
                     std::any_of(templates_.begin(), templates_.end(),
                                 [](auto const& t) { return bool(t.second->complete); });
    c.completions = completes;
    capabilities_.store(std::move(next), std::memory_order_release);
}

protocol::cache_hints server::hints_for(method_id m) const {
    auto it = options_.cache_hints.find(m);
    return it == options_.cache_hints.end() ? protocol::cache_hints{} : it->second;
}

boost::json::object server::initialize_result(protocol::version v) const {
    boost::json::object r{{"protocolVersion", protocol::to_string(v)},
                          {"capabilities", capabilities()->to_json(v)},
                          {"serverInfo", server_info_}};
    if (!options_.instructions.empty())
        r["instructions"] = options_.instructions;
    protocol::shape_result(r, {.era = protocol::era::legacy, .version = v, .method = method_id::initialize});
    return r;
}

answer_result server::discover() const {
    method_answer s;
    s.result["supportedVersions"] = protocol::advertised_modern_versions();
    s.result["capabilities"] = capabilities()->to_json(protocol::latest_modern_version);
    if (!options_.instructions.empty())
        s.result["instructions"] = options_.instructions;
    s.hints = hints_for(method_id::server_discover);
    return s;
}

answer_result server::list(method_id method, boost::json::value const& params) const {
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
    std::shared_lock lock(mutex_);
    method_answer s;
    auto const n = options_.page_size ? options_.page_size : 100;
    switch (method) {
    case method_id::tools_list:
        s = page_of(tools_, after, n, "tools",
                    [](registered_tool const& t) { return t.definition.to_json(); });
        break;
    case method_id::prompts_list:
        s = page_of(prompts_, after, n, "prompts", [](prompt const& p) { return p.to_json(); });
        break;
    case method_id::resources_list:
        s = page_of(resources_, after, n, "resources", [](resource const& r) { return r.to_json(); });
        break;
    default:
        s = page_of(templates_, after, n, "resourceTemplates",
                    [](resource_template const& t) { return t.to_json(); });
        break;
    }
    s.hints = hints_for(method);
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
        return list(method, p);
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
        co_return list(method, p);
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
