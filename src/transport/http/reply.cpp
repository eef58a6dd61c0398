#include "reply.hpp"

#include <duet/jsonrpc/codec.hpp>

namespace duet::transport::http {

namespace bhttp = boost::beast::http;

std::string error_body(std::optional<jsonrpc::request_id> id, protocol::error_object e) {
    return jsonrpc::serialize(jsonrpc::error_response{std::move(id), std::move(e)});
}

reply invalid_request_reply(bhttp::status status, std::string message) {
    return reply{status, error_body(std::nullopt, protocol::invalid_request(std::move(message)))};
}

reply rejection_reply(protocol::rejection r, std::optional<jsonrpc::request_id> id) {
    return reply{static_cast<bhttp::status>(r.http_status), error_body(std::move(id), std::move(r.error))};
}

reply answer_reply(std::optional<jsonrpc::message> const& message, unsigned http_status) {
    if (!message)
        return reply{bhttp::status::accepted, {}};
    return reply{static_cast<bhttp::status>(http_status), jsonrpc::serialize(*message)};
}

} // namespace duet::transport::http
