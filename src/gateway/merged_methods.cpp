#include "merged_impl.hpp"

#include <cmath>

namespace duet::gateway {

namespace {

// Gives a call slot back, and settles a half-open breaker's probe, however the call ends: an input round
// (modern) leaves by exception, and counts as an answer.
struct forward_guard {
    member_state const& m;
    bool holds_slot = false;
    bool settled = false;

    ~forward_guard() {
        if (!settled)
            m.breaker->succeeded();
        if (holds_slot)
            m.slots->release();
    }
};

protocol::error_object marked_down(member_state const& m, limit_clock::time_point now) {
    auto const& b = m.breaker->breaker;
    auto const wait = std::chrono::duration_cast<std::chrono::milliseconds>(b.retry_at() - now);
    auto const seconds = std::max<long long>(1, static_cast<long long>(std::ceil(wait.count() / 1000.0)));
    return protocol::make_error(protocol::errc::internal_error,
                                "Internal error: the upstream server " + m.config.name +
                                    " is marked down after " + std::to_string(b.failures_in_a_row()) +
                                    " failures in a row; the gateway tries it again in " +
                                    std::to_string(seconds) + "s",
                                json::object{{"upstream", m.config.name}, {"retryAfterSeconds", seconds}});
}

} // namespace

awaitable<server::answer_result>
merged_backend::impl::async_forward(std::shared_ptr<impl> self, std::shared_ptr<member_state const> member,
                                    method_id method, json::object const& params,
                                    server::request_context& ctx) {
    auto const& m = *member;
    forward_guard guard{m};
    if (m.slots) {
        auto const wait = m.config.slot_wait;
        guard.holds_slot = co_await detail::call_slots::async_acquire(m.slots, wait);
        if (!guard.holds_slot) {
            guard.settled = true;
            co_return protocol::make_error(
                protocol::errc::internal_error,
                "Internal error: the upstream server " + m.config.name + " had no free call slot (" +
                    std::to_string(m.config.max_concurrent_calls) + " calls at once) within " +
                    std::to_string(wait.count()) + "ms",
                json::object{{"upstream", m.config.name}});
        }
    }
    if (!m.breaker->allow(self->options_.clock)) {
        guard.settled = true;
        auto const now = self->options_.clock();
        std::lock_guard lock(m.breaker->mutex);
        co_return marked_down(m, now);
    }
    auto session = session_piece(ctx, m);
    // `member` keeps the backend alive for the call.
    auto outcome = co_await m.config.backend->async_forward(method, params, ctx, session);
    if (!outcome && is_upstream_unavailable(outcome.error()))
        m.breaker->failed(self->options_.clock());
    else
        m.breaker->succeeded();
    guard.settled = true;
    co_return outcome;
}

awaitable<server::answer_result>
merged_backend::impl::async_list(std::shared_ptr<impl> self, std::shared_ptr<roster const> r,
                                 method_id method, json::object const& params, server::request_context& ctx) {
    auto const kind = list_of(method);
    auto const key = protocol::list_items_key(method);
    std::size_t first = 0;
    std::string inner;
    if (auto const* c = params.if_contains("cursor"); c && !c->is_null()) {
        auto decoded = c->is_string() ? detail::decode_cursor(c->get_string()) : std::nullopt;
        auto at = decoded ? r->index_of(decoded->member) : std::nullopt;
        if (!at)
            co_return protocol::invalid_params("Invalid params: invalid cursor",
                                               json::object{{"cursor", *c}});
        first = *at;
        inner = std::move(decoded->inner);
    }
    for (std::size_t i = first; i < r->members.size(); ++i) {
        auto const& m = r->members[i];
        if (!advertises_list(m->config.backend->capabilities(), kind))
            continue;
        json::object page_params = params;
        page_params.erase("cursor");
        if (i == first && !inner.empty())
            page_params["cursor"] = inner;
        auto page = co_await async_forward(self, m, method, page_params, ctx);
        if (!page) {
            // One upstream down (or marked down, or out of call slots) leaves its part of the list out; the
            // others' parts are still served.
            if (r->members.size() > 1 && out_of_reach(page.error()))
                continue;
            co_return page;
        }
        json::array items;
        if (auto* found = page->result.if_contains(key); found && found->is_array())
            items = std::move(found->get_array());
        self->learn(*m, kind, items, false);
        items = self->owned_only(m->config.name, kind, std::move(items));
        server::method_answer out;
        out.hints = page->hints;
        out.result[key] = detail::shown_items(r->names[i], kind, std::move(items));
        std::optional<detail::merged_cursor> next;
        if (auto more = string_at(page->result, "nextCursor"))
            next = detail::merged_cursor{m->config.name, std::string(*more)};
        else
            for (std::size_t j = i + 1; j < r->members.size() && !next; ++j)
                if (advertises_list(r->members[j]->config.backend->capabilities(), kind))
                    next = detail::merged_cursor{r->members[j]->config.name, {}};
        if (next)
            out.result["nextCursor"] = detail::encode_cursor(*next);
        co_return out;
    }
    server::method_answer empty;
    empty.result[key] = json::array();
    co_return empty;
}

awaitable<server::answer_result> merged_backend::impl::async_named(std::shared_ptr<impl> self,
                                                                   std::shared_ptr<roster const> r,
                                                                   method_id method,
                                                                   json::object const& params,
                                                                   server::request_context& ctx) {
    bool const tool = method == method_id::tools_call;
    auto const name = string_at(params, "name");
    if (!name)
        co_return protocol::invalid_params("Invalid params: \"name\" must be a string");
    auto routed = detail::route_name(r->names, tool ? name_kind::tool : name_kind::prompt, *name);
    if (!routed)
        co_return protocol::invalid_params((tool ? "Unknown tool: " : "Unknown prompt: ") +
                                               std::string(*name),
                                           json::object{{"name", *name}});
    json::object upstream_params = params;
    upstream_params["name"] = routed->upstream;
    co_return co_await async_forward(self, r->members[routed->member], method, upstream_params, ctx);
}

awaitable<server::answer_result> merged_backend::impl::async_read(std::shared_ptr<impl> self,
                                                                  std::shared_ptr<roster const> r,
                                                                  json::object const& params,
                                                                  server::request_context& ctx) {
    auto const uri = string_at(params, "uri");
    if (!uri)
        co_return protocol::invalid_params("Invalid params: \"uri\" must be a string");
    auto not_found = protocol::resource_not_found(ctx.era(), *uri);
    auto const owner = self->owner_of(*uri);
    auto const i = owner ? r->index_of(*owner) : std::nullopt;
    if (i && admitted(r->members[*i]->config.exposure.resources, *uri))
        co_return co_await async_forward(self, r->members[*i], method_id::resources_read, params, ctx);
    // Not listed (a resource read by a template, or one listed since): asked of each member in turn.
    for (auto const& m : r->members) {
        if (!m->config.backend->capabilities().resources || !admitted(m->config.exposure.resources, *uri))
            continue;
        auto read = co_await async_forward(self, m, method_id::resources_read, params, ctx);
        if (read || !is_resource_not_found(read.error()))
            co_return read;
    }
    co_return not_found;
}

awaitable<server::answer_result> merged_backend::impl::async_complete(std::shared_ptr<impl> self,
                                                                      std::shared_ptr<roster const> r,
                                                                      json::object const& params,
                                                                      server::request_context& ctx) {
    auto const* ref_value = params.if_contains("ref");
    auto const* ref = ref_value ? ref_value->if_object() : nullptr;
    auto const type = ref ? string_at(*ref, "type") : std::nullopt;
    if (!type)
        co_return protocol::invalid_params("Invalid params: \"ref.type\" must be a string");
    if (*type == "ref/prompt") {
        auto const name = string_at(*ref, "name");
        auto routed = name ? detail::route_name(r->names, name_kind::prompt, *name) : std::nullopt;
        if (!routed)
            co_return protocol::invalid_params("Unknown prompt: " + std::string(name.value_or("")),
                                               json::object{{"name", name.value_or("")}});
        json::object upstream_params = params;
        upstream_params["ref"].as_object()["name"] = routed->upstream;
        co_return co_await async_forward(self, r->members[routed->member], method_id::completion_complete,
                                         upstream_params, ctx);
    }
    auto const uri = string_at(*ref, "uri");
    auto const owner = uri ? self->owner_of(*uri) : std::nullopt;
    auto i = owner ? r->index_of(*owner) : std::nullopt;
    for (std::size_t j = 0; j < r->members.size() && !i; ++j)
        if (r->members[j]->config.backend->capabilities().completions)
            i = j;
    if (!i)
        co_return protocol::invalid_params("Invalid params: nothing completes " +
                                           std::string(uri.value_or("")));
    co_return co_await async_forward(self, r->members[*i], method_id::completion_complete, params, ctx);
}

} // namespace duet::gateway
