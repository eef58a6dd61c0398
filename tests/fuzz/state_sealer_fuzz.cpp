// Fuzz target over state_sealer::open (duet/server/input_state.hpp): the requestState a client sends back is
// hostile. The first byte picks how the rest becomes a token:
// - as it is: never accepted (only this server's key makes a valid MAC);
// - as the token's body, with the MAC this target computes with the server's key (what only a server could
//   have sealed): only canonical base64url opens, and what opens seals and opens again the same;
// - as the payload's JSON, base64url-encoded and MACed likewise: the payload's checks, without a crash;
// - as a handler state sealed by the server: it opens to exactly what was sealed.
#include <duet/server/input_state.hpp>

#include <boost/json/parse.hpp>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

namespace {

using duet::server::input_state;
using duet::server::state_sealer;

constexpr std::string_view key = "fuzz-target-key-0123456789abcdef";
constexpr std::string_view method = "tools/call";
constexpr char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string base64url(std::string_view bytes) {
    std::string out;
    std::uint32_t acc = 0;
    int bits = 0;
    for (unsigned char c : bytes) {
        acc = (acc << 8) | c;
        bits += 8;
        for (; bits >= 6; bits -= 6)
            out += b64url[(acc >> (bits - 6)) & 63];
    }
    if (bits > 0)
        out += b64url[(acc << (6 - bits)) & 63];
    return out;
}

// body "." base64url(HMAC-SHA256(key, body)): the form a server seals.
std::string signed_token(std::string_view body) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int len = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<unsigned char const*>(body.data()), body.size(), md.data(), &len);
    return std::string(body) + "." + base64url({reinterpret_cast<char const*>(md.data()), len});
}

// The bytes of base64url text, the unused low bits of its last character dropped (nullopt: a foreign
// character).
std::optional<std::string> from_base64url(std::string_view text) {
    std::string out;
    std::uint32_t acc = 0;
    int bits = 0;
    for (char c : text) {
        auto const* p = std::find(std::begin(b64url), std::end(b64url) - 1, c);
        if (p == std::end(b64url) - 1)
            return std::nullopt;
        acc = (acc << 6) | static_cast<std::uint32_t>(p - b64url);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xFF);
        }
    }
    return out;
}

// Doubles may move in their last bit through a JSON round trip (Boost.JSON 1.81 reads decimals fast).
bool has_double(boost::json::value const& v) {
    if (v.is_double())
        return true;
    if (auto const* o = v.if_object())
        return std::any_of(o->begin(), o->end(), [](auto const& kv) { return has_double(kv.value()); });
    if (auto const* a = v.if_array())
        return std::any_of(a->begin(), a->end(), [](auto const& e) { return has_double(e); });
    return false;
}

bool same(input_state const& a, input_state const& b) {
    return a.answers == b.answers && a.handler_state == b.handler_state && a.pending == b.pending;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    if (size == 0)
        return 0;
    static state_sealer const sealer{std::string(key)};
    static boost::json::value const params = boost::json::parse(R"({"name":"t","arguments":{"a":1}})");
    auto const now = std::chrono::system_clock::time_point(std::chrono::seconds(1'900'000'000));
    auto const later = now + std::chrono::minutes(10);
    std::string_view const rest(reinterpret_cast<char const*>(data + 1), size - 1);

    switch (data[0] % 4) {
    case 0:
        if (sealer.open(rest, method, params, now))
            std::abort(); // forged
        break;
    case 1:
        if (auto const opened = sealer.open(signed_token(rest), method, params, now)) {
            // One spelling per body: what opens is the encoding of its bytes.
            auto const bytes = from_base64url(rest);
            if (!bytes || base64url(*bytes) != rest)
                std::abort();
            auto const token = sealer.seal(method, params, *opened, later);
            auto const again = sealer.open(token, method, params, now);
            if (!again)
                std::abort();
            if (!has_double(opened->answers) && !has_double(opened->handler_state) &&
                !has_double(opened->pending) && !same(*again, *opened))
                std::abort();
        }
        break;
    case 2:
        (void)sealer.open(signed_token(base64url(rest)), method, params, now);
        break;
    default: {
        boost::system::error_code ec;
        auto const v = boost::json::parse(rest, ec);
        if (ec || !v.is_object() || has_double(v))
            break;
        input_state state;
        state.handler_state = v.get_object();
        state.answers = v.get_object();
        state.pending = boost::json::array{"a", rest};
        auto const opened = sealer.open(sealer.seal(method, params, state, later), method, params, now);
        if (!opened || !same(*opened, state))
            std::abort();
    }
    }
    return 0;
}
