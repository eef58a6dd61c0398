#include <duet/client/result_cache.hpp>
#include <duet/jsonrpc/json_text.hpp>
#include <duet/protocol/method_table.hpp>
#include <duet/protocol/server_changes.hpp>

#include <algorithm>

namespace duet::client {

namespace json = boost::json;

bool result_cache::cacheable(std::string_view method) noexcept {
    auto const* row = protocol::find_method(method);
    return row && row->cacheable;
}

std::string result_cache::key(std::string_view method, json::object const& params) {
    // The params that affect the result: everything but `_meta` (envelope, progress token).
    json::object p = params;
    p.erase("_meta");
    return std::string(method) + " " + jsonrpc::to_json_text(p);
}

std::optional<json::object> result_cache::fresh(std::string_view method, json::object const& params,
                                                clock::time_point now) const {
    auto const it = entries_.find(key(method, params));
    if (it == entries_.end() || now >= it->second.expires)
        return std::nullopt;
    return it->second.result;
}

std::optional<json::object> result_cache::any(std::string_view method, json::object const& params) const {
    auto const it = entries_.find(key(method, params));
    if (it == entries_.end())
        return std::nullopt;
    return it->second.result;
}

void result_cache::store(std::string_view method, json::object const& params, json::object const& result,
                         clock::time_point now) {
    if (!cacheable(method))
        return;
    if (auto const* t = result.if_contains("resultType");
        t && (!t->is_string() || t->get_string() != "complete"))
        return;
    if (params.contains("inputResponses") || params.contains("requestState"))
        return; // results of multi round-trip retries are never cached
    std::int64_t ttl = 0;
    if (auto const* v = result.if_contains("ttlMs");
        v && (v->is_int64() || v->is_uint64() || v->is_double())) {
        auto const d = v->to_number<double>();
        ttl = d > 0 ? static_cast<std::int64_t>(std::min(d, 1e15)) : 0;
    }
    entry e;
    e.method = std::string(method);
    if (auto const* u = params.if_contains("uri"); u && u->is_string())
        e.uri = std::string(u->get_string());
    e.result = result;
    e.expires = now + std::chrono::milliseconds(ttl);
    if (auto const* s = result.if_contains("cacheScope"); s && s->is_string() && s->get_string() == "public")
        e.scope = protocol::cache_scope::public_cache;
    entries_[key(method, params)] = std::move(e);
}

void result_cache::drop_method(std::string_view method) {
    std::erase_if(entries_, [&](auto const& kv) { return kv.second.method == method; });
}

void result_cache::on_notification(std::string_view method, json::object const& params) {
    auto const* change = protocol::change_of(method);
    if (!change)
        return;
    if (change->is_list_change()) {
        for (auto const stale : change->stale)
            drop_method(protocol::info(stale).name);
        return;
    }
    auto const* u = params.if_contains("uri");
    if (!u || !u->is_string())
        return;
    std::string_view const uri = u->get_string();
    auto const outdated = [&](std::string_view m) {
        return std::ranges::any_of(change->stale,
                                   [&](auto const id) { return protocol::info(id).name == m; });
    };
    // The notification may name the watched URI or a resource under it.
    std::erase_if(entries_, [&](auto const& kv) {
        auto const& e = kv.second;
        return outdated(e.method) && (e.uri == uri || std::string_view(e.uri).starts_with(uri) ||
                                      uri.starts_with(std::string_view(e.uri)));
    });
}

} // namespace duet::client
