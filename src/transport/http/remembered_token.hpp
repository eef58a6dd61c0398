// What a connection keeps of the bearer token its last request carried: a kept-alive client sends the same
// token again and again, and until `until` (a second at most, never past the token's expiry) it is recognised
// by comparing its bytes, without a hash or a cache lookup (bearer_guard.hpp). Kept only while the connection
// is open.
#pragma once

#include <duet/protocol/caller.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace duet::transport::http {

struct remembered_token {
    std::string token;
    std::shared_ptr<protocol::verified_token const> verdict;
    std::chrono::steady_clock::time_point until{};
};

} // namespace duet::transport::http
