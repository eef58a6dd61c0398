// File: tests/support/openssl_handles.hpp
//
// Owning handles for the OpenSSL objects that the test PKI (support/test_certs.hpp) and the tests checking
// certificates make: each a unique_ptr whose deleter is the object's own free function, so that a throw or a
// failed assertion halfway through leaks nothing (the suites also run under LeakSanitizer). Also the reading
// of PEM files back, and the one way an OpenSSL failure is reported: a std::runtime_error naming OpenSSL's
// queued errors, which it also clears so that they cannot be blamed on a later call.
#pragma once

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace duet::test::openssl {

template<auto Free>
struct free_with {
    template<class T>
    void operator()(T* p) const noexcept {
        Free(p);
    }
};
template<class T, auto Free>
using handle = std::unique_ptr<T, free_with<Free>>;

using bio = handle<BIO, BIO_free_all>;
using bignum = handle<BIGNUM, BN_free>;
using asn1_integer = handle<ASN1_INTEGER, ASN1_INTEGER_free>;
using ia5_string = handle<ASN1_IA5STRING, ASN1_IA5STRING_free>;
using octet_string = handle<ASN1_OCTET_STRING, ASN1_OCTET_STRING_free>;
using extension = handle<X509_EXTENSION, X509_EXTENSION_free>;
using general_name = handle<GENERAL_NAME, GENERAL_NAME_free>;
using general_names = handle<GENERAL_NAMES, GENERAL_NAMES_free>;
using key_id = handle<AUTHORITY_KEYID, AUTHORITY_KEYID_free>;
using pkey = handle<EVP_PKEY, EVP_PKEY_free>;
using x509 = handle<X509, X509_free>;
using x509_store = handle<X509_STORE, X509_STORE_free>;
using x509_store_ctx = handle<X509_STORE_CTX, X509_STORE_CTX_free>;

// A stack owns its certificates too (sk_X509_pop_free is a macro, hence no free_with).
struct x509_stack_free {
    void operator()(STACK_OF(X509) * s) const noexcept { sk_X509_pop_free(s, X509_free); }
};
using x509_stack = std::unique_ptr<STACK_OF(X509), x509_stack_free>;

/// "<what>: <each queued OpenSSL error>", the queue emptied.
[[nodiscard]] inline std::runtime_error error(std::string what) {
    char text[256];
    bool any = false;
    while (unsigned long code = ERR_get_error()) {
        ERR_error_string_n(code, text, sizeof text);
        what += any ? "; " : ": ";
        what += text;
        any = true;
    }
    if (!any)
        what += " (OpenSSL queued no error)";
    return std::runtime_error(what);
}

/// Every certificate in the PEM file at `path`, in the file's order; throws when there is none.
[[nodiscard]] inline std::vector<x509> read_certs(std::string const& path) {
    bio in(BIO_new_file(path.c_str(), "r"));
    if (!in)
        throw error("opening " + path);
    std::vector<x509> certs;
    while (X509* cert = PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr))
        certs.emplace_back(cert);
    // The end of the file is reported as an error (no further PEM start line); anything else is one.
    if (ERR_GET_REASON(ERR_peek_last_error()) != PEM_R_NO_START_LINE || certs.empty())
        throw error("reading certificates from " + path);
    ERR_clear_error();
    return certs;
}

/// The private key in the unencrypted PEM file at `path`.
[[nodiscard]] inline pkey read_key(std::string const& path) {
    bio in(BIO_new_file(path.c_str(), "r"));
    if (!in)
        throw error("opening " + path);
    pkey key(PEM_read_bio_PrivateKey(in.get(), nullptr, nullptr, nullptr));
    if (!key)
        throw error("reading a private key from " + path);
    return key;
}

} // namespace duet::test::openssl
