// The health endpoints http_options::probes names: a GET answered with what the probe's function says, a HEAD
// with the same head alone, ahead of every guard of the MCP endpoints (an orchestrator probes a pod by its
// IP, with no Origin or Host the server knows, and no token). The probe decides; this carries out its answer.
//
//     if(auto const* p = probe_at(options, req)) return answer_probe(replies, stream, req, keep_alive, *p);
//
// Header-only: the library's sources are listed by name in the top-level CMakeLists.txt.
#pragma once

#include <duet/transport/http_server.hpp>

#include "bounded_socket.hpp"
#include "head_fields.hpp"
#include "reply.hpp"
#include "reply_writer.hpp"
#include "request.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace duet::transport::http {

using probe_function = std::function<probe_answer()>;

/// The probe at the request's path; null when there is none there.
[[nodiscard]] inline probe_function const* probe_at(http_options const& options, request const& req) {
    if (options.probes.empty())
        return nullptr;
    auto const found = options.probes.find(std::string(path_of(req)));
    return found == options.probes.end() ? nullptr : &found->second;
}

/// Throws std::invalid_argument naming a probe at or under the MCP route `route_path` (and the route): the
/// probe would shadow it, or an upstream a gateway adds under it. Asked of every route the server is given,
/// when constructed and by add_route.
inline void check_clear_of_probes(std::string const& route_path, http_options const& options) {
    for (auto const& entry : options.probes) {
        auto const& path = entry.first;
        if (path == route_path || path.starts_with(route_path + "/"))
            throw std::invalid_argument("http_server: the probe " + path + " is at or under the MCP route " +
                                        route_path);
    }
}

/// Throws std::invalid_argument naming a probe the server cannot serve: a path not starting with "/" (or
/// holding a query), one at or under an MCP route's path, or one without a function.
inline void check_probes(std::vector<http_route> const& routes, http_options const& options) {
    for (auto const& [path, probe] : options.probes) {
        if (!path.starts_with("/") || path.find_first_of("?# ") != std::string::npos)
            throw std::invalid_argument("http_server: a probe's path must start with / and hold no query: " +
                                        path);
        if (!probe)
            throw std::invalid_argument("http_server: the probe " + path + " has no function");
    }
    for (auto const& r : routes)
        check_clear_of_probes(r.path, options);
}

/// Answers a request to a probe's path: GET with the probe's answer, HEAD with its head alone, any other
/// method 405. Says the connection goes on.
inline boost::asio::awaitable<bool> answer_probe(reply_writer const& replies, bounded_socket& stream,
                                                 request const& req, bool keep_alive,
                                                 probe_function const& probe) {
    namespace bhttp = boost::beast::http;
    auto const method = req.method();
    if (method != bhttp::verb::get && method != bhttp::verb::head) {
        reply refusal{bhttp::status::method_not_allowed, {}};
        refusal.headers.emplace_back("Allow", "GET, HEAD");
        co_await replies.write(stream, req, refusal, keep_alive);
        co_return true;
    }
    // In this frame: the reply's content type is a view of it.
    probe_answer answer = probe();
    reply r{static_cast<bhttp::status>(answer.status), std::move(answer.body), answer.content_type};
    r.omit_body = method == bhttp::verb::head;
    co_await replies.write(stream, req, r, keep_alive);
    co_return true;
}

} // namespace duet::transport::http
