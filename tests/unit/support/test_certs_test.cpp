// Tests for tests/support/test_certs.hpp: the PKI the TLS tests make at run time. Each certificate is judged
// by OpenSSL's own verification (X509_verify_cert against the CA file, for a host or an address and a
// purpose), the verdict a TLS peer built on OpenSSL would reach: a leaf verifies for the names it carries and
// fails for others, an expired or not yet valid one fails as such, a self-signed one or another PKI's fails
// against this CA, a leaf through the intermediate verifies with the chain its file holds. Also what
// verification does not look at: the key file matches its certificate and is private, serials differ, the
// keys are P-256. (Helper names are distinctive: the suite is compiled eight files to a unit, sharing one
// anonymous namespace.)
#include "support/openssl_handles.hpp"
#include "support/test_certs.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

namespace {

namespace fs = std::filesystem;
namespace ossl = duet::test::openssl;
using duet::test::cert_files;
using duet::test::temp_dir;
using duet::test::test_pki;

// What to verify a certificate for.
struct cert_check {
    int purpose = X509_PURPOSE_SSL_SERVER;
    std::string host;  // checked when not empty, as a TLS client checks the server it dialled
    std::string ip;    // likewise
    bool chain = true; // the further certificates of the cert file offered as untrusted intermediates
};

struct cert_verdict {
    int error = X509_V_OK;
    int chain_length = 0; // of the chain built, when verified
};

// OpenSSL's verdict on the first certificate of `cert_file`, trusting only the certificates in `ca_file`.
cert_verdict verify_cert_file(std::string const& ca_file, std::string const& cert_file,
                              cert_check const& c = {}) {
    auto certs = ossl::read_certs(cert_file);
    ossl::x509_stack untrusted(sk_X509_new_null());
    if (!untrusted)
        throw ossl::error("sk_X509_new_null");
    for (std::size_t i = 1; c.chain && i < certs.size(); ++i) {
        if (sk_X509_push(untrusted.get(), certs[i].get()) == 0)
            throw ossl::error("sk_X509_push");
        certs[i].release(); // the stack owns it now
    }
    ossl::x509_store store(X509_STORE_new());
    if (!store || X509_STORE_load_file(store.get(), ca_file.c_str()) != 1)
        throw ossl::error("loading " + ca_file);
    ossl::x509_store_ctx ctx(X509_STORE_CTX_new());
    if (!ctx || X509_STORE_CTX_init(ctx.get(), store.get(), certs[0].get(), untrusted.get()) != 1 ||
        X509_STORE_CTX_set_purpose(ctx.get(), c.purpose) != 1)
        throw ossl::error("setting up verification");
    X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx.get());
    if (!c.host.empty() && X509_VERIFY_PARAM_set1_host(param, c.host.c_str(), 0) != 1)
        throw ossl::error("X509_VERIFY_PARAM_set1_host " + c.host);
    if (!c.ip.empty() && X509_VERIFY_PARAM_set1_ip_asc(param, c.ip.c_str()) != 1)
        throw ossl::error("X509_VERIFY_PARAM_set1_ip_asc " + c.ip);
    cert_verdict v;
    if (X509_verify_cert(ctx.get()) == 1)
        v.chain_length = sk_X509_num(X509_STORE_CTX_get0_chain(ctx.get()));
    else
        v.error = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error(); // a refusal may queue errors; they are not this test's
    return v;
}

// For a failed expectation on a verdict: OpenSSL's words, not only its number.
std::string verify_reason(cert_verdict const& v) {
    return std::to_string(v.error) + " (" + X509_verify_cert_error_string(v.error) + ")";
}

ossl::x509 first_cert_of(std::string const& cert_file) {
    return std::move(ossl::read_certs(cert_file).front());
}

// A fresh directory and a PKI in it, per test.
struct pki_in_temp_dir {
    temp_dir tmp;
    test_pki pki{tmp.path()};
};

TEST(TestPki, CaFileHoldsASelfSignedP256RootThatMaySignCertificates) {
    pki_in_temp_dir t;
    EXPECT_EQ(t.pki.ca_file(), (t.tmp.path() / "Duet Test CA.crt").string());
    auto certs = ossl::read_certs(t.pki.ca_file());
    ASSERT_EQ(certs.size(), 1u);
    X509* ca = certs[0].get();

    EXPECT_EQ(X509_get_version(ca), X509_VERSION_3);
    EXPECT_EQ(X509_self_signed(ca, 1), 1); // its own issuer, and its signature checks with its own key
    EXPECT_EQ(X509_check_ca(ca), 1);       // basicConstraints CA:TRUE
    EXPECT_TRUE(X509_get_key_usage(ca) & KU_KEY_CERT_SIGN);
    char cn[64] = {};
    X509_NAME_get_text_by_NID(X509_get_subject_name(ca), NID_commonName, cn, sizeof cn);
    EXPECT_STREQ(cn, "Duet Test CA");
    EXPECT_EQ(X509_get_signature_nid(ca), NID_ecdsa_with_SHA256);
    EVP_PKEY* key = X509_get0_pubkey(ca);
    ASSERT_NE(key, nullptr);
    EXPECT_EQ(EVP_PKEY_get_base_id(key), EVP_PKEY_EC);
    EXPECT_EQ(EVP_PKEY_get_bits(key), 256);
    EXPECT_NE(X509_get0_subject_key_id(ca), nullptr);

    auto ca_key = ossl::read_key((t.tmp.path() / "Duet Test CA.key").string());
    EXPECT_EQ(X509_check_private_key(ca, ca_key.get()), 1);
}

TEST(TestPki, IssuedLeafVerifiesForItsHostAgainstTheCa) {
    pki_in_temp_dir t;
    auto leaf = t.pki.issue({.name = "server", .dns = {"localhost", "duet.test"}});
    for (auto host : {"localhost", "duet.test"}) {
        auto v = verify_cert_file(t.pki.ca_file(), leaf.cert, {.host = host});
        EXPECT_EQ(v.error, X509_V_OK) << host << ": " << verify_reason(v);
        EXPECT_EQ(v.chain_length, 2) << host; // the leaf, then the root
    }
}

TEST(TestPki, IssuedLeafVerifiesForEachOfItsIpAddresses) {
    pki_in_temp_dir t;
    auto leaf = t.pki.issue({.name = "server", .ips = {"127.0.0.1", "::1"}});
    for (auto ip : {"127.0.0.1", "::1", "0:0:0:0:0:0:0:1"}) {
        auto v = verify_cert_file(t.pki.ca_file(), leaf.cert, {.ip = ip});
        EXPECT_EQ(v.error, X509_V_OK) << ip << ": " << verify_reason(v);
    }
}

TEST(TestPki, IssuedLeafFailsForANameOrAddressItDoesNotCarry) {
    pki_in_temp_dir t;
    auto leaf = t.pki.issue({.name = "server", .dns = {"localhost"}, .ips = {"127.0.0.1"}});
    auto by_host = verify_cert_file(t.pki.ca_file(), leaf.cert, {.host = "example.com"});
    EXPECT_EQ(by_host.error, X509_V_ERR_HOSTNAME_MISMATCH) << verify_reason(by_host);
    auto by_ip = verify_cert_file(t.pki.ca_file(), leaf.cert, {.ip = "127.0.0.2"});
    EXPECT_EQ(by_ip.error, X509_V_ERR_IP_ADDRESS_MISMATCH) << verify_reason(by_ip);
    // The subject CN ("server") is not a host name the leaf vouches for once it carries DNS names.
    auto by_cn = verify_cert_file(t.pki.ca_file(), leaf.cert, {.host = "server"});
    EXPECT_EQ(by_cn.error, X509_V_ERR_HOSTNAME_MISMATCH) << verify_reason(by_cn);
}

TEST(TestPki, ExpiredLeafFailsAsExpired) {
    pki_in_temp_dir t;
    auto leaf = t.pki.issue({.name = "expired",
                             .dns = {"localhost"},
                             .not_before = -std::chrono::hours(48),
                             .not_after = -std::chrono::hours(1)});
    auto v = verify_cert_file(t.pki.ca_file(), leaf.cert, {.host = "localhost"});
    EXPECT_EQ(v.error, X509_V_ERR_CERT_HAS_EXPIRED) << verify_reason(v);
}

TEST(TestPki, NotYetValidLeafFailsAsNotYetValid) {
    pki_in_temp_dir t;
    auto leaf = t.pki.issue({.name = "future",
                             .dns = {"localhost"},
                             .not_before = std::chrono::hours(1),
                             .not_after = std::chrono::hours(48)});
    auto v = verify_cert_file(t.pki.ca_file(), leaf.cert, {.host = "localhost"});
    EXPECT_EQ(v.error, X509_V_ERR_CERT_NOT_YET_VALID) << verify_reason(v);
}

TEST(TestPki, SelfSignedCertFailsAgainstTheCa) {
    pki_in_temp_dir t;
    auto own = t.pki.self_signed({.name = "rogue", .dns = {"localhost"}});
    auto cert = first_cert_of(own.cert);
    EXPECT_EQ(X509_self_signed(cert.get(), 1), 1);
    auto v = verify_cert_file(t.pki.ca_file(), own.cert, {.host = "localhost"});
    EXPECT_EQ(v.error, X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT) << verify_reason(v);
    // Trusted as itself, as a peer pinning it would, it verifies: only the CA's refusal is the point above.
    auto pinned = verify_cert_file(own.cert, own.cert, {.host = "localhost"});
    EXPECT_EQ(pinned.error, X509_V_OK) << verify_reason(pinned);
}

TEST(TestPki, AnotherPkisLeafFailsAgainstThisCa) {
    pki_in_temp_dir t;
    temp_dir other_dir;
    test_pki other(other_dir.path()); // same CA name: only the keys tell the two apart
    auto leaf = other.issue({.name = "server", .dns = {"localhost"}});
    EXPECT_EQ(verify_cert_file(other.ca_file(), leaf.cert, {.host = "localhost"}).error, X509_V_OK);
    auto v = verify_cert_file(t.pki.ca_file(), leaf.cert, {.host = "localhost"});
    EXPECT_EQ(v.error, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY) << verify_reason(v);
}

TEST(TestPki, LeafViaIntermediateVerifiesWithTheChainItsFileHolds) {
    pki_in_temp_dir t;
    auto leaf = t.pki.issue({.name = "server", .dns = {"localhost"}, .via_intermediate = true});
    auto certs = ossl::read_certs(leaf.cert);
    ASSERT_EQ(certs.size(), 2u); // the leaf, then the intermediate
    EXPECT_EQ(X509_check_ca(certs[1].get()), 1);
    EXPECT_EQ(X509_check_issued(certs[1].get(), certs[0].get()), X509_V_OK);

    auto with_chain = verify_cert_file(t.pki.ca_file(), leaf.cert, {.host = "localhost"});
    EXPECT_EQ(with_chain.error, X509_V_OK) << verify_reason(with_chain);
    EXPECT_EQ(with_chain.chain_length, 3);
    // Without the intermediate the root alone does not reach the leaf: the file's second certificate is
    // needed.
    auto alone = verify_cert_file(t.pki.ca_file(), leaf.cert, {.host = "localhost", .chain = false});
    EXPECT_EQ(alone.error, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY) << verify_reason(alone);
}

TEST(TestPki, KeyFileMatchesItsCertAndOnlyItsOwnerMayReadIt) {
    pki_in_temp_dir t;
    auto a = t.pki.issue({.name = "a", .dns = {"localhost"}});
    auto b = t.pki.issue({.name = "b", .dns = {"localhost"}});
    EXPECT_EQ(a.cert, (t.tmp.path() / "a.crt").string());
    EXPECT_EQ(a.key, (t.tmp.path() / "a.key").string());
    auto cert = first_cert_of(a.cert);
    EXPECT_EQ(X509_check_private_key(cert.get(), ossl::read_key(a.key).get()), 1);
    EXPECT_EQ(X509_check_private_key(cert.get(), ossl::read_key(b.key).get()), 0);
    ERR_clear_error(); // the mismatch is queued as an error

    struct stat st {};
    ASSERT_EQ(::stat(a.key.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(TestPki, ClientCertCarriesClientAuthNotServerAuth) {
    pki_in_temp_dir t;
    auto client = t.pki.issue({.name = "client", .client = true});
    auto cert = first_cert_of(client.cert);
    EXPECT_TRUE(X509_get_extended_key_usage(cert.get()) & XKU_SSL_CLIENT);
    EXPECT_FALSE(X509_get_extended_key_usage(cert.get()) & XKU_SSL_SERVER);
    auto as_client = verify_cert_file(t.pki.ca_file(), client.cert, {.purpose = X509_PURPOSE_SSL_CLIENT});
    EXPECT_EQ(as_client.error, X509_V_OK) << verify_reason(as_client);
    auto as_server = verify_cert_file(t.pki.ca_file(), client.cert, {.purpose = X509_PURPOSE_SSL_SERVER});
    EXPECT_EQ(as_server.error, X509_V_ERR_INVALID_PURPOSE) << verify_reason(as_server);
}

TEST(TestPki, ServerCertCarriesServerAuthNotClientAuth) {
    pki_in_temp_dir t;
    auto server = t.pki.issue({.name = "server", .dns = {"localhost"}});
    auto cert = first_cert_of(server.cert);
    EXPECT_TRUE(X509_get_extended_key_usage(cert.get()) & XKU_SSL_SERVER);
    EXPECT_FALSE(X509_get_extended_key_usage(cert.get()) & XKU_SSL_CLIENT);
    auto as_client = verify_cert_file(t.pki.ca_file(), server.cert, {.purpose = X509_PURPOSE_SSL_CLIENT});
    EXPECT_EQ(as_client.error, X509_V_ERR_INVALID_PURPOSE) << verify_reason(as_client);
}

TEST(TestPki, IssuedCertsHaveDifferentPositiveSerials) {
    pki_in_temp_dir t;
    std::set<std::string> serials;
    for (auto const& file :
         {t.pki.ca_file(), t.pki.issue({.name = "one"}).cert, t.pki.issue({.name = "two"}).cert}) {
        auto cert = first_cert_of(file);
        ossl::bignum serial(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert.get()), nullptr));
        ASSERT_TRUE(serial);
        EXPECT_FALSE(BN_is_negative(serial.get()));
        EXPECT_FALSE(BN_is_zero(serial.get()));
        char* hex = BN_bn2hex(serial.get());
        ASSERT_NE(hex, nullptr);
        serials.insert(hex);
        OPENSSL_free(hex);
    }
    EXPECT_EQ(serials.size(), 3u);
}

TEST(TestPki, IssuedLeafNamesItsIssuersKeyIdentifier) {
    pki_in_temp_dir t;
    auto ca = first_cert_of(t.pki.ca_file());
    auto leaf = first_cert_of(t.pki.issue({.name = "server"}).cert);
    ASSERT_NE(X509_get0_subject_key_id(leaf.get()), nullptr);
    ASSERT_NE(X509_get0_authority_key_id(leaf.get()), nullptr);
    EXPECT_EQ(
        ASN1_OCTET_STRING_cmp(X509_get0_authority_key_id(leaf.get()), X509_get0_subject_key_id(ca.get())), 0);
    EXPECT_EQ(X509_get_signature_nid(leaf.get()), NID_ecdsa_with_SHA256);
    EXPECT_EQ(X509_check_ca(leaf.get()), 0); // CA:FALSE
}

TEST(TestPki, MakesItsDirectoryWhenMissingAndNamesTheCaFiles) {
    temp_dir tmp;
    auto dir = tmp.path() / "nested" / "pki";
    test_pki pki(dir, "Other CA");
    EXPECT_EQ(pki.ca_file(), (dir / "Other CA.crt").string());
    EXPECT_TRUE(fs::exists(dir / "Other CA.key"));
    auto leaf = pki.issue({.name = "server", .dns = {"localhost"}});
    EXPECT_EQ(verify_cert_file(pki.ca_file(), leaf.cert, {.host = "localhost"}).error, X509_V_OK);
}

TEST(TestPki, RefusesAnAddressItCannotParseAndANameThatLeavesItsDirectory) {
    pki_in_temp_dir t;
    try {
        (void)t.pki.issue({.name = "server", .ips = {"localhost"}});
        ADD_FAILURE() << "an IP that is not an address was accepted";
    } catch (std::runtime_error const& e) {
        EXPECT_NE(std::string(e.what()).find("\"localhost\""), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)t.pki.issue({.name = "../server"}), std::runtime_error);
    EXPECT_THROW((void)t.pki.issue({.name = ""}), std::runtime_error);
    EXPECT_EQ(ERR_peek_error(), 0u); // the errors were reported, and not left queued
}

TEST(TempDir, IsFreshForEachInstanceAndRemovedWithWhatItHolds) {
    fs::path kept;
    {
        temp_dir a;
        temp_dir b;
        EXPECT_NE(a.path(), b.path());
        EXPECT_TRUE(fs::is_directory(a.path()));
        EXPECT_TRUE(fs::is_empty(a.path()));
        fs::create_directories(a.path() / "sub");
        std::ofstream(a.path() / "sub" / "file") << "x";
        kept = a.path();
    }
    EXPECT_FALSE(fs::exists(kept));
}

TEST(TempDir, LivesUnderTmpdir) {
    temp_dir outer;
    char const* before = std::getenv("TMPDIR");
    std::optional<std::string> saved = before ? std::optional<std::string>(before) : std::nullopt;
    ::setenv("TMPDIR", outer.path().c_str(), 1);
    std::optional<fs::path> parent;
    {
        temp_dir inner;
        parent = inner.path().parent_path();
    }
    if (saved)
        ::setenv("TMPDIR", saved->c_str(), 1);
    else
        ::unsetenv("TMPDIR");
    EXPECT_EQ(parent, outer.path());
}

} // namespace
