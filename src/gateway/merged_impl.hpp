// File: src/gateway/merged_impl.hpp (private)
//
// The inside of merged_backend: each member's state (its breaker and call slots), the roster a request sees
// (replaced whole by a reload), what a legacy session keeps per member, and the impl that routes by name and
// URI. merged_backend.cpp holds the public class, merged_methods.cpp the forwarding and the merged methods.
#pragma once

#include <duet/gateway/merged_backend.hpp>
#include <duet/gateway/translate.hpp>
#include <duet/log/log.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/protocol/server_changes.hpp>
#include <duet/server/request_context.hpp>
#include <duet/server/uri_template.hpp>

#include "call_slots.hpp"
#include "merged_names.hpp"

#include <boost/asio/awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace duet::gateway {

namespace merged {

using detail::list_kind;
using detail::name_kind;
using protocol::method_id;
namespace json = boost::json;

// The URIs and templates the members listed: which member a read, a watch or a completion goes to. Bounded:
// past it, an unknown URI is asked of the members in turn.
inline constexpr std::size_t max_remembered_uris = 100000;

// A member's breaker outlives a reload that keeps the member: shared between its old and new states. While
// its upstream answers, a call neither locks nor reads the clock: `troubled` says when the breaker counts
// failures or is open, and only then is the breaker itself asked (bench/findings.md, "The merged endpoint's
// per-call cost").
struct guarded_breaker {
    explicit guarded_breaker(breaker_options o) : breaker(o) {}

    template<class Clock>
    [[nodiscard]] bool allow(Clock const& clock) {
        if (!troubled.load(std::memory_order_acquire))
            return true;
        std::lock_guard lock(mutex);
        return breaker.allow(clock());
    }
    void succeeded() {
        if (!troubled.load(std::memory_order_acquire))
            return;
        std::lock_guard lock(mutex);
        breaker.succeeded();
        troubled.store(false, std::memory_order_release);
    }
    void failed(limit_clock::time_point now) {
        std::lock_guard lock(mutex);
        breaker.failed(now);
        troubled.store(true, std::memory_order_release);
    }

    std::atomic<bool> troubled{false};
    std::mutex mutex; ///< guards `breaker`
    circuit_breaker breaker;
};

struct member_state {
    merged_member config;
    std::shared_ptr<detail::call_slots> slots; ///< null: no bound
    std::shared_ptr<guarded_breaker> breaker;
};

// What a legacy session keeps: each member's own on_session answer, by member name, with the backend that
// gave it (a member a reload restarted has a new backend, which never sees the old one's data).
struct merged_session {
    struct piece {
        std::weak_ptr<upstream_backend> backend;
        std::shared_ptr<void> data;
    };
    std::map<std::string, piece, std::less<>> each;
};

// The members as one request sees them: replaced whole by a reload, never changed in place.
struct roster {
    std::vector<std::shared_ptr<member_state const>> members;
    std::vector<detail::named_member> names; ///< point into members' policies
    bool passthrough = false;                ///< one unprefixed member with no policy: forwarded as is

    [[nodiscard]] std::optional<std::size_t> index_of(std::string_view name) const {
        for (std::size_t i = 0; i < members.size(); ++i)
            if (members[i]->config.name == name)
                return i;
        return std::nullopt;
    }
};

inline bool advertises_list(protocol::server_capabilities const& c, list_kind k) {
    switch (k) {
    case list_kind::tools:
        return c.tools;
    case list_kind::prompts:
        return c.prompts;
    case list_kind::resources:
    case list_kind::templates:
        return c.resources;
    }
    return false;
}

inline list_kind list_of(method_id m) {
    switch (m) {
    case method_id::tools_list:
        return list_kind::tools;
    case method_id::prompts_list:
        return list_kind::prompts;
    case method_id::resources_list:
        return list_kind::resources;
    default:
        return list_kind::templates;
    }
}

// A member's error that says it cannot be reached now (gone, marked down by its breaker, out of call slots),
// rather than an answer of its own.
inline bool out_of_reach(protocol::error_object const& e) {
    if (is_upstream_unavailable(e))
        return true;
    return e.code == static_cast<std::int32_t>(protocol::errc::internal_error) && e.data.is_object() &&
           e.data.get_object().contains("upstream");
}

inline std::optional<std::string_view> string_at(json::object const& o, std::string_view key) {
    auto const* v = o.if_contains(key);
    if (!v || !v->is_string())
        return std::nullopt;
    return std::string_view(v->get_string());
}

} // namespace merged

using merged::guarded_breaker;
using merged::member_state;
using merged::merged_session;
using merged::roster;

// The private names the impl below, merged_backend.cpp and merged_methods.cpp are written with.
namespace merged_names {
using boost::asio::awaitable;
using detail::list_kind;
using detail::name_kind;
using merged::advertises_list;
using merged::list_of;
using merged::max_remembered_uris;
using merged::out_of_reach;
using merged::string_at;
using protocol::method_id;
namespace json = boost::json;
} // namespace merged_names
using namespace merged_names;

class merged_backend::impl : public std::enable_shared_from_this<merged_backend::impl> {
public:
    explicit impl(merged_options options) : options_(std::move(options)) {
        if (!options_.clock)
            options_.clock = [] {
                return limit_clock::now();
            };
        if (!options_.log)
            options_.log = [](std::string const& line) {
                log::event const e{.severity = log::level::warning,
                                   .component = "duet gateway",
                                   .name = "gateway",
                                   .message = line};
                log::write(e);
            };
    }

    [[nodiscard]] std::shared_ptr<roster const> current() const {
        std::lock_guard lock(roster_mutex_);
        return roster_;
    }

    // The roster `members` make, reusing what `before` had for a member of the same name and backend.
    [[nodiscard]] std::shared_ptr<roster const> make_roster(std::vector<merged_member> members,
                                                            roster const* before) const {
        if (members.empty())
            throw std::invalid_argument("merged_backend: no members");
        if (!options_.prefix_names && members.size() != 1)
            throw std::invalid_argument("merged_backend: unprefixed names need exactly one member");
        auto r = std::make_shared<roster>();
        for (auto& m : members) {
            if (r->index_of(m.name))
                throw std::invalid_argument("merged_backend: two members named \"" + m.name + "\"");
            if (!m.backend)
                throw std::invalid_argument("merged_backend: member \"" + m.name + "\" has no backend");
            auto s = std::make_shared<member_state>();
            member_state const* kept = nullptr;
            if (before)
                if (auto i = before->index_of(m.name); i && before->members[*i]->config.backend == m.backend)
                    kept = before->members[*i].get();
            s->breaker = kept && kept->config.breaker == m.breaker
                             ? kept->breaker
                             : std::make_shared<guarded_breaker>(m.breaker);
            if (m.max_concurrent_calls > 0)
                s->slots =
                    kept && kept->slots && kept->config.max_concurrent_calls == m.max_concurrent_calls
                        ? kept->slots
                        : std::make_shared<detail::call_slots>(m.backend->executor(), m.max_concurrent_calls);
            s->config = std::move(m);
            r->members.push_back(std::move(s));
        }
        for (auto const& m : r->members)
            r->names.push_back({options_.prefix_names ? m->config.name + options_.separator : std::string(),
                                &m->config.exposure});
        r->passthrough = !options_.prefix_names && r->members.front()->config.exposure.empty();
        return r;
    }

    // ---- announcements, from each member's sink ---------------------------------------------------------
    class member_sink final : public announcement_sink {
    public:
        member_sink(std::weak_ptr<impl> owner, std::string member)
            : owner_(std::move(owner)), member_(std::move(member)) {}
        void list_changed(protocol::server_change what) override {
            if (auto o = owner_.lock())
                o->on_list_changed(member_, what);
        }
        void resource_updated(std::string const& uri) override {
            if (auto o = owner_.lock())
                o->on_resource_updated(member_, uri);
        }
        void tool_headers(std::string const& tool, std::vector<protocol::param_header> headers) override {
            if (auto o = owner_.lock())
                o->on_tool_headers(member_, tool, std::move(headers));
        }

    private:
        std::weak_ptr<impl> owner_;
        std::string member_;
    };

    void on_list_changed(std::string const& member, protocol::server_change what) {
        if (what == protocol::server_change::resources_changed)
            forget_routes(member); // learned again from the next list or read
        announce([&](server::server& srv) { srv.notify_list_changed(what); });
    }
    void on_resource_updated(std::string const& member, std::string const& uri) {
        auto r = current();
        auto i = r->index_of(member);
        if (!i || !admitted(r->members[*i]->config.exposure.resources, uri))
            return;
        announce([&](server::server& srv) { srv.notify_resource_updated(uri); });
    }
    void on_tool_headers(std::string const& member, std::string const& tool,
                         std::vector<protocol::param_header> h) {
        auto r = current();
        auto i = r->index_of(member);
        auto shown = i ? detail::shown_name(r->names[*i], name_kind::tool, tool) : std::nullopt;
        if (!shown)
            return;
        announce([&](server::server& srv) { srv.set_param_headers(*shown, std::move(h)); });
    }
    template<class F>
    void announce(F&& f) {
        std::lock_guard lock(srv_mutex_);
        if (srv_)
            f(*srv_);
    }

    // ---- routes of URIs
    // -------------------------------------------------------------------------------------
    // Only what `m`'s policy shows is learned: a member that hides a URI never takes its reads.
    void learn(member_state const& m, list_kind k, json::array const& items, bool report_conflicts) {
        auto const& member = m.config.name;
        auto const& shown = m.config.exposure.resources;
        std::lock_guard lock(routes_mutex_);
        for (auto const& item : items) {
            auto const* o = item.if_object();
            if (!o)
                continue;
            if (k == list_kind::resources) {
                auto uri = string_at(*o, "uri");
                if (!uri || !admitted(shown, *uri) || uri_owner_.size() >= max_remembered_uris)
                    continue;
                auto [it, fresh] = uri_owner_.try_emplace(std::string(*uri), member);
                if (!fresh && it->second != member && report_conflicts)
                    options_.log("the resource " + std::string(*uri) + " is offered by " + it->second +
                                 " and " + member + "; " + it->second + " serves it");
            } else if (k == list_kind::templates) {
                auto t = string_at(*o, "uriTemplate");
                if (!t || !admitted(shown, *t))
                    continue;
                auto known = std::find_if(templates_.begin(), templates_.end(),
                                          [&](auto const& e) { return e.first == *t; });
                if (known == templates_.end()) {
                    templates_.emplace_back(std::string(*t), member);
                } else if (known->second != member && report_conflicts) {
                    options_.log("the resource template " + std::string(*t) + " is offered by " +
                                 known->second + " and " + member + "; " + known->second + " serves it");
                }
            }
        }
    }

    // A page of resources or templates without those another member serves (listed first): each URI is
    // listed once, by the member that serves it.
    [[nodiscard]] json::array owned_only(std::string const& member, list_kind k, json::array items) const {
        if (k != list_kind::resources && k != list_kind::templates)
            return items;
        std::string_view const key = k == list_kind::resources ? "uri" : "uriTemplate";
        std::lock_guard lock(routes_mutex_);
        auto const elsewhere = [&](json::value const& item) {
            auto const* o = item.if_object();
            auto const id = o ? string_at(*o, key) : std::nullopt;
            if (!id)
                return false;
            if (k == list_kind::resources) {
                auto const it = uri_owner_.find(*id);
                return it != uri_owner_.end() && it->second != member;
            }
            auto const t = std::find_if(templates_.begin(), templates_.end(),
                                        [&](auto const& e) { return e.first == *id; });
            return t != templates_.end() && t->second != member;
        };
        items.erase(std::remove_if(items.begin(), items.end(), elsewhere), items.end());
        return items;
    }

    void forget_routes(std::string const& member) {
        std::lock_guard lock(routes_mutex_);
        std::erase_if(uri_owner_, [&](auto const& kv) { return kv.second == member; });
        std::erase_if(templates_, [&](auto const& e) { return e.second == member; });
    }

    // The member that listed `uri`, or whose template matches it (by name).
    std::optional<std::string> owner_of(std::string_view uri) const {
        std::lock_guard lock(routes_mutex_);
        if (auto it = uri_owner_.find(uri); it != uri_owner_.end())
            return it->second;
        for (auto const& [t, member] : templates_)
            if (t == uri || server::match_uri_template(t, uri))
                return member;
        return std::nullopt;
    }

    // ---- forwarding, with the member's slots and breaker --------------------------------------------------
    // Each takes the roster the request began with, which keeps its members alive until it is done.
    static awaitable<server::answer_result> async_forward(std::shared_ptr<impl> self,
                                                          std::shared_ptr<member_state const> m,
                                                          method_id method, json::object const& params,
                                                          server::request_context& ctx);

    // Null for a member added or restarted since the session began: its requests go to the pool.
    [[nodiscard]] static std::shared_ptr<void> session_piece(server::request_context const& ctx,
                                                             member_state const& m) {
        auto const& data = ctx.session_data();
        if (!data)
            return nullptr;
        auto const& each = static_cast<merged_session const*>(data.get())->each;
        auto it = each.find(m.config.name);
        if (it == each.end() || it->second.backend.lock() != m.config.backend)
            return nullptr;
        return it->second.data;
    }

    static awaitable<server::answer_result> async_list(std::shared_ptr<impl> self,
                                                       std::shared_ptr<roster const> r, method_id method,
                                                       json::object const& params,
                                                       server::request_context& ctx);
    static awaitable<server::answer_result> async_read(std::shared_ptr<impl> self,
                                                       std::shared_ptr<roster const> r,
                                                       json::object const& params,
                                                       server::request_context& ctx);
    static awaitable<server::answer_result> async_named(std::shared_ptr<impl> self,
                                                        std::shared_ptr<roster const> r, method_id method,
                                                        json::object const& params,
                                                        server::request_context& ctx);
    static awaitable<server::answer_result> async_ready(server::answer_result answer) { co_return answer; }
    static awaitable<server::answer_result> async_complete(std::shared_ptr<impl> self,
                                                           std::shared_ptr<roster const> r,
                                                           json::object const& params,
                                                           server::request_context& ctx);

    merged_options options_;
    mutable std::mutex roster_mutex_;
    std::shared_ptr<roster const> roster_;

    mutable std::mutex routes_mutex_;
    std::map<std::string, std::string, std::less<>> uri_owner_;
    std::vector<std::pair<std::string, std::string>> templates_;

    std::mutex srv_mutex_;
    server::server* srv_ = nullptr;
};

} // namespace duet::gateway
