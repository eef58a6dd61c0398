/// @file duet/jsonrpc/message.hpp
///
/// The JSON-RPC 2.0 message model: a closed sum of request, notification, response and error response.
/// `params` keeps the JSON it arrived as (object or array; null when the member was absent), so higher layers
/// decode it once, where they know the method.
///
///     message m = request{request_id{1}, "tools/list", boost::json::object{}};
///     std::visit(overloaded{...}, m);
#pragma once

#include <duet/jsonrpc/error.hpp>
#include <duet/jsonrpc/id.hpp>

#include <boost/json/value.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace duet::jsonrpc {

/// A call that expects an answer.
struct request {
    request_id id;
    std::string method;
    boost::json::value params; // object or array; null when absent

    friend bool operator==(request const&, request const&) = default;
};

/// A call that expects no answer.
struct notification {
    std::string method;
    boost::json::value params; // object or array; null when absent

    friend bool operator==(notification const&, notification const&) = default;
};

/// A successful answer.
struct response {
    request_id id;
    boost::json::value result;
    /// Members the result object ends with, already serialized (`"key":value,...`), shared by every answer
    /// that carries them instead of copied into each result: serialize() and to_json() write them after the
    /// result's own members, as if they were its last ones. Only for an object result without those keys.
    std::shared_ptr<std::string const> result_tail = {};

    friend bool operator==(response const& a, response const& b) {
        auto const tail = [](response const& r) {
            return r.result_tail ? std::string_view(*r.result_tail) : std::string_view();
        };
        return a.id == b.id && a.result == b.result && tail(a) == tail(b);
    }
};

/// A failed answer. `id` is empty when the request's id could not be determined (it is then `null` on the
/// wire).
struct error_response {
    std::optional<request_id> id;
    error_object error;

    friend bool operator==(error_response const&, error_response const&) = default;
};

using message = std::variant<request, notification, response, error_response>;

/// Helper for std::visit with lambdas.
template<class... Fs>
struct overloaded : Fs... {
    using Fs::operator()...;
};
template<class... Fs>
overloaded(Fs...) -> overloaded<Fs...>;

} // namespace duet::jsonrpc
