// What every request's head must pass before anything else is read (the body is not parsed yet): a served
// path, an allowed Origin and Host (DNS-rebinding protection, origin.hpp), a method the endpoint serves, and
// for POST an Accept listing both answer types. Pure.
#pragma once

#include <duet/transport/http_server.hpp>

#include "reply.hpp"
#include "request.hpp"

#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace duet::transport::http {

class request_guards {
public:
    /// `routes` and `options` must outlive the guards.
    request_guards(std::vector<http_route> const& routes, http_options const& options);

    /// The address the server listens on, once it is bound: empty for loopback.
    void set_bound_address(std::string address) { bound_address_ = std::move(address); }

    /// The endpoint a request is for when its head passes every guard, else the refusal to answer with.
    [[nodiscard]] std::variant<http_route const*, reply> check(request const& req) const;

private:
    [[nodiscard]] reply unknown_path(std::string_view path) const;

    std::vector<http_route> const& routes_;
    http_options const& options_;
    std::string bound_address_;
};

} // namespace duet::transport::http
