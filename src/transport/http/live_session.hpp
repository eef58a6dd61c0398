// The half of a legacy session that stays in this process: its server::connection (handlers, pending
// server-to-client requests, a strand), which no store can share. The store keeps it beside the session's
// shareable record (store/session_store.hpp), so one lookup finds both.
#pragma once

#include <duet/server/connection.hpp>
#include <duet/store/session_store.hpp>

#include <memory>
#include <string>

namespace duet::transport::http {

struct live_session final : store::session_local {
    std::shared_ptr<server::connection> conn;
    /// The server of the endpoint the session was opened at (an http_server may serve several).
    server::server const* owner = nullptr;
    /// Who opened it on a server that checks tokens: the token's issuer and subject. A request naming the
    /// session with another's token finds no session there (session ids are not credentials).
    std::string principal;
};

/// The principal `caller` stands for: empty without a verified token.
[[nodiscard]] inline std::string principal_of(protocol::caller_identity const* caller) {
    if (!caller || !caller->token)
        return {};
    return caller->token->issuer + '\n' + caller->token->subject;
}

/// The live half of a session this process created; only the transport gives the store a session_local.
[[nodiscard]] inline live_session& live(store::session const& s) noexcept {
    return static_cast<live_session&>(*s.local());
}

} // namespace duet::transport::http
