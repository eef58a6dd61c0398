// http_options::request_gate asked about one JSON-RPC request, and its refusal written down as the reply that
// carries it out. The gate decides; this only shows it the request and answers as it said.
//
//     if(auto refusal = gate_refusal_of(options, stream, r)) answer *refusal;   // after the scope check
//
// Header-only: the library's sources are listed by name in the top-level CMakeLists.txt.
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/transport/http_server.hpp>

#include "bounded_socket.hpp"
#include "reply.hpp"

#include <boost/beast/http/status.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <optional>
#include <string>

namespace duet::transport::http {

/// The reply refusing `r` when options.request_gate refuses it: its status, `Retry-After` (at least 1 s) and
/// its error under r's id. nullopt when the gate lets `r` through, or there is none.
[[nodiscard]] inline std::optional<reply> gate_refusal_of(http_options const& options, bounded_socket& stream,
                                                          jsonrpc::request const& r) {
    if (!options.request_gate)
        return std::nullopt;
    static boost::json::object const no_params;
    auto const* params = r.params.if_object();
    gate_facts const facts{.method = r.method,
                           .params = params ? params : &no_params,
                           .caller = stream.caller().get(),
                           .peer_address = stream.peer_address()};
    auto refusal = options.request_gate(facts);
    if (!refusal)
        return std::nullopt;
    reply answer{static_cast<boost::beast::http::status>(refusal->http_status),
                 error_body(r.id, std::move(refusal->error))};
    auto const seconds = std::max<std::chrono::seconds::rep>(refusal->retry_after.count(), 1);
    answer.headers.emplace_back("Retry-After", std::to_string(seconds));
    return answer;
}

} // namespace duet::transport::http
