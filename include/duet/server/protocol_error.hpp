/// @file duet/server/protocol_error.hpp
///
/// The one exception a handler throws on purpose: the client gets exactly this JSON-RPC error.
///
///     throw protocol_error(protocol::invalid_params("date must be in the future"));
#pragma once

#include <duet/jsonrpc/error.hpp>

#include <exception>

namespace duet::server {

/// Thrown by a handler that wants the client to get a specific JSON-RPC error (e.g. -32602 for arguments a
/// schema cannot express). Any other exception becomes a sanitized -32603.
class protocol_error : public std::exception {
public:
    explicit protocol_error(jsonrpc::error_object e) : error_(std::move(e)) {}
    [[nodiscard]] jsonrpc::error_object const& error() const noexcept { return error_; }
    [[nodiscard]] char const* what() const noexcept override { return error_.message.c_str(); }

private:
    jsonrpc::error_object error_;
};

} // namespace duet::server
