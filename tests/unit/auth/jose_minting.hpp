// What the JWK Set and access token suites share: keys made with OpenSSL at test time (no key files), their
// public halves written as JWKs (RFC 7517 §4, RFC 7518 §6.2.1 and §6.3.1, RFC 8037 §2), and JWS compact
// tokens signed with them (RFC 7515 §5.1, §7.1). Everything lives in its own namespace: the suites compile
// eight files to a unit, so these names must not meet another file's.
#pragma once

#include <duet/auth/access_token.hpp>
#include <duet/auth/pkce.hpp>
#include <duet/jsonrpc/json_text.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace jose_minting {

namespace json = boost::json;

struct pkey_deleter {
    void operator()(EVP_PKEY* p) const noexcept { EVP_PKEY_free(p); }
};
using owned_pkey = std::unique_ptr<EVP_PKEY, pkey_deleter>;

// Made once per run: RSA key generation is the slow part of these suites.
inline EVP_PKEY* rsa_key() {
    static owned_pkey const k(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(2048)));
    return k.get();
}
inline EVP_PKEY* other_rsa_key() {
    static owned_pkey const k(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(2048)));
    return k.get();
}
inline EVP_PKEY* p256_key() {
    static owned_pkey const k(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
    return k.get();
}
inline EVP_PKEY* p384_key() {
    static owned_pkey const k(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-384"));
    return k.get();
}
inline EVP_PKEY* ed25519_key() {
    static owned_pkey const k(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
    return k.get();
}

// A big-endian parameter of the key, `pad` bytes long when not 0 (EC coordinates keep leading zeros).
inline std::string bn_param(EVP_PKEY* key, char const* name, int pad = 0) {
    BIGNUM* bn = nullptr;
    if (EVP_PKEY_get_bn_param(key, name, &bn) != 1)
        return {};
    std::string out(static_cast<std::size_t>(pad != 0 ? pad : BN_num_bytes(bn)), '\0');
    BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(out.size()));
    BN_free(bn);
    return out;
}

/// The public half of `key` as a JWK, with `kid` and `alg` when not empty.
inline json::object public_jwk(EVP_PKEY* key, std::string const& kid, std::string const& alg = {}) {
    json::object jwk;
    switch (EVP_PKEY_get_base_id(key)) {
    case EVP_PKEY_RSA:
        jwk["kty"] = "RSA";
        jwk["n"] = duet::auth::base64url(bn_param(key, OSSL_PKEY_PARAM_RSA_N));
        jwk["e"] = duet::auth::base64url(bn_param(key, OSSL_PKEY_PARAM_RSA_E));
        break;
    case EVP_PKEY_EC: {
        char group[32] = {};
        EVP_PKEY_get_group_name(key, group, sizeof group, nullptr);
        bool const p256 = std::string_view(group) == "prime256v1";
        int const size = p256 ? 32 : 48;
        jwk["kty"] = "EC";
        jwk["crv"] = p256 ? "P-256" : "P-384";
        jwk["x"] = duet::auth::base64url(bn_param(key, OSSL_PKEY_PARAM_EC_PUB_X, size));
        jwk["y"] = duet::auth::base64url(bn_param(key, OSSL_PKEY_PARAM_EC_PUB_Y, size));
        break;
    }
    case EVP_PKEY_ED25519: {
        std::string raw(32, '\0');
        std::size_t size = raw.size();
        EVP_PKEY_get_raw_public_key(key, reinterpret_cast<unsigned char*>(raw.data()), &size);
        jwk["kty"] = "OKP";
        jwk["crv"] = "Ed25519";
        jwk["x"] = duet::auth::base64url(raw);
        break;
    }
    default:
        break;
    }
    if (!kid.empty())
        jwk["kid"] = kid;
    if (!alg.empty())
        jwk["alg"] = alg;
    return jwk;
}

/// A JWK Set document holding `keys`.
inline json::value jwks_of(std::vector<json::object> keys) {
    json::array array;
    for (auto& k : keys)
        array.emplace_back(std::move(k));
    return json::object{{"keys", std::move(array)}};
}

/// The key set read from `keys`; empty when the reader refuses it (the suites check that separately).
inline duet::auth::jwk_set key_set_of(std::vector<json::object> keys) {
    auto set = duet::auth::read_jwk_set(jwks_of(std::move(keys)));
    return set ? *set : duet::auth::jwk_set();
}

// RFC 7518 §3.4: OpenSSL's DER ECDSA signature as JOSE's r||s, each `half` bytes.
inline std::string jose_signature(std::string const& der, std::size_t half) {
    auto const* p = reinterpret_cast<unsigned char const*>(der.data());
    std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> sig(
        d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size())), &ECDSA_SIG_free);
    if (!sig)
        return {};
    std::string out(2 * half, '\0');
    auto* raw = reinterpret_cast<unsigned char*>(out.data());
    BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), raw, static_cast<int>(half));
    BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), raw + half, static_cast<int>(half));
    return out;
}

/// The raw JWS signature of `input` by `key` for `alg` (RS*, PS*, ES256/384, EdDSA); empty on failure.
inline std::string signature_of(EVP_PKEY* key, std::string_view alg, std::string_view input) {
    EVP_MD const* md = alg.ends_with("256")   ? EVP_sha256()
                       : alg.ends_with("384") ? EVP_sha384()
                       : alg.ends_with("512") ? EVP_sha512()
                                              : nullptr;
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    EVP_PKEY_CTX* pctx = nullptr;
    if (!ctx || EVP_DigestSignInit(ctx.get(), &pctx, alg == "EdDSA" ? nullptr : md, nullptr, key) != 1)
        return {};
    if (alg.starts_with("PS") && (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
                                  EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) != 1))
        return {};
    auto const* data = reinterpret_cast<unsigned char const*>(input.data());
    std::size_t size = 0;
    if (EVP_DigestSign(ctx.get(), nullptr, &size, data, input.size()) != 1)
        return {};
    std::string sig(size, '\0');
    if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &size, data, input.size()) !=
        1)
        return {};
    sig.resize(size);
    if (alg == "ES256")
        return jose_signature(sig, 32);
    if (alg == "ES384")
        return jose_signature(sig, 48);
    return sig;
}

/// header.claims.signature from the JSON texts as given (so a test can sign what no serializer writes).
inline std::string sign_texts(EVP_PKEY* key, std::string_view alg, std::string const& header_text,
                              std::string const& claims_text) {
    auto const input = duet::auth::base64url(header_text) + "." + duet::auth::base64url(claims_text);
    return input + "." + duet::auth::base64url(signature_of(key, alg, input));
}

/// A token whose header is `header` (its alg the signing algorithm) and whose claims are `claims`.
inline std::string sign_token(EVP_PKEY* key, json::object const& header, json::value const& claims) {
    auto const alg = header.contains("alg") && header.at("alg").is_string()
                         ? std::string(header.at("alg").get_string())
                         : std::string();
    return sign_texts(key, alg, duet::jsonrpc::to_json_text(header), duet::jsonrpc::to_json_text(claims));
}

} // namespace jose_minting
