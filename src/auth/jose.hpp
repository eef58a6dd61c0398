// What the JWK Set reader (jwk.cpp) and the access token verifier (access_token.cpp) share: strict base64url,
// the keys as OpenSSL holds them, and the quoting of untrusted strings in descriptions.
#pragma once

#include <duet/auth/access_token.hpp>

#include <openssl/evp.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::auth {

struct jwk_set::impl {
    struct entry {
        jwk_summary summary;
        std::shared_ptr<EVP_PKEY> key; ///< a public key; EVP_PKEY_free on the last copy
    };
    std::vector<entry> entries;
    std::vector<jwk_summary> summaries; ///< the same order as entries
    std::vector<jwk_skipped> skipped;
};

namespace detail {

struct jwk_set_access {
    static jwk_set::impl const& of(jwk_set const& set) noexcept;
    static jwk_set make(std::shared_ptr<jwk_set::impl const> impl) noexcept;
};

/// Base64url without padding (RFC 7515 §2, RFC 4648 §5), strictly: only its 64 characters, no '=', no
/// whitespace, no length that leaves a lone character, and unused trailing bits zero, so each byte string has
/// exactly one text. On failure, `fault` says what is wrong, in words.
[[nodiscard]] std::optional<std::string> base64url_decode(std::string_view text, std::string& fault);

/// `text` in double quotes for a description: at most `limit` characters, anything but printable ASCII as
/// '?', so an attacker's string can neither flood a log nor forge a line of it.
[[nodiscard]] std::string quoted(std::string_view text, std::size_t limit = 64);

} // namespace detail

} // namespace duet::auth
