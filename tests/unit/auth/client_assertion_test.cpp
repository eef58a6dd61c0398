// A client's proof of identity for private_key_jwt: a JWT whose header names the algorithm, whose claims
// name the client (iss, sub), the authorization server (aud), a short lifetime and a unique jti, signed with
// the client's key. Each assertion is verified here with OpenSSL against the public half of a key made for
// the test, the ECDSA signature turned back from JOSE's r||s into DER first.
//
// Requirement tags: RFC 7523 §3 (iss, sub, aud, exp, jti; iat) and §2.2 (client authentication)
// https://www.rfc-editor.org/rfc/rfc7523#section-3; RFC 7515 §5.1 (signing input, base64url parts) and
// RFC 7519 §5.1 (typ "JWT"); RFC 7518 §3.1 (ES256, ES384, RS256, PS256), §3.4 (ECDSA signature as r||s of
// the curve's size, P-256 for ES256 and P-384 for ES384) and §3.5 (PSS with a salt the digest's size)
// https://www.rfc-editor.org/rfc/rfc7518#section-3.
#include <duet/protocol/base64.hpp>

#include "auth/client_assertion.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <chrono>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace {

using duet::auth::detail::sign_client_assertion;
namespace json = boost::json;

struct pkey_free {
    void operator()(EVP_PKEY* p) const noexcept { EVP_PKEY_free(p); }
};
using test_key = std::unique_ptr<EVP_PKEY, pkey_free>;

struct key_pair {
    test_key key;
    std::string private_pem;     ///< PKCS#8
    std::string traditional_pem; ///< SEC1 / PKCS#1
    std::string public_pem;
};

std::string pem_of(EVP_PKEY* key, int (*write)(BIO*, EVP_PKEY*)) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
    if (!bio || write(bio.get(), key) != 1)
        return {};
    char* data = nullptr;
    auto const size = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(size));
}

int write_pkcs8(BIO* bio, EVP_PKEY* key) {
    return PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
}
int write_traditional(BIO* bio, EVP_PKEY* key) {
    return PEM_write_bio_PrivateKey_traditional(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
}
int write_public(BIO* bio, EVP_PKEY* key) {
    return PEM_write_bio_PUBKEY(bio, key);
}

key_pair make_pair(test_key key) {
    key_pair k;
    if (!key)
        return k;
    k.private_pem = pem_of(key.get(), write_pkcs8);
    k.traditional_pem = pem_of(key.get(), write_traditional);
    k.public_pem = pem_of(key.get(), write_public);
    k.key = std::move(key);
    return k;
}

// Made once per run: RSA key generation is the slow part of this file.
key_pair const& p256() {
    static key_pair const k = make_pair(test_key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")));
    return k;
}
key_pair const& p384() {
    static key_pair const k = make_pair(test_key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-384")));
    return k;
}
key_pair const& rsa2048() {
    static key_pair const k =
        make_pair(test_key(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(2048))));
    return k;
}

std::optional<std::string> from_base64url(std::string text) {
    if (text.find_first_of("+/=") != std::string::npos)
        return std::nullopt; // base64url without padding, nothing else
    for (auto& c : text)
        c = c == '-' ? '+' : c == '_' ? '/' : c;
    while (text.size() % 4 != 0)
        text += '=';
    return duet::protocol::base64_decode(text);
}

struct jwt_parts {
    std::string signing_input;
    json::object header;
    json::object claims;
    std::string signature;
};

std::optional<jwt_parts> split_jwt(std::string const& jwt) {
    auto const first = jwt.find('.');
    auto const second = jwt.find('.', first == std::string::npos ? first : first + 1);
    if (first == std::string::npos || second == std::string::npos ||
        jwt.find('.', second + 1) != std::string::npos)
        return std::nullopt;
    auto header = from_base64url(jwt.substr(0, first));
    auto claims = from_base64url(jwt.substr(first + 1, second - first - 1));
    auto signature = from_base64url(jwt.substr(second + 1));
    if (!header || !claims || !signature)
        return std::nullopt;
    boost::system::error_code ec;
    auto h = json::parse(*header, ec);
    if (ec || !h.is_object())
        return std::nullopt;
    auto c = json::parse(*claims, ec);
    if (ec || !c.is_object())
        return std::nullopt;
    return jwt_parts{jwt.substr(0, second), h.get_object(), c.get_object(), *signature};
}

// RFC 7518 §3.4: r||s, each `half` bytes, back into the DER OpenSSL verifies.
std::optional<std::string> jose_to_der(std::string const& jose, std::size_t half) {
    if (jose.size() != 2 * half)
        return std::nullopt;
    auto const* raw = reinterpret_cast<unsigned char const*>(jose.data());
    std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> sig(ECDSA_SIG_new(), &ECDSA_SIG_free);
    BIGNUM* r = BN_bin2bn(raw, static_cast<int>(half), nullptr);
    BIGNUM* s = BN_bin2bn(raw + half, static_cast<int>(half), nullptr);
    if (!sig || !r || !s || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
        BN_free(r);
        BN_free(s);
        return std::nullopt;
    }
    unsigned char* der = nullptr;
    int const size = i2d_ECDSA_SIG(sig.get(), &der);
    if (size <= 0)
        return std::nullopt;
    std::string out(reinterpret_cast<char*>(der), static_cast<std::size_t>(size));
    OPENSSL_free(der);
    return out;
}

struct signing_case {
    std::string name;
    std::string algorithm;
    key_pair const& (*key)();
    EVP_MD const* (*digest)();
    std::size_t ec_half; ///< 0: RSA
    bool pss;

    friend void PrintTo(signing_case const& row, std::ostream* os) { *os << row.name; }
};

// Whether `signature` over `input` verifies with the public key given as PEM (so only the public half is
// used).
bool verifies(signing_case const& row, std::string const& input, std::string const& signature) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(row.key().public_pem.data(), static_cast<int>(row.key().public_pem.size())),
        &BIO_free);
    test_key pub(bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr) : nullptr);
    if (!pub)
        return false;
    std::string sig = signature;
    if (row.ec_half != 0) {
        auto der = jose_to_der(signature, row.ec_half);
        if (!der)
            return false;
        sig = *der;
    }
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    EVP_PKEY_CTX* pctx = nullptr;
    if (!ctx || EVP_DigestVerifyInit(ctx.get(), &pctx, row.digest(), nullptr, pub.get()) != 1)
        return false;
    if (row.pss && (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
                    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) != 1))
        return false;
    return EVP_DigestVerify(ctx.get(), reinterpret_cast<unsigned char const*>(sig.data()), sig.size(),
                            reinterpret_cast<unsigned char const*>(input.data()), input.size()) == 1;
}

auto const signed_at = std::chrono::system_clock::time_point(std::chrono::seconds(1'750'000'000));

class ClientAssertionSigns : public ::testing::TestWithParam<signing_case> {};

TEST_P(ClientAssertionSigns, AVerifiableJwtNamingClientAndServer) {
    auto const& row = GetParam();
    ASSERT_FALSE(row.key().private_pem.empty()) << "OpenSSL made no key";
    auto const jwt = sign_client_assertion(row.key().private_pem, row.algorithm, "client-7",
                                           "https://auth.example", signed_at);
    ASSERT_TRUE(jwt.has_value()) << jwt.error().message;
    auto const parts = split_jwt(*jwt);
    ASSERT_TRUE(parts.has_value()) << *jwt;

    EXPECT_EQ(parts->header.at("alg"), row.algorithm.c_str());
    EXPECT_EQ(parts->header.at("typ"), "JWT");
    EXPECT_EQ(parts->claims.at("iss"), "client-7");
    EXPECT_EQ(parts->claims.at("sub"), "client-7");
    EXPECT_EQ(parts->claims.at("aud"), "https://auth.example");
    ASSERT_TRUE(parts->claims.at("iat").is_int64());
    ASSERT_TRUE(parts->claims.at("exp").is_int64());
    auto const iat = parts->claims.at("iat").as_int64();
    auto const exp = parts->claims.at("exp").as_int64();
    EXPECT_EQ(iat, 1'750'000'000);
    EXPECT_GT(exp, iat);
    EXPECT_LE(exp - iat, 600) << "a client assertion should be short-lived";
    ASSERT_TRUE(parts->claims.at("jti").is_string());
    EXPECT_GE(parts->claims.at("jti").as_string().size(), 16u);

    if (row.ec_half != 0) {
        EXPECT_EQ(parts->signature.size(), 2 * row.ec_half);
    }
    EXPECT_TRUE(verifies(row, parts->signing_input, parts->signature));
    // The check is real: a changed claim does not verify.
    auto tampered = parts->signing_input;
    tampered.back() = tampered.back() == 'A' ? 'B' : 'A';
    EXPECT_FALSE(verifies(row, tampered, parts->signature));
}

TEST_P(ClientAssertionSigns, EachAssertionHasItsOwnJti) {
    auto const& row = GetParam();
    auto const a = sign_client_assertion(row.key().private_pem, row.algorithm, "c", "https://as", signed_at);
    auto const b = sign_client_assertion(row.key().private_pem, row.algorithm, "c", "https://as", signed_at);
    ASSERT_TRUE(a.has_value() && b.has_value());
    auto const pa = split_jwt(*a);
    auto const pb = split_jwt(*b);
    ASSERT_TRUE(pa && pb);
    EXPECT_NE(pa->claims.at("jti"), pb->claims.at("jti"));
}

INSTANTIATE_TEST_SUITE_P(ClientAssertion, ClientAssertionSigns,
                         ::testing::Values(signing_case{"ES256", "ES256", p256, EVP_sha256, 32, false},
                                           signing_case{"ES384", "ES384", p384, EVP_sha384, 48, false},
                                           signing_case{"RS256", "RS256", rsa2048, EVP_sha256, 0, false},
                                           signing_case{"PS256", "PS256", rsa2048, EVP_sha256, 0, true}),
                         [](auto const& row) { return row.param.name; });

// "PKCS#8 or traditional": the SEC1 form of an EC key signs the same way.
TEST(ClientAssertion, SignsWithATraditionalPemKey) {
    ASSERT_NE(p256().traditional_pem.find("BEGIN EC PRIVATE KEY"), std::string::npos)
        << p256().traditional_pem;
    auto const jwt = sign_client_assertion(p256().traditional_pem, "ES256", "c", "https://as", signed_at);
    ASSERT_TRUE(jwt.has_value()) << jwt.error().message;
    auto const parts = split_jwt(*jwt);
    ASSERT_TRUE(parts.has_value());
    EXPECT_TRUE(verifies(signing_case{"ES256", "ES256", p256, EVP_sha256, 32, false}, parts->signing_input,
                         parts->signature));
}

// ---------------------------------------------------------------------------------------------------------------
// What cannot be signed: an unknown algorithm, a key of another kind or curve, no private key.

struct refusal_case {
    std::string name;
    std::string algorithm;
    std::string (*pem)();
    std::string named;

    friend void PrintTo(refusal_case const& row, std::ostream* os) { *os << row.name; }
};

class ClientAssertionRefuses : public ::testing::TestWithParam<refusal_case> {};

TEST_P(ClientAssertionRefuses, GivesAUsageError) {
    auto const& row = GetParam();
    auto const pem = row.pem();
    auto const jwt = sign_client_assertion(pem, row.algorithm, "c", "https://as", signed_at);
    ASSERT_FALSE(jwt.has_value()) << *jwt;
    EXPECT_EQ(jwt.error().code, duet::client::errc::usage);
    EXPECT_TRUE(jwt.error().message.starts_with("cannot sign the client assertion: ")) << jwt.error().message;
    EXPECT_NE(jwt.error().message.find(row.named), std::string::npos) << jwt.error().message;
}

std::string p256_pem() {
    return p256().private_pem;
}
std::string p384_pem() {
    return p384().private_pem;
}
std::string rsa_pem() {
    return rsa2048().private_pem;
}
std::string p256_public_pem() {
    return p256().public_pem;
}
std::string not_pem() {
    return "not a key at all";
}
std::string empty_pem() {
    return {};
}
std::string truncated_pem() {
    return p256().private_pem.substr(0, p256().private_pem.size() / 2);
}

using RF = refusal_case;

INSTANTIATE_TEST_SUITE_P(
    ClientAssertion, ClientAssertionRefuses,
    ::testing::Values(RF{"UnknownAlgorithm", "HS256", p256_pem, "HS256 is not one of"},
                      RF{"NoneAlgorithm", "none", p256_pem, "none is not one of"},
                      RF{"LowerCaseAlgorithm", "es256", p256_pem, "es256 is not one of"},
                      RF{"RsaKeyForES256", "ES256", rsa_pem, "does not suit ES256"},
                      RF{"EcKeyForRS256", "RS256", p256_pem, "does not suit RS256"},
                      RF{"EcKeyForPS256", "PS256", p256_pem, "does not suit PS256"},
                      RF{"P384KeyForES256", "ES256", p384_pem, "curve does not suit ES256"},
                      RF{"P256KeyForES384", "ES384", p256_pem, "curve does not suit ES384"},
                      RF{"NotPem", "ES256", not_pem, "not a PEM private key"},
                      RF{"EmptyPem", "ES256", empty_pem, "not a PEM private key"},
                      RF{"TruncatedPem", "ES256", truncated_pem, "not a PEM private key"},
                      RF{"PublicKeyOnly", "ES256", p256_public_pem, "not a PEM private key"}),
    [](auto const& row) { return row.param.name; });

} // namespace
