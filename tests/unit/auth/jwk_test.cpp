// Reading an authorization server's JWK Set: each public signature key of kty RSA, EC (P-256, P-384) or OKP
// (Ed25519) becomes usable; any other key is skipped with its reason while the rest of the set still serves;
// a document that is no JWK Set is an error.
//
// Requirement tags: RFC 7517 §5 (the keys member), §4.1 (kty), §4.2 (use), §4.3 (key_ops), §4.4 (alg), §4.5
// (kid) https://www.rfc-editor.org/rfc/rfc7517; RFC 7518 §6.2.1 (EC public keys: crv, x, y of the full
// coordinate size), §6.3.1 (RSA public keys: n, e), §3.3 (RSA at least 2048 bits)
// https://www.rfc-editor.org/rfc/rfc7518#section-6; RFC 8037 §2 (OKP keys, Ed25519's 32-byte x); RFC 7515 §2
// (base64url without padding).
#include <duet/auth/access_token.hpp>

#include "unit/auth/jose_minting.hpp"

#include <boost/json/array.hpp>
#include <boost/json/string.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>

namespace jwk_suite {

using namespace jose_minting;
using duet::auth::parse_jwk_set;
using duet::auth::read_jwk_set;

EVP_PKEY* rsa1024_key() {
    static owned_pkey const k(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(1024)));
    return k.get();
}

TEST(Jwk, ReadsEachKeyTypeWithItsKidAndAlg) {
    auto const set =
        read_jwk_set(jwks_of({public_jwk(rsa_key(), "rsa-1", "RS256"), public_jwk(p256_key(), "ec-1"),
                              public_jwk(p384_key(), "ec-2", "ES384"), public_jwk(ed25519_key(), "")}));
    ASSERT_TRUE(set.has_value()) << set.error().description;
    ASSERT_EQ(set->size(), 4u);
    EXPECT_TRUE(set->skipped().empty());
    auto const& keys = set->keys();
    EXPECT_EQ(keys[0].kid, "rsa-1");
    EXPECT_EQ(keys[0].kty, "RSA");
    EXPECT_EQ(keys[0].crv, "");
    EXPECT_EQ(keys[0].alg, "RS256");
    EXPECT_EQ(keys[1].kty, "EC");
    EXPECT_EQ(keys[1].crv, "P-256");
    EXPECT_EQ(keys[1].alg, "");
    EXPECT_EQ(keys[2].crv, "P-384");
    EXPECT_EQ(keys[2].alg, "ES384");
    EXPECT_EQ(keys[3].kid, "");
    EXPECT_EQ(keys[3].kty, "OKP");
    EXPECT_EQ(keys[3].crv, "Ed25519");
    EXPECT_TRUE(set->contains("ec-2"));
    EXPECT_FALSE(set->contains("ec-3"));
}

TEST(Jwk, ReadsAKeyMarkedForSignaturesAndVerification) {
    auto jwk = public_jwk(p256_key(), "ec-1");
    jwk["use"] = "sig";
    jwk["key_ops"] = json::array{"verify"};
    jwk["x5t#S256"] = "ignored"; // members the reader does not use are left alone (RFC 7517 §4)
    auto const set = read_jwk_set(jwks_of({jwk}));
    ASSERT_TRUE(set.has_value());
    EXPECT_EQ(set->size(), 1u);
    EXPECT_TRUE(set->skipped().empty());
}

TEST(Jwk, ParsesTheDocumentsText) {
    auto const text = duet::jsonrpc::to_json_text(jwks_of({public_jwk(ed25519_key(), "ed-1")}));
    auto const set = parse_jwk_set(text);
    ASSERT_TRUE(set.has_value()) << set.error().description;
    EXPECT_TRUE(set->contains("ed-1"));
}

TEST(Jwk, AnEmptyKeysArrayIsAnEmptySet) {
    auto const set = parse_jwk_set(R"({"keys":[]})");
    ASSERT_TRUE(set.has_value());
    EXPECT_TRUE(set->empty());
    EXPECT_TRUE(duet::auth::jwk_set().empty());
}

// ---------------------------------------------------------------------------------------------------------------
// RFC 7517 §5: a document that is no JWK Set at all.

struct document_case {
    std::string name;
    std::string text;
    std::string description;

    friend void PrintTo(document_case const& row, std::ostream* os) { *os << row.name; }
};

class JwkDocumentRefused : public ::testing::TestWithParam<document_case> {};

TEST_P(JwkDocumentRefused, IsAnError) {
    auto const set = parse_jwk_set(GetParam().text);
    ASSERT_FALSE(set.has_value());
    EXPECT_TRUE(set.error().description.starts_with(GetParam().description)) << set.error().description;
}

using DC = document_case;

INSTANTIATE_TEST_SUITE_P(
    Jwk, JwkDocumentRefused,
    ::testing::Values(DC{"NotJson", "keys: []", "the JWK Set is not JSON: "},
                      DC{"Empty", "", "the JWK Set is not JSON: "},
                      DC{"AnArray", R"([{"kty":"RSA"}])", "the JWK Set is not a JSON object"},
                      DC{"AString", R"("keys")", "the JWK Set is not a JSON object"},
                      DC{"NoKeys", R"({"key":[]})", "the JWK Set has no keys member"},
                      DC{"KeysAnObject", R"({"keys":{"kty":"RSA"}})", "the JWK Set's keys is not an array"}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// Keys that are skipped, each beside a good key that still serves.

struct skipped_case {
    std::string name;
    std::function<json::value()> key;
    std::string kid; ///< as the skipped entry reports it
    std::string reason;

    friend void PrintTo(skipped_case const& row, std::ostream* os) { *os << row.name; }
};

class JwkKeySkipped : public ::testing::TestWithParam<skipped_case> {};

TEST_P(JwkKeySkipped, WithItsReasonWhileTheOthersServe) {
    json::array keys{GetParam().key(), public_jwk(ed25519_key(), "good")};
    auto const set = read_jwk_set(json::object{{"keys", keys}});
    ASSERT_TRUE(set.has_value()) << set.error().description;
    ASSERT_EQ(set->size(), 1u);
    EXPECT_EQ(set->keys()[0].kid, "good");
    ASSERT_EQ(set->skipped().size(), 1u);
    EXPECT_EQ(set->skipped()[0].index, 0u);
    EXPECT_EQ(set->skipped()[0].kid, GetParam().kid);
    EXPECT_EQ(set->skipped()[0].reason, GetParam().reason);
    EXPECT_FALSE(set->contains(GetParam().kid));
}

json::value changed(json::object jwk, std::string const& member, json::value value) {
    jwk[member] = std::move(value);
    return jwk;
}
json::value without(json::object jwk, std::string const& member) {
    jwk.erase(member);
    return jwk;
}

// The P-256 key's y with its last bit flipped: a point off the curve.
json::value off_curve() {
    auto jwk = public_jwk(p256_key(), "bent");
    auto y = bn_param(p256_key(), OSSL_PKEY_PARAM_EC_PUB_Y, 32);
    y.back() = static_cast<char>(y.back() ^ 1);
    jwk["y"] = duet::auth::base64url(y);
    return jwk;
}

using SC = skipped_case;

INSTANTIATE_TEST_SUITE_P(
    Jwk, JwkKeySkipped,
    ::testing::Values(
        SC{"EncryptionKey", [] { return changed(public_jwk(rsa_key(), "enc-1"), "use", "enc"); }, "enc-1",
           "its use is \"enc\", not \"sig\""},
        SC{"KeyOpsWithoutVerify",
           [] { return changed(public_jwk(rsa_key(), "wrap"), "key_ops", json::array{"wrapKey"}); }, "wrap",
           "its key_ops do not include \"verify\""},
        SC{"SymmetricKey",
           [] {
               return json::value(json::object{{"kty", "oct"}, {"kid", "hmac"}, {"k", "c2VjcmV0"}});
           },
           "hmac", "kty oct is a shared secret, which a public key set never holds"},
        SC{"UnknownKty",
           [] {
               return json::value(json::object{{"kty", "DSA"}, {"kid", "old"}});
           },
           "old", "its kty \"DSA\" is not RSA, EC or OKP"},
        SC{"MissingKty", [] { return without(public_jwk(rsa_key(), "r"), "kty"); }, "r", "it has no kty"},
        SC{"NotAnObject", [] { return json::value("a key"); }, "", "it is not a JSON object"},
        SC{"KidNotAString", [] { return changed(public_jwk(rsa_key(), ""), "kid", 7); }, "",
           "its kid is not a string"},
        SC{"CurveP521", [] { return changed(public_jwk(p256_key(), "p521"), "crv", "P-521"); }, "p521",
           "its curve \"P-521\" is not P-256 or P-384"},
        SC{"CurveEd448", [] { return changed(public_jwk(ed25519_key(), "ed448"), "crv", "Ed448"); }, "ed448",
           "its curve \"Ed448\" is not Ed25519"},
        SC{"RsaWithoutN", [] { return without(public_jwk(rsa_key(), "r"), "n"); }, "r", "it has no n"},
        SC{"RsaNNotAString", [] { return changed(public_jwk(rsa_key(), "r"), "n", 65537); }, "r",
           "its n is not a string"},
        SC{"RsaNNotBase64url", [] { return changed(public_jwk(rsa_key(), "r"), "n", "not base64url!"); }, "r",
           "its n is not base64url: byte 0x20 at offset 3 is not base64url"},
        SC{"RsaEPadded", [] { return changed(public_jwk(rsa_key(), "r"), "e", "AQAB===="); }, "r",
           "its e is not base64url: '=' at offset 4 is not base64url (a JWT's parts carry no padding)"},
        SC{"Rsa1024Bits", [] { return public_jwk(rsa1024_key(), "short"); }, "short",
           "its modulus is 1024 bits, under the 2048 RFC 7518 §3.3 requires"},
        SC{"RsaEvenModulus",
           [] {
               auto n = bn_param(rsa_key(), OSSL_PKEY_PARAM_RSA_N);
               n.back() = static_cast<char>(n.back() & ~1);
               return changed(public_jwk(rsa_key(), "even"), "n", json::string(duet::auth::base64url(n)));
           },
           "even", "OpenSSL finds it no valid public key"},
        SC{"EcPointOffTheCurve", off_curve, "bent", "its point is not on the curve"},
        SC{"EcShortX",
           [] {
               return changed(public_jwk(p256_key(), "short"), "x",
                              json::string(duet::auth::base64url(std::string(31, '\1'))));
           },
           "short", "its x is 31 bytes, not 32"},
        SC{"EcWithoutY", [] { return without(public_jwk(p256_key(), "e"), "y"); }, "e", "it has no y"},
        SC{"Ed25519ShortX",
           [] {
               return changed(public_jwk(ed25519_key(), "ed"), "x",
                              json::string(duet::auth::base64url(std::string(31, '\1'))));
           },
           "ed", "its x is 31 bytes, not 32"},
        SC{"PublishedPrivateKey", [] { return changed(public_jwk(p256_key(), "leak"), "d", "AAAA"); }, "leak",
           "it carries the private member d; a key set publishes public keys"},
        SC{"AlgOfAnotherKeyType", [] { return public_jwk(rsa_key(), "mixed", "ES256"); }, "mixed",
           "its alg \"ES256\" does not suit a key of kty RSA"},
        SC{"AlgOfAnotherCurve", [] { return public_jwk(p384_key(), "p384", "ES256"); }, "p384",
           "its alg \"ES256\" does not suit a key of kty EC and crv P-384"},
        SC{"AlgHS256OnAnRsaKey", [] { return public_jwk(rsa_key(), "hs", "HS256"); }, "hs",
           "its alg \"HS256\" does not suit a key of kty RSA"}),
    [](auto const& row) { return row.param.name; });

TEST(Jwk, CopiesShareTheKeys) {
    auto const set = read_jwk_set(jwks_of({public_jwk(p256_key(), "ec-1")}));
    ASSERT_TRUE(set.has_value());
    duet::auth::jwk_set const copy = *set;
    EXPECT_EQ(&copy.keys(), &set->keys());
}

TEST(Jwk, AMovedFromSetIsEmpty) {
    auto set = read_jwk_set(jwks_of({public_jwk(p256_key(), "ec-1")}));
    ASSERT_TRUE(set.has_value());
    auto const taken = std::move(*set);
    EXPECT_EQ(taken.size(), 1u);
    EXPECT_TRUE(set->empty()); // NOLINT(bugprone-use-after-move): what this test checks
    EXPECT_TRUE(set->skipped().empty());
    EXPECT_FALSE(set->contains("ec-1"));
}

} // namespace jwk_suite
