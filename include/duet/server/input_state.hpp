/// @file duet/server/input_state.hpp
///
/// The sealed `requestState` of a modern multi round-trip request (SEP-2322, DIGEST §4). Between rounds the
/// server keeps nothing: everything a handler needs on the next retry (the answers of earlier rounds and the
/// handler's own small state) travels to the client and back inside `requestState`, sealed with HMAC-SHA256
/// (OpenSSL) over that content, the method, the params that matter and an expiry. A tampered, expired or
/// mismatched state is refused, never re-prompted.
///
///     state_sealer sealer(key);                                       // key: configured, or random per
///     process auto token = sealer.seal("tools/call", params, state, now + 10min); auto back =
///     sealer.open(token, "tools/call", params, now);       // result<input_state, std::string>
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace duet::server {

/// What survives between rounds of one request.
struct input_state {
    boost::json::object answers;       ///< input responses of earlier rounds, by key
    boost::json::object handler_state; ///< the handler's own state (request_context::state())
    boost::json::array pending;        ///< keys asked in the last round: only their answers are taken
};

struct state_error {
    std::string message;
};
[[noreturn]] void throw_exception_from_error(state_error const& e, boost::source_location const& loc);

/// A requestState key with the id a sealed state names it by, so processes sharing a key ring can roll a new
/// key in while the old one still opens what it sealed.
struct state_key {
    std::string id;     ///< 1 to 32 of A-Z a-z 0-9 - _
    std::string secret; ///< at least 16 bytes
};

class state_sealer {
public:
    /// `key` of at least 16 bytes; an empty key picks 32 random bytes (valid for this process only).
    explicit state_sealer(std::string key = {});
    /// A key ring: the first key seals, every key opens what it sealed (a state names its key's id). Throws
    /// std::invalid_argument for no key, a bad id, two keys with one id, or a secret under 16 bytes.
    explicit state_sealer(std::vector<state_key> keys);

    [[nodiscard]] std::string seal(std::string_view method, boost::json::value const& params,
                                   input_state const& state,
                                   std::chrono::system_clock::time_point expiry) const;

    [[nodiscard]] boost::system::result<input_state, state_error>
    open(std::string_view token, std::string_view method, boost::json::value const& params,
         std::chrono::system_clock::time_point now) const;

    /// The params that identify a request across its rounds: everything but `_meta`, `inputResponses` and
    /// `requestState`, serialized with sorted keys so member order does not matter.
    [[nodiscard]] static std::string canonical_params(boost::json::value const& params);

private:
    // The key that seals first; an empty id for the single-key form (a state then names no key).
    std::vector<state_key> keys_;
};

} // namespace duet::server
