// A Redis reply (RESP2) as a value, copied out of hiredis' before its callback returns.
#pragma once

#include <string>
#include <vector>

struct redisReply;

namespace duet::store::redis {

struct reply {
    enum class kind { nil, status, error, integer, string, array };
    kind type = kind::nil;
    std::string text; ///< status, error or string
    long long integer = 0;
    std::vector<reply> elements;

    [[nodiscard]] bool is_error() const noexcept { return type == kind::error; }
    [[nodiscard]] static reply from(redisReply const& r);
};

} // namespace duet::store::redis
