#include "span_id.hpp"

#include <cstdint>
#include <random>

namespace duet::support {

std::string new_span_id() {
    thread_local std::mt19937_64 generator{std::random_device{}()};
    std::uint64_t id = 0;
    while (id == 0)
        id = generator();
    static constexpr char digits[] = "0123456789abcdef";
    std::string out(16, '0');
    for (int i = 15; i >= 0; --i, id >>= 4)
        out[static_cast<std::size_t>(i)] = digits[id & 0xf];
    return out;
}

} // namespace duet::support
