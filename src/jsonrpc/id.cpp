#include <duet/jsonrpc/id.hpp>
#include <duet/jsonrpc/json_text.hpp>

#include <limits>

namespace duet::jsonrpc {

std::optional<request_id> request_id::from_json(boost::json::value const& v) {
    switch (v.kind()) {
    case boost::json::kind::string:
        return request_id{std::string(v.get_string())};
    case boost::json::kind::int64:
        return request_id{v.get_int64()};
    case boost::json::kind::uint64:
        // Boost.JSON reads only numbers above INT64_MAX as uint64; ids that large are not representable.
        if (v.get_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            return request_id{static_cast<std::int64_t>(v.get_uint64())};
        return std::nullopt;
    default:
        // null, bool, double (fractional or written with a fraction/exponent), array, object
        return std::nullopt;
    }
}

boost::json::value request_id::to_json() const {
    if (is_integer())
        return boost::json::value(as_integer());
    return boost::json::value(as_string());
}

std::string request_id::to_string() const {
    return to_json_text(to_json());
}

} // namespace duet::jsonrpc
