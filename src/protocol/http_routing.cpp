#include <duet/protocol/http_routing.hpp>

namespace duet::protocol {

post_route route_post(version_claim::kind claim, std::string_view method, session_lookup session,
                      era_support eras) noexcept {
    // A claim is modern whatever session it names (ERA-POLICY "Consequences"); a legacy-only server leaves
    // it to admission, which serves or refuses the request as legacy.
    if (claim != version_claim::kind::absent && eras != era_support::legacy_only)
        return method == "subscriptions/listen" ? post_route::modern_listen : post_route::modern;
    if (method == "initialize")
        return post_route::open_session;
    switch (session) {
    case session_lookup::unknown:
        return post_route::unknown_session;
    case session_lookup::live:
        return post_route::in_session;
    case session_lookup::none:
        break;
    }
    return post_route::sessionless;
}

message_route route_post_message(session_lookup session) noexcept {
    switch (session) {
    case session_lookup::live:
        return message_route::to_session;
    case session_lookup::unknown:
        return message_route::unknown_session;
    case session_lookup::none:
        break;
    }
    return message_route::accept;
}

batch_route route_batch(session_lookup session, std::optional<version> negotiated) noexcept {
    if (session == session_lookup::unknown)
        return batch_route::unknown_session;
    if (session == session_lookup::live && negotiated && batches_allowed(*negotiated))
        return batch_route::in_session;
    return batch_route::not_allowed;
}

session_request_route route_session_request(session_lookup session) noexcept {
    switch (session) {
    case session_lookup::live:
        return session_request_route::in_session;
    case session_lookup::unknown:
        return session_request_route::unknown_session;
    case session_lookup::none:
        break;
    }
    return session_request_route::no_session;
}

rejection unknown_session_rejection() {
    return rejection{
        invalid_request("Invalid Request: unknown or expired session; send initialize to open a new one"),
        404};
}

} // namespace duet::protocol
