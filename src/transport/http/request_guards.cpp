#include "request_guards.hpp"

#include "head_fields.hpp"
#include "origin.hpp"

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>

namespace duet::transport::http {

namespace bhttp = boost::beast::http;

namespace {

// A path as the answer names it: bytes beyond visible ASCII percent-encoded, since the answer is JSON text,
// which raw bytes of a target (Beast lets through any byte above 0x7F) would make invalid.
std::string printable_path(std::string_view path) {
    constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(path.size());
    for (unsigned char c : path) {
        if (c > 0x20 && c < 0x7F) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

} // namespace

request_guards::request_guards(std::vector<http_route> const& routes, http_options const& options)
    : routes_(&routes), options_(options) {}

std::variant<http_route const*, reply> request_guards::check(request const& req,
                                                             std::vector<http_route> const& routes) const {
    auto const path = path_of(req);
    http_route const* route = nullptr;
    for (auto const& r : routes)
        if (r.path == path) {
            route = &r;
            break;
        }
    if (!route)
        return unknown_path(path, routes);
    if (!origin_allowed(header(req, bhttp::field::origin), options_.allowed_origins) ||
        !host_allowed(header(req, bhttp::field::host), bound_address_, options_.allowed_hosts))
        return invalid_request_reply(bhttp::status::forbidden, "Invalid Request: origin or host not allowed");
    switch (req.method()) {
    case bhttp::verb::post:
        if (!accepts(req, "application/json") || !accepts(req, "text/event-stream"))
            return invalid_request_reply(
                bhttp::status::not_acceptable,
                "Invalid Request: Accept must list application/json and text/event-stream");
        return route;
    case bhttp::verb::get:
    case bhttp::verb::delete_:
        return route;
    default: {
        reply r{bhttp::status::method_not_allowed, {}};
        r.headers.emplace_back("Allow", "GET, POST, DELETE");
        return r;
    }
    }
}

// 404 for a path no server is at, naming those that are (none, once every route was removed).
reply request_guards::unknown_path(std::string_view path, std::vector<http_route> const& routes) {
    std::string served;
    for (auto const& r : routes)
        served += (served.empty() ? "" : ", ") + r.path;
    if (served.empty())
        served = "none";
    return invalid_request_reply(bhttp::status::not_found, "Invalid Request: no MCP endpoint at " +
                                                               printable_path(path) +
                                                               "; served here: " + served);
}

} // namespace duet::transport::http
