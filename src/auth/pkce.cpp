#include <duet/auth/pkce.hpp>
#include <duet/protocol/base64.hpp>

#include <openssl/rand.h>
#include <openssl/sha.h>

#include <array>

namespace duet::auth {

std::string base64url(std::string_view bytes) {
    auto text = protocol::base64_encode(bytes);
    while (!text.empty() && text.back() == '=')
        text.pop_back();
    for (auto& c : text)
        c = c == '+' ? '-' : c == '/' ? '_' : c;
    return text;
}

client::result<std::string> random_url_token(std::size_t bytes) {
    std::string raw(bytes, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(raw.size())) != 1)
        return client::make_error(client::errc::usage, "OpenSSL's random generator has no entropy");
    return base64url(raw);
}

std::string s256_challenge(std::string_view verifier) {
    std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
    SHA256(reinterpret_cast<unsigned char const*>(verifier.data()), verifier.size(), digest.data());
    return base64url(std::string_view(reinterpret_cast<char const*>(digest.data()), digest.size()));
}

client::result<pkce> make_pkce() {
    auto verifier = random_url_token();
    if (!verifier)
        return verifier.error();
    pkce p;
    p.verifier = std::move(*verifier);
    p.challenge = s256_challenge(p.verifier);
    return p;
}

} // namespace duet::auth
