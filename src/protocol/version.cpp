#include <duet/protocol/version.hpp>

namespace duet::protocol {

boost::json::array to_json(std::span<version const> versions) {
    boost::json::array a;
    a.reserve(versions.size());
    for (auto v : versions)
        a.emplace_back(to_string(v));
    return a;
}

boost::json::array advertised_modern_versions() {
    return to_json(modern_versions);
}

} // namespace duet::protocol
