/// @file duet/server/admitted_request.hpp
///
/// One request and the verdict admission gave it (ERA-POLICY "Admission of one request"): what a transport
/// that routes requests itself hands a connection, so that a request is admitted once, in the route step,
/// and the connection only carries the verdict out. server::admit() makes one.
///
///     auto route = protocol::route_post(claim, r.method, lookup, srv.options().eras);
///     auto admitted = srv.admit(std::move(r), {.legacy = session_version}, &facts);
///     auto now = conn->answer_now(std::move(admitted), &facts, out, later);
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/protocol/admission.hpp>
#include <duet/protocol/capabilities.hpp>
#include <duet/protocol/errors.hpp>

#include <boost/system/result.hpp>

#include <memory>

namespace duet::server {

struct admitted_request {
    jsonrpc::request request;
    /// The admission, or why the request is refused (its error and HTTP status).
    boost::system::result<protocol::admission, protocol::rejection> verdict;
    /// The capabilities the request was admitted by: a registration that changes meanwhile does not move
    /// what it is served by (a listen's initial state, for one).
    std::shared_ptr<protocol::server_capabilities const> capabilities;
};

} // namespace duet::server
