// The half of a legacy session that stays in this process: its server::connection (handlers, pending
// server-to-client requests, a strand), which no store can share. The store keeps it beside the session's
// shareable record (store/session_store.hpp), so one lookup finds both. With a shared store, every process
// serving the session holds one, built from the record the opening process saved (session_record).
#pragma once

#include <duet/protocol/caller.hpp>
#include <duet/server/connection.hpp>
#include <duet/server/session_state.hpp>
#include <duet/store/session_store.hpp>

#include <boost/system/result.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace duet::transport::http {

struct live_session final : store::session_local {
    std::shared_ptr<server::connection> conn;
    /// The server of the endpoint the session was opened at (an http_server may serve several).
    server::server const* owner = nullptr;
    /// Who opened it on a server that checks tokens: the token's issuer and subject. A request naming the
    /// session with another's token finds no session there (session ids are not credentials).
    std::string principal;

    /// A client's notification or answer, POSTed to whichever process (session::broadcast): the connection
    /// whose request it concerns acts on it, the others ignore it.
    void on_broadcast(std::string_view payload) override;
    /// Another process changed the session (logging/setLevel, resources/subscribe, initialized).
    void on_state(std::string_view state) override;
    void on_events_here(bool here) override;
    void on_ended() override;
};

/// What a shared store keeps of a session (session::save_state): the endpoint path it was opened at, its
/// principal, and the session's state.
struct session_record {
    std::string path;
    std::string principal;
    server::session_state state;
};
[[nodiscard]] std::string encode_record(session_record const& r);
[[nodiscard]] boost::system::result<session_record, std::string> decode_record(std::string_view text);

/// The principal `caller` stands for: empty without a verified token.
[[nodiscard]] inline std::string principal_of(protocol::caller_identity const* caller) {
    if (!caller || !caller->token)
        return {};
    return caller->token->issuer + '\n' + caller->token->subject;
}

/// The live half of a session this process serves; only the transport gives the store a session_local.
[[nodiscard]] inline live_session& live(store::session const& s) noexcept {
    return static_cast<live_session&>(*s.local());
}

} // namespace duet::transport::http
