#include <duet/protocol/base64.hpp>

#include <array>
#include <cstdint>

namespace duet::protocol {

namespace {

constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<std::int8_t, 256> decode_table() {
    std::array<std::int8_t, 256> t{};
    t.fill(-1);
    for (int i = 0; i < 64; ++i)
        t[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
    return t;
}
constexpr auto sextet = decode_table();

} // namespace

std::string base64_encode(std::string_view in) {
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= in.size(); i += 3) {
        std::uint32_t n = (std::uint32_t(std::uint8_t(in[i])) << 16) |
                          (std::uint32_t(std::uint8_t(in[i + 1])) << 8) | std::uint8_t(in[i + 2]);
        out += alphabet[(n >> 18) & 63];
        out += alphabet[(n >> 12) & 63];
        out += alphabet[(n >> 6) & 63];
        out += alphabet[n & 63];
    }
    if (std::size_t rest = in.size() - i; rest > 0) {
        std::uint32_t n = std::uint32_t(std::uint8_t(in[i])) << 16;
        if (rest == 2)
            n |= std::uint32_t(std::uint8_t(in[i + 1])) << 8;
        out += alphabet[(n >> 18) & 63];
        out += alphabet[(n >> 12) & 63];
        out += rest == 2 ? alphabet[(n >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

std::optional<std::string> base64_decode(std::string_view in) {
    if (in.size() % 4 != 0)
        return std::nullopt;
    std::string out;
    out.reserve(in.size() / 4 * 3);
    for (std::size_t i = 0; i < in.size(); i += 4) {
        bool const last = i + 4 == in.size();
        int pad = 0;
        std::uint32_t n = 0;
        for (std::size_t j = 0; j < 4; ++j) {
            char const c = in[i + j];
            if (c == '=' && last && j >= 2) {
                ++pad;
                n <<= 6;
                continue;
            }
            if (pad > 0)
                return std::nullopt; // data after padding
            auto const s = sextet[static_cast<unsigned char>(c)];
            if (s < 0)
                return std::nullopt;
            n = (n << 6) | std::uint32_t(s);
        }
        // The bits padding stands in for are zero in the one canonical spelling: "aGk=" is "hi", "aGl="
        // nothing.
        if ((pad == 1 && (n & 0xFF) != 0) || (pad == 2 && (n & 0xFFFF) != 0))
            return std::nullopt;
        out += char((n >> 16) & 0xFF);
        if (pad < 2)
            out += char((n >> 8) & 0xFF);
        if (pad < 1)
            out += char(n & 0xFF);
    }
    return out;
}

} // namespace duet::protocol
