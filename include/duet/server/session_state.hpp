/// @file duet/server/session_state.hpp
///
/// Everything a legacy session is besides its live parts: what `initialize` negotiated and the client
/// declared, and what the session's own methods changed since (logging/setLevel, resources/subscribe). A
/// shared store keeps it, so that a process that did not open the session serves it too (connection::
/// restore_session), and every change a connection makes is handed to the store (connection_options::
/// on_session_change). The live parts (running handlers, requests awaiting the client's answer) stay with
/// the process that runs them.
#pragma once

#include <duet/protocol/envelope.hpp>
#include <duet/protocol/version.hpp>

#include <boost/json/object.hpp>
#include <boost/system/result.hpp>

#include <set>
#include <string>
#include <string_view>

namespace duet::server {

struct session_state {
    protocol::version version;
    boost::json::object client_capabilities;
    boost::json::object client_info;
    /// notifications/initialized came: server events reach the session.
    bool initialized = false;
    protocol::log_level log_level = protocol::log_level::debug;
    std::set<std::string> subscriptions; ///< resource URIs (resources/subscribe)

    friend bool operator==(session_state const&, session_state const&) = default;
};

/// As one JSON text (what a store keeps).
[[nodiscard]] std::string to_json_text(session_state const& s);
/// Back from to_json_text(); an error in words for anything else (a store written by another build).
[[nodiscard]] boost::system::result<session_state, std::string>
session_state_from_json(std::string_view text);

} // namespace duet::server
