#include "session_id.hpp"

#include "support/hex.hpp"

#include <openssl/rand.h>

#include <array>
#include <stdexcept>
#include <string_view>

namespace duet::store {

std::string mint_session_id() {
    std::array<unsigned char, 16> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
        throw std::runtime_error("the system random generator failed");
    return support::to_hex(std::string_view(reinterpret_cast<char const*>(bytes.data()), bytes.size()));
}

} // namespace duet::store
