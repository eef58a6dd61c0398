/// @file duet/client/result_cache.hpp
///
/// The client's cache of cacheable results (SEP-2549, DIGEST §5): server/discover, the four lists (one entry
/// per page) and resources/read. An entry is fresh while now < received + ttlMs; a missing, zero or negative
/// `ttlMs` (every legacy server) means stale at once. A list_changed notification drops that list's pages at
/// once; resources/updated drops the reads of that URI (and of URIs under it). `cacheScope` is kept with each
/// entry: a private entry is only served to the same authorization context, which a client connection is.
/// Results of multi round-trip retries and input_required results are never stored.
///
///     cache.store("tools/list", params, result, now);
///     if(auto hit = cache.fresh("tools/list", params, now)) ...
///
/// @par Thread safety
/// None: one cache belongs to one client and is used on its executor.
#pragma once

#include <duet/protocol/shaping.hpp>

#include <boost/json/object.hpp>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace duet::client {

class result_cache {
public:
    using clock = std::chrono::steady_clock;

    /// Whether results of `method` may be cached at all.
    [[nodiscard]] static bool cacheable(std::string_view method) noexcept;

    /// A copy of the entry for this request when it is still fresh.
    [[nodiscard]] std::optional<boost::json::object>
    fresh(std::string_view method, boost::json::object const& params, clock::time_point now) const;
    /// The entry whatever its age (a stale copy may be served while a re-fetch is failing).
    [[nodiscard]] std::optional<boost::json::object> any(std::string_view method,
                                                         boost::json::object const& params) const;
    /// Stores a complete result of a cacheable method (others are ignored).
    void store(std::string_view method, boost::json::object const& params, boost::json::object const& result,
               clock::time_point now);

    /// A notification arrived: list_changed drops that list, resources/updated the reads of its URI.
    void on_notification(std::string_view method, boost::json::object const& params);
    /// An invalid cursor: discard every page of that list.
    void drop_method(std::string_view method);
    void clear() noexcept { entries_.clear(); }
    [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }

private:
    struct entry {
        std::string method;
        std::string uri; ///< resources/read only
        boost::json::object result;
        clock::time_point expires;
        protocol::cache_scope scope = protocol::cache_scope::private_cache;
    };
    [[nodiscard]] static std::string key(std::string_view method, boost::json::object const& params);
    std::map<std::string, entry> entries_;
};

} // namespace duet::client
