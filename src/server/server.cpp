#include <duet/jsonrpc/json_text.hpp>
#include <duet/protocol/meta_keys.hpp>
#include <duet/server/server.hpp>
#include <duet/server/uri_template.hpp>
#include <duet/store/memory.hpp>

#include "server_events.hpp"
#include "task_registry.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace duet::server {

using protocol::method_id;

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

// `"_meta":{"<serverInfo key>":{...}}`: the bytes jsonrpc::to_json_text writes for that member, without the
// braces of an object around it.
std::shared_ptr<std::string const> meta_tail(boost::json::object const& info) {
    auto const text = jsonrpc::to_json_text(
        boost::json::object{{"_meta", boost::json::object{{protocol::meta_key::server_info, info}}}});
    return std::make_shared<std::string const>(text.substr(1, text.size() - 2));
}

// A server_event as the event bus carries it: its notification method, then the URI of a resource_updated.
std::string encode_event(server_event const& e) {
    std::string out(detail::notification_method(e.what));
    if (e.what == server_event::kind::resource_updated)
        out.append("\n").append(e.uri);
    return out;
}

std::optional<server_event> decode_event(std::string_view payload) {
    auto const newline = payload.find('\n');
    auto const* change = protocol::change_of(payload.substr(0, newline));
    if (!change)
        return std::nullopt;
    server_event e{change->what, {}};
    if (newline != std::string_view::npos)
        e.uri = payload.substr(newline + 1);
    return e;
}

} // namespace

server::server(server_options options)
    : options_(std::move(options)), server_info_(options_.info.to_json()),
      server_info_tail_(meta_tail(server_info_)),
      sealer_(options_.request_state_keys.empty() ? state_sealer(options_.request_state_key)
                                                  : state_sealer(options_.request_state_keys)),
      pool_(std::max<std::size_t>(1, options_.blocking_threads)) {
    lookup_ = [this](std::string_view tool_name) -> std::span<protocol::param_header const> {
        std::shared_lock lock(mutex_);
        auto it = param_headers_.find(std::string(tool_name));
        if (it == param_headers_.end())
            return {};
        return it->second; // entries are replaced, never mutated in place, while a request uses them
    };
    bus_ = options_.event_bus ? options_.event_bus : store::make_memory_event_bus();
    tasks_ = std::make_shared<detail::task_registry>(
        detail::task_registry::options{.ttl = options_.task_ttl,
                                       .max_ttl = options_.task_max_ttl,
                                       .poll_interval = options_.task_poll_interval,
                                       .max_per_owner = options_.max_tasks_per_caller,
                                       .page_size = options_.page_size ? options_.page_size : 100,
                                       .store = options_.task_store,
                                       .bus = options_.task_bus ? options_.task_bus : bus_,
                                       .topic = options_.event_topic + "/tasks"});
    tasks_->start();
    bus_subscription_ = bus_->subscribe(options_.event_topic, [this](std::string_view payload) {
        if (auto e = decode_event(payload))
            deliver(*e);
    });
    std::unique_lock lock(mutex_);
    refresh_capabilities();
}

server::~server() {
    bus_->unsubscribe(bus_subscription_);
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

admitted_request server::admit(jsonrpc::request r, protocol::session_view session,
                               protocol::http_facts const* http) const {
    auto caps = capabilities(); // a snapshot: the request is served by what admitted it
    protocol::admission_context const ac{.session = session,
                                         .capabilities = caps.get(),
                                         .eras = options_.eras,
                                         .http = http,
                                         .param_headers = &lookup_};
    auto verdict = protocol::admit(r, ac);
    return admitted_request{std::move(r), std::move(verdict), std::move(caps)};
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
    bus_->publish(options_.event_topic, encode_event(e));
}

void server::deliver(server_event const& e) {
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
        auto next = std::make_shared<protocol::server_capabilities const>(backend_->capabilities());
        tasks_offered_.store(next->tasks, std::memory_order_relaxed);
        capabilities_.store(std::move(next), std::memory_order_release);
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
    c.tasks = std::any_of(tools_.begin(), tools_.end(), [](auto const& t) {
        return t.second->definition.tasks != protocol::task_support::forbidden;
    });
    tasks_offered_.store(c.tasks, std::memory_order_relaxed);
    capabilities_.store(std::move(next), std::memory_order_release);
}

std::optional<tool_task_policy> server::task_policy(boost::json::value const& params) const {
    // Every tools/call asks: a server that offers no tasks answers without a lock or a lookup.
    if (!tasks_offered_.load(std::memory_order_relaxed))
        return std::nullopt;
    auto const* p = params.if_object();
    auto const* name = p ? p->if_contains("name") : nullptr;
    if (!name || !name->is_string())
        return std::nullopt;
    std::shared_lock lock(mutex_);
    if (backend_)
        return backend_->task_policy(name->get_string());
    auto it = tools_.find(std::string_view(name->get_string()));
    if (it == tools_.end())
        return std::nullopt;
    auto const& t = it->second->definition;
    return tool_task_policy{t.name, t.tasks, t.task_after};
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

} // namespace duet::server
