#include "client_assertion.hpp"

#include <duet/auth/pkce.hpp>
#include <duet/jsonrpc/json_text.hpp>

#include <boost/json/object.hpp>

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <memory>
#include <string_view>
#include <vector>

namespace duet::auth::detail {

namespace {

template<class T, void (*Free)(T*)>
struct freer {
    void operator()(T* p) const noexcept { Free(p); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, freer<EVP_PKEY, EVP_PKEY_free>>;
using md_ctx_ptr = std::unique_ptr<EVP_MD_CTX, freer<EVP_MD_CTX, EVP_MD_CTX_free>>;
using ecdsa_sig_ptr = std::unique_ptr<ECDSA_SIG, freer<ECDSA_SIG, ECDSA_SIG_free>>;

client::error failure(std::string const& why) {
    return client::make_error(client::errc::usage, "cannot sign the client assertion: " + why);
}

struct algorithm_facts {
    EVP_MD const* digest;
    int key_type;
    std::size_t ec_half; ///< ECDSA: the bytes of r and of s in the JOSE form; 0 for RSA
    bool pss;
    std::string_view curve; ///< ECDSA: the one curve RFC 7518 §3.4 allows (OpenSSL's name); empty for RSA
};

std::optional<algorithm_facts> facts_of(std::string const& alg) {
    if (alg == "ES256")
        return algorithm_facts{EVP_sha256(), EVP_PKEY_EC, 32, false, "prime256v1"};
    if (alg == "ES384")
        return algorithm_facts{EVP_sha384(), EVP_PKEY_EC, 48, false, "secp384r1"};
    if (alg == "RS256")
        return algorithm_facts{EVP_sha256(), EVP_PKEY_RSA, 0, false, {}};
    if (alg == "PS256")
        return algorithm_facts{EVP_sha256(), EVP_PKEY_RSA, 0, true, {}};
    return std::nullopt;
}

// JOSE writes an ECDSA signature as r and s, each left-padded to the curve's size (RFC 7518 §3.4), where
// OpenSSL gives DER.
client::result<std::string> jose_ecdsa(std::vector<unsigned char> const& der, std::size_t half) {
    unsigned char const* p = der.data();
    ecdsa_sig_ptr sig(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size())));
    if (!sig)
        return failure("OpenSSL gave no ECDSA signature");
    std::string out(half * 2, '\0');
    auto* raw = reinterpret_cast<unsigned char*>(out.data());
    if (BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), raw, static_cast<int>(half)) < 0 ||
        BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), raw + half, static_cast<int>(half)) < 0)
        return failure("the ECDSA signature does not fit the curve");
    return out;
}

} // namespace

client::result<std::string> sign_client_assertion(std::string const& private_key_pem,
                                                  std::string const& algorithm, std::string const& client_id,
                                                  std::string const& audience,
                                                  std::chrono::system_clock::time_point now) {
    auto const facts = facts_of(algorithm);
    if (!facts)
        return failure("the algorithm " + algorithm + " is not one of ES256, ES384, RS256, PS256");
    std::unique_ptr<BIO, freer<BIO, BIO_free_all>> bio(
        BIO_new_mem_buf(private_key_pem.data(), static_cast<int>(private_key_pem.size())));
    pkey_ptr key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
    if (!key)
        return failure("the private key is not a PEM private key");
    if (EVP_PKEY_get_base_id(key.get()) != facts->key_type)
        return failure("the private key does not suit " + algorithm);
    if (!facts->curve.empty()) {
        char group[64] = {};
        if (EVP_PKEY_get_group_name(key.get(), group, sizeof group, nullptr) != 1 || group != facts->curve)
            return failure("the private key's curve does not suit " + algorithm);
    }

    auto jti = random_url_token(16);
    if (!jti)
        return jti.error();
    auto const issued = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    boost::json::object header{{"alg", algorithm}, {"typ", "JWT"}};
    boost::json::object claims{{"iss", client_id}, {"sub", client_id},    {"aud", audience},
                               {"iat", issued},    {"exp", issued + 300}, {"jti", *jti}};
    auto const signing_input =
        base64url(jsonrpc::to_json_text(header)) + "." + base64url(jsonrpc::to_json_text(claims));

    md_ctx_ptr ctx(EVP_MD_CTX_new());
    EVP_PKEY_CTX* pctx = nullptr;
    if (!ctx || EVP_DigestSignInit(ctx.get(), &pctx, facts->digest, nullptr, key.get()) != 1)
        return failure("OpenSSL cannot start the signature");
    if (facts->pss && (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
                       EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) != 1))
        return failure("OpenSSL cannot set PSS padding");
    auto const* data = reinterpret_cast<unsigned char const*>(signing_input.data());
    std::size_t size = 0;
    if (EVP_DigestSign(ctx.get(), nullptr, &size, data, signing_input.size()) != 1)
        return failure("OpenSSL cannot size the signature");
    std::vector<unsigned char> signature(size);
    if (EVP_DigestSign(ctx.get(), signature.data(), &size, data, signing_input.size()) != 1)
        return failure("OpenSSL refused to sign");
    signature.resize(size);
    std::string jose;
    if (facts->ec_half != 0) {
        auto raw = jose_ecdsa(signature, facts->ec_half);
        if (!raw)
            return raw.error();
        jose = std::move(*raw);
    } else {
        jose.assign(signature.begin(), signature.end());
    }
    return signing_input + "." + base64url(jose);
}

} // namespace duet::auth::detail
