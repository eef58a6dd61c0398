#include "support/test_certs.hpp"

#include "support/openssl_handles.hpp"

#include <fcntl.h>
#include <openssl/ec.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <utility>

namespace duet::test {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// What a certificate is for: its basicConstraints, keyUsage and extendedKeyUsage.
enum class role { ca, intermediate_ca, server, client };

[[nodiscard]] std::system_error os_error(std::string const& what) {
    return std::system_error(errno, std::generic_category(), what);
}

// A name becomes a file stem: one path component, nothing that leaves the PKI's directory.
void check_name(std::string const& name) {
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
        name.find('\0') != std::string::npos)
        throw std::runtime_error("test_pki: \"" + name + "\" cannot name a certificate's files");
}

[[nodiscard]] openssl::pkey new_key() {
    openssl::pkey key(EVP_EC_gen("P-256"));
    if (!key)
        throw openssl::error("test_pki: generating an EC P-256 key");
    return key;
}

// 159 random bits: positive as RFC 5280 requires, within its 20 octets, and unlike any other serial the tests
// will see, which a counter would not be across runs (a peer may cache what it saw by issuer and serial). The
// second-highest bit is set so that the serial always has its full length.
[[nodiscard]] openssl::asn1_integer random_serial() {
    unsigned char bytes[20];
    if (RAND_bytes(bytes, sizeof bytes) != 1)
        throw openssl::error("test_pki: drawing a serial number");
    bytes[0] = static_cast<unsigned char>((bytes[0] & 0x7f) | 0x40);
    openssl::bignum number(BN_bin2bn(bytes, sizeof bytes, nullptr));
    if (!number)
        throw openssl::error("test_pki: making a serial number");
    openssl::asn1_integer serial(BN_to_ASN1_INTEGER(number.get(), nullptr));
    if (!serial)
        throw openssl::error("test_pki: making a serial number");
    return serial;
}

// One extension in OpenSSL's configuration syntax (`value` is always one of this file's literals). `issuer`
// is the certificate itself when self-signed: authorityKeyIdentifier reads the issuer's subjectKeyIdentifier,
// which must therefore be added first.
void add_extension(X509* cert, X509* issuer, int nid, char const* value) {
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    openssl::extension ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
    if (!ext || X509_add_ext(cert, ext.get(), -1) != 1)
        throw openssl::error(std::string("test_pki: adding ") + OBJ_nid2sn(nid) + " " + value);
}

// Takes `value` (a handle) into a new GENERAL_NAME of `type` on `names`.
template<class Value>
void push_name(GENERAL_NAMES* names, int type, Value value) {
    openssl::general_name name(GENERAL_NAME_new());
    if (!name)
        throw openssl::error("test_pki: making a subjectAltName");
    GENERAL_NAME_set0_value(name.get(), type, value.release());
    if (sk_GENERAL_NAME_push(names, name.get()) == 0)
        throw openssl::error("test_pki: making a subjectAltName");
    name.release();
}

// Built from the structures rather than the configuration syntax, in which a name holding a comma would
// split into two.
void add_subject_alt_names(X509* cert, issue_options const& o) {
    if (o.dns.empty() && o.ips.empty())
        return;
    openssl::general_names names(GENERAL_NAMES_new());
    if (!names)
        throw openssl::error("test_pki: making a subjectAltName");
    for (auto const& dns : o.dns) {
        openssl::ia5_string text(ASN1_IA5STRING_new());
        if (!text || ASN1_STRING_set(text.get(), dns.data(), static_cast<int>(dns.size())) != 1)
            throw openssl::error("test_pki: making the subjectAltName DNS:" + dns);
        push_name(names.get(), GEN_DNS, std::move(text));
    }
    for (auto const& ip : o.ips) {
        openssl::octet_string address(a2i_IPADDRESS(ip.c_str()));
        if (!address)
            throw openssl::error("test_pki: \"" + ip + "\" is not an IPv4 or IPv6 address");
        push_name(names.get(), GEN_IPADD, std::move(address));
    }
    if (X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) != 1)
        throw openssl::error("test_pki: adding the subjectAltName");
}

// A certificate for `key`, subject CN `cn`, signed by `issuer`'s key, or by `key` itself when `issuer` is
// null. `o` gives the validity (and, for leaves, the subjectAltName).
[[nodiscard]] openssl::x509 make_cert(std::string const& cn, EVP_PKEY* key, role r, issue_options const& o,
                                      X509* issuer, EVP_PKEY* issuer_key) {
    openssl::x509 cert(X509_new());
    if (!cert)
        throw openssl::error("test_pki: making a certificate");
    X509* c = cert.get();
    auto const serial = random_serial();
    X509_NAME* subject = X509_get_subject_name(c);
    if (X509_set_version(c, X509_VERSION_3) != 1 || X509_set_serialNumber(c, serial.get()) != 1 ||
        X509_gmtime_adj(X509_getm_notBefore(c), o.not_before.count()) == nullptr ||
        X509_gmtime_adj(X509_getm_notAfter(c), o.not_after.count()) == nullptr ||
        X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8,
                                   reinterpret_cast<unsigned char const*>(cn.c_str()), -1, -1, 0) != 1 ||
        X509_set_issuer_name(c, issuer ? X509_get_subject_name(issuer) : subject) != 1 ||
        X509_set_pubkey(c, key) != 1)
        throw openssl::error("test_pki: making the certificate for " + cn);

    switch (r) {
    case role::ca:
        add_extension(c, issuer, NID_basic_constraints, "critical,CA:TRUE");
        add_extension(c, issuer, NID_key_usage, "critical,keyCertSign,cRLSign");
        break;
    case role::intermediate_ca:
        // Path length 0: it issues leaves only, as a real issuing CA would.
        add_extension(c, issuer, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
        add_extension(c, issuer, NID_key_usage, "critical,keyCertSign,cRLSign");
        break;
    case role::server:
    case role::client:
        // digitalSignature is all an ECDSA key does in TLS (ECDHE key exchange signs, never encrypts).
        add_extension(c, issuer, NID_basic_constraints, "critical,CA:FALSE");
        add_extension(c, issuer, NID_key_usage, "critical,digitalSignature");
        add_extension(c, issuer, NID_ext_key_usage, r == role::client ? "clientAuth" : "serverAuth");
        add_subject_alt_names(c, o);
        break;
    }
    add_extension(c, c, NID_subject_key_identifier, "hash");
    add_extension(c, issuer ? issuer : c, NID_authority_key_identifier, "keyid:always");

    if (X509_sign(c, issuer_key ? issuer_key : key, EVP_sha256()) == 0)
        throw openssl::error("test_pki: signing the certificate for " + cn);
    return cert;
}

[[nodiscard]] std::string bio_text(BIO* out) {
    char* data = nullptr;
    long size = BIO_get_mem_data(out, &data);
    return std::string(data, static_cast<std::size_t>(size));
}

[[nodiscard]] std::string cert_pem(X509* cert) {
    openssl::bio out(BIO_new(BIO_s_mem()));
    if (!out || PEM_write_bio_X509(out.get(), cert) != 1)
        throw openssl::error("test_pki: writing a certificate as PEM");
    return bio_text(out.get());
}

// PKCS#8, unencrypted: what a server reads without a passphrase callback.
[[nodiscard]] std::string key_pem(EVP_PKEY* key) {
    openssl::bio out(BIO_new(BIO_s_mem()));
    if (!out || PEM_write_bio_PrivateKey(out.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1)
        throw openssl::error("test_pki: writing a private key as PEM");
    return bio_text(out.get());
}

// Writes `text` to `path` with permissions `mode`, also when the file was already there with others (which
// open's mode would leave): set before the text goes in, so a key is never readable by others.
void write_file(fs::path const& path, std::string const& text, mode_t mode) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        throw os_error("test_pki: opening " + path.string());
    auto fail = [&](char const* doing) {
        auto error = os_error("test_pki: " + std::string(doing) + " " + path.string());
        ::close(fd);
        return error;
    };
    if (::fchmod(fd, mode) != 0)
        throw fail("setting the mode of");
    for (std::size_t done = 0; done < text.size();) {
        auto n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw fail("writing");
        done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0)
        throw os_error("test_pki: closing " + path.string());
}

[[nodiscard]] cert_files write_pair(fs::path const& dir, std::string const& name, std::string const& certs,
                                    EVP_PKEY* key) {
    cert_files files{(dir / (name + ".crt")).string(), (dir / (name + ".key")).string()};
    write_file(files.cert, certs, 0644);
    write_file(files.key, key_pem(key), 0600);
    return files;
}

} // namespace

// A CA: its certificate, its key to sign with, and its certificate's PEM for chains.
struct test_pki::authority {
    openssl::pkey key;
    openssl::x509 cert;
    std::string pem;
};

temp_dir::temp_dir() {
    // mkdtemp: a name no other test or run can hold, and a directory only we may enter.
    std::string pattern = (fs::temp_directory_path() / "duet-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
        throw os_error("temp_dir: making " + pattern);
    path_ = pattern;
}

temp_dir::~temp_dir() {
    if (path_.empty())
        return;
    std::error_code ignored;
    fs::remove_all(path_, ignored);
}

temp_dir::temp_dir(temp_dir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

test_pki::test_pki(fs::path dir, std::string ca_name) : dir_(std::move(dir)) {
    check_name(ca_name);
    fs::create_directories(dir_);
    // The CAs' validity holds every leaf a test asks for, even one that was valid only in the past or will be
    // only in the future: a test of a leaf's expiry must not fail on its CA's instead.
    issue_options ca_validity;
    ca_validity.not_before = -std::chrono::hours(24 * 365);
    ca_validity.not_after = std::chrono::hours(24 * 365 * 10);

    auto root = std::make_unique<authority>();
    root->key = new_key();
    root->cert = make_cert(ca_name, root->key.get(), role::ca, ca_validity, nullptr, nullptr);
    root->pem = cert_pem(root->cert.get());
    ca_file_ = write_pair(dir_, ca_name, root->pem, root->key.get()).cert;

    auto intermediate = std::make_unique<authority>();
    intermediate->key = new_key();
    intermediate->cert = make_cert(ca_name + " Intermediate", intermediate->key.get(), role::intermediate_ca,
                                   ca_validity, root->cert.get(), root->key.get());
    intermediate->pem = cert_pem(intermediate->cert.get());

    root_ = std::move(root);
    intermediate_ = std::move(intermediate);
}

test_pki::~test_pki() = default;

cert_files test_pki::issue(issue_options const& o) const {
    check_name(o.name);
    auto const& by = o.via_intermediate ? *intermediate_ : *root_;
    auto key = new_key();
    auto cert =
        make_cert(o.name, key.get(), o.client ? role::client : role::server, o, by.cert.get(), by.key.get());
    // A peer presents its chain up to, not including, the root its verifier trusts.
    auto certs = cert_pem(cert.get());
    if (o.via_intermediate)
        certs += by.pem;
    return write_pair(dir_, o.name, certs, key.get());
}

cert_files test_pki::self_signed(issue_options const& o) const {
    check_name(o.name);
    auto key = new_key();
    auto cert = make_cert(o.name, key.get(), o.client ? role::client : role::server, o, nullptr, nullptr);
    return write_pair(dir_, o.name, cert_pem(cert.get()), key.get());
}

} // namespace duet::test
