// File: duet/protocol/caller.hpp
//
// Who sent a request, as far as its transport established it. Handlers read it through
// request_context::caller(); it is null where the transport established nothing (stdio, plain HTTP).
#pragma once

#include <string>

namespace duet::protocol {

struct caller_identity {
    /// The subject (RFC 2253) of the client certificate mutual TLS verified; empty without one.
    std::string tls_subject;
};

} // namespace duet::protocol
