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
    /// For routes that change while the server serves (route_table.hpp): each check() is given the ones
    /// served now. `options` must outlive the guards.
    explicit request_guards(http_options const& options) : options_(options) {}
    /// For a fixed set of routes, check(req). `routes` and `options` must outlive the guards.
    request_guards(std::vector<http_route> const& routes, http_options const& options);

    /// The address the server listens on, once it is bound: empty for loopback.
    void set_bound_address(std::string address) { bound_address_ = std::move(address); }

    /// The endpoint a request is for when its head passes every guard, else the refusal to answer with. The
    /// endpoint points into `routes`. The one-argument form is for guards given their routes.
    [[nodiscard]] std::variant<http_route const*, reply> check(request const& req,
                                                               std::vector<http_route> const& routes) const;
    [[nodiscard]] std::variant<http_route const*, reply> check(request const& req) const {
        return check(req, *routes_);
    }

private:
    [[nodiscard]] static reply unknown_path(std::string_view path, std::vector<http_route> const& routes);

    std::vector<http_route> const* routes_ = nullptr; ///< null: given to each check()
    http_options const& options_;
    std::string bound_address_;
};

} // namespace duet::transport::http
