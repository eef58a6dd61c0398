/// @file duet/protocol/capabilities.hpp
///
/// What a server advertises (derived by the server from what is registered) and how it is written per
/// version, plus the checks on what a client declared for one request.
///
///     server_capabilities caps{.tools = true, .tools_list_changed = true};
///     caps.to_json(version::v2024_11_05);   // no "completions" (that version has no such capability)
///     declares(request_caps, client_capability::elicitation_form);
#pragma once

#include <duet/protocol/version.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string_view>

namespace duet::protocol {

/// A server capability that gates methods (DIGEST §1: calling a gated method the server does not
/// advertise is -32601).
enum class capability : std::uint8_t {
    none,
    tools,
    resources,
    resources_subscribe,
    prompts,
    completions,
    logging,
    tasks, ///< 2025-11-25 `tasks`, or the modern `io.modelcontextprotocol/tasks` extension
};

/// The server's capabilities. `experimental` and `extensions` are passed through as given (extensions only in
/// the modern era, where they exist).
struct server_capabilities {
    bool tools = false;
    bool tools_list_changed = false;
    bool resources = false;
    bool resources_subscribe = false;
    bool resources_list_changed = false;
    bool prompts = false;
    bool prompts_list_changed = false;
    bool completions = false;
    bool logging = false;
    /// Some tools may run as tasks: 2025-11-25 advertises `tasks` (list, cancel, tools/call), 2026-07-28 the
    /// extension `io.modelcontextprotocol/tasks`.
    bool tasks = false;
    boost::json::object experimental;
    boost::json::object extensions;

    [[nodiscard]] bool advertises(capability c) const noexcept;
    /// The ServerCapabilities object as version `v` defines it.
    [[nodiscard]] boost::json::object to_json(version v) const;
    /// What a server advertised (its initialize result, or server/discover): tasks in either era's spelling
    /// (2025-11-25's task-augmented tools/call, or the extension, then taken out of `extensions`, since
    /// to_json writes it again from `tasks`); a malformed member advertises nothing.
    [[nodiscard]] static server_capabilities from_json(boost::json::object const& caps);
};

/// A client capability a handler may need on this request.
enum class client_capability : std::uint8_t {
    roots,            ///< roots/list
    sampling,         ///< sampling/createMessage
    sampling_tools,   ///< sampling with `tools` / `toolChoice`
    elicitation_form, ///< form-mode elicitation (`elicitation: {}` means form)
    elicitation_url,  ///< URL-mode elicitation
    tasks,            ///< the modern tasks extension (`extensions["io.modelcontextprotocol/tasks"]`)
};

/// Whether a ClientCapabilities object declares `c`.
[[nodiscard]] bool declares(boost::json::object const& client_caps, client_capability c) noexcept;

/// The smallest ClientCapabilities object that declares `c`, for -32021's `requiredCapabilities`.
[[nodiscard]] boost::json::object requirement(client_capability c);

/// The client capability a server-to-client request needs (elicitation by its `mode`, sampling, roots);
/// none for a method that needs none.
[[nodiscard]] std::optional<client_capability> capability_needed(std::string_view method,
                                                                 boost::json::value const& params) noexcept;

} // namespace duet::protocol
