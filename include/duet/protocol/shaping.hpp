/// @file duet/protocol/shaping.hpp
///
/// Result shaping per era and negotiated version (ERA-POLICY "Consequences"), in one place. Handlers build
/// one result in the newest shape; shape_result() makes it right for the request it answers:
///
///  - modern: stamp `resultType` ("complete" unless the handler returned "input_required"),
///    `_meta["io.modelcontextprotocol/serverInfo"]`, and on server/discover, the four lists and
///    resources/read the cache hints `ttlMs` / `cacheScope` (never on an input_required result);
///  - legacy: remove every modern-only field (`resultType`, `ttlMs`, `cacheScope`, the serverInfo `_meta`
///    key), and every field the negotiated version does not define (DIGEST §11): `title` before 2025-06-18,
///    `icons` / `description` / `websiteUrl` before 2025-11-25, tool `annotations` before 2025-03-26,
///    `outputSchema` and `structuredContent` before 2025-06-18 or when not an object, audio content before
///    2025-03-26, `resource_link` content before 2025-06-18, `completions` capability before 2025-03-26.
///
///     shape_result(result, {.era = era::modern, .version = v, .method = method_id::tools_list,
///                           .hints = {.ttl_ms = 60000}, .server_info = &info});
#pragma once

#include <duet/protocol/method_table.hpp>
#include <duet/protocol/version.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <string_view>

namespace duet::protocol {

/// Who may reuse a cached result (SEP-2549): anyone, or only the same authorization context.
enum class cache_scope : std::uint8_t { public_cache, private_cache };

[[nodiscard]] constexpr std::string_view to_string(cache_scope s) noexcept {
    return s == cache_scope::public_cache ? "public" : "private";
}

/// Cache hints of a modern cacheable result. Defaults per ERA-POLICY: 0 ms, private.
struct cache_hints {
    std::int64_t ttl_ms = 0;
    cache_scope scope = cache_scope::private_cache;

    friend bool operator==(cache_hints const&, cache_hints const&) = default;
};

struct shape_context {
    protocol::era era = era::legacy;
    protocol::version version = latest_handshake_version;
    method_id method = method_id::ping;
    cache_hints hints;
    /// The server's Implementation object, stamped into modern results' `_meta`. May be null.
    boost::json::object const* server_info = nullptr;
    /// Set when the caller can append serverInfo as it writes the result (jsonrpc::response::result_tail):
    /// a result without `_meta` then gets no copy of it, and shape_result sets the flag to true; the bytes on
    /// the wire are the same as with the copy, which `_meta` would have been the last member of.
    bool* server_info_left_out = nullptr;
};

/// Shapes `result` in place for the era and version in `ctx`.
void shape_result(boost::json::object& result, shape_context const& ctx);

/// Strips an Implementation object (serverInfo / clientInfo) to what version `v` defines.
void shape_implementation(boost::json::object& implementation, version v);

} // namespace duet::protocol
