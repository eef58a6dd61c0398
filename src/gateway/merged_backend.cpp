#include <duet/gateway/merged_backend.hpp>

#include "merged_impl.hpp"

namespace duet::gateway {

// ---- merged_backend
// -----------------------------------------------------------------------------------------

std::shared_ptr<merged_backend> merged_backend::create(std::vector<merged_member> members,
                                                       merged_options options) {
    auto p = std::make_shared<impl>(std::move(options));
    p->roster_ = p->make_roster(std::move(members), nullptr);
    return std::shared_ptr<merged_backend>(new merged_backend(std::move(p)));
}

merged_backend::~merged_backend() {
    detach();
}

server::server_options merged_backend::describe() const {
    auto r = impl_->current();
    if (!impl_->options_.prefix_names)
        return r->members.front()->config.backend->describe();
    server::server_options o;
    o.info.name = "duet-gateway";
    o.info.title = "Duet gateway:";
    for (std::size_t i = 0; i < r->members.size(); ++i)
        o.info.title += (i ? ", " : " ") + r->members[i]->config.name;
    for (auto const& m : r->members) {
        auto const own = m->config.backend->describe().instructions;
        if (own.empty())
            continue;
        if (!o.instructions.empty())
            o.instructions += "\n\n";
        o.instructions += "## " + m->config.name + "\n\n" + own;
    }
    return o;
}

void merged_backend::attach(server::server& srv) {
    {
        std::lock_guard lock(impl_->srv_mutex_);
        impl_->srv_ = &srv;
    }
    srv.set_backend(shared_from_this());
    for (auto const& m : impl_->current()->members)
        m->config.backend->attach(std::make_shared<impl::member_sink>(impl_, m->config.name));
}

void merged_backend::detach() {
    for (auto const& m : impl_->current()->members)
        m->config.backend->detach();
    std::lock_guard lock(impl_->srv_mutex_);
    impl_->srv_ = nullptr;
}

void merged_backend::set_members(std::vector<merged_member> members) {
    std::shared_ptr<roster const> before;
    std::shared_ptr<roster const> after;
    {
        std::lock_guard lock(impl_->roster_mutex_);
        before = impl_->roster_;
        after = impl_->make_roster(std::move(members), before.get());
        impl_->roster_ = after;
    }
    bool attached = false;
    {
        std::lock_guard lock(impl_->srv_mutex_);
        attached = impl_->srv_ != nullptr;
    }
    for (auto const& m : before->members) {
        auto still = after->index_of(m->config.name);
        if (!still || after->members[*still]->config.backend != m->config.backend) {
            m->config.backend->detach();
            impl_->forget_routes(m->config.name);
        }
    }
    for (auto const& m : after->members) {
        auto was = before->index_of(m->config.name);
        if (attached && (!was || before->members[*was]->config.backend != m->config.backend))
            m->config.backend->attach(std::make_shared<impl::member_sink>(impl_, m->config.name));
    }
    // What the endpoint offers and lists may differ now: its clients read it again.
    impl_->announce([&](server::server& srv) {
        srv.refresh_backend();
        auto const caps = capabilities();
        for (auto const& change : protocol::change_table())
            if (change.is_list_change() && caps.*change.advertised)
                srv.notify_list_changed(change.what);
    });
}

awaitable<void> merged_backend::async_load() {
    auto self = impl_;
    auto r = self->current();
    // A lone member serves every URI asked of the endpoint: nothing to learn, and no upstream connection
    // (a stdio child) to open before a client asks for one.
    if (r->members.size() < 2)
        co_return;
    auto state = std::make_shared<server::detail::request_state>();
    state->era = protocol::era::modern;
    state->version = protocol::latest_modern_version;
    server::request_context ctx(state);
    for (auto const& m : r->members) {
        if (!m->config.backend->capabilities().resources)
            continue;
        for (auto method : {method_id::resources_list, method_id::resources_templates_list}) {
            auto const kind = list_of(method);
            std::string cursor;
            // Bounded: an upstream whose cursors never end is read this far, and asked in turn beyond.
            for (int page = 0; page < 100; ++page) {
                json::object params;
                if (!cursor.empty())
                    params["cursor"] = cursor;
                auto got = co_await impl::async_forward(self, m, method, params, ctx);
                if (!got)
                    break;
                if (auto* items = got->result.if_contains(protocol::list_items_key(method));
                    items && items->is_array())
                    self->learn(*m, kind, items->get_array(), true);
                auto next = string_at(got->result, "nextCursor");
                if (!next)
                    break;
                cursor = std::string(*next);
            }
        }
    }
}

std::vector<merged_backend::member_health> merged_backend::health() const {
    std::vector<member_health> out;
    auto const now = impl_->options_.clock();
    for (auto const& m : impl_->current()->members) {
        std::lock_guard lock(m->breaker->mutex);
        out.push_back({m->config.name, m->config.required, m->breaker->breaker.current(now),
                       m->breaker->breaker.failures_in_a_row()});
    }
    return out;
}

bool merged_backend::ready() const {
    for (auto const& h : health())
        if (h.required && h.state == circuit_breaker::state::open)
            return false;
    return true;
}

protocol::server_capabilities merged_backend::capabilities() const {
    protocol::server_capabilities all;
    for (auto const& m : impl_->current()->members) {
        auto const c = m->config.backend->capabilities();
        all.tools |= c.tools;
        all.tools_list_changed |= c.tools_list_changed;
        all.resources |= c.resources;
        all.resources_subscribe |= c.resources_subscribe;
        all.resources_list_changed |= c.resources_list_changed;
        all.prompts |= c.prompts;
        all.prompts_list_changed |= c.prompts_list_changed;
        all.completions |= c.completions;
        all.logging |= c.logging;
        all.tasks |= c.tasks;
        for (auto const& kv : c.experimental)
            all.experimental.emplace(kv.key(), kv.value());
        for (auto const& kv : c.extensions)
            all.extensions.emplace(kv.key(), kv.value());
    }
    return all;
}

// Not a coroutine: the awaitable of the method's own coroutine is returned as it is, so a forwarded call
// costs no frame of the merged layer's beyond the forwarding one (bench/findings.md, "The merged endpoint's
// per-call cost").
awaitable<server::answer_result> merged_backend::async_answer(method_id method, json::object const& params,
                                                              server::request_context& ctx) {
    auto r = impl_->current();
    if (r->passthrough)
        return impl::async_forward(impl_, r->members.front(), method, params, ctx);
    switch (method) {
    case method_id::tools_list:
    case method_id::prompts_list:
    case method_id::resources_list:
    case method_id::resources_templates_list:
        return impl::async_list(impl_, std::move(r), method, params, ctx);
    case method_id::tools_call:
    case method_id::prompts_get:
        return impl::async_named(impl_, std::move(r), method, params, ctx);
    case method_id::resources_read:
        return impl::async_read(impl_, std::move(r), params, ctx);
    case method_id::completion_complete:
        return impl::async_complete(impl_, std::move(r), params, ctx);
    default: {
        server::answer_result refused =
            protocol::method_not_found(protocol::info(method).name, "not served here");
        return impl::async_ready(std::move(refused));
    }
    }
}

std::optional<server::tool_task_policy> merged_backend::task_policy(std::string_view tool) const {
    auto r = impl_->current();
    if (r->passthrough)
        return r->members.front()->config.backend->task_policy(tool);
    auto routed = detail::route_name(r->names, name_kind::tool, tool);
    if (!routed)
        return std::nullopt;
    auto policy = r->members[routed->member]->config.backend->task_policy(routed->upstream);
    if (policy)
        policy->name = std::string(tool); // as the client calls it
    return policy;
}

void merged_backend::on_watch(std::string const& uri, bool watched) {
    auto r = impl_->current();
    auto const owner = impl_->owner_of(uri);
    if (auto i = owner ? r->index_of(*owner) : std::nullopt) {
        r->members[*i]->config.backend->on_watch(uri, watched);
        return;
    }
    // Not listed by anyone: every member that can watch it is told; a member without it never announces it.
    for (auto const& m : r->members)
        if (m->config.backend->capabilities().resources_subscribe &&
            admitted(m->config.exposure.resources, uri))
            m->config.backend->on_watch(uri, watched);
}

server::session_admission merged_backend::on_session(protocol::version version,
                                                     json::object const& client_capabilities,
                                                     json::object const& client_info) {
    auto s = std::make_shared<merged_session>();
    for (auto const& m : impl_->current()->members) {
        auto admitted = m->config.backend->on_session(version, client_capabilities, client_info);
        if (!admitted)
            return admitted; // what the others began for it ends with `s`
        s->each.emplace(m->config.name, merged_session::piece{m->config.backend, std::move(*admitted)});
    }
    return std::shared_ptr<void>(std::move(s));
}

} // namespace duet::gateway
