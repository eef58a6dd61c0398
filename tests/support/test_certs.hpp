// File: tests/support/test_certs.hpp
//
// Certificates the TLS tests make for themselves at run time, so that nothing secret (not even a test key) is
// committed and no certificate in the tree can expire under a later run: a root CA, leaves it issues directly
// or through an intermediate, self-signed ones it does not vouch for; valid, expired or not yet valid; for a
// server or for a client. Made with OpenSSL's C API. Keys are EC P-256: a suite makes many, and a
// 2048-bit RSA key takes a tenth of a second or more to generate, a P-256 one well under a millisecond.
//
//     temp_dir tmp;
//     test_pki pki(tmp.path());
//     auto server = pki.issue({.name = "server", .dns = {"localhost"}, .ips = {"127.0.0.1", "::1"}});
//     // server.cert and server.key for the server to present; pki.ca_file() for its clients to trust.
//
// Every failure throws std::runtime_error (OpenSSL's, named with its own error text).
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace duet::test {

/// A fresh directory of its own for one test, under $TMPDIR (else /tmp), removed with all it holds by the
/// destructor.
class temp_dir {
public:
    temp_dir();
    ~temp_dir();
    temp_dir(temp_dir&& other) noexcept;
    temp_dir(temp_dir const&) = delete;
    temp_dir& operator=(temp_dir const&) = delete;
    temp_dir& operator=(temp_dir&&) = delete;

    [[nodiscard]] std::filesystem::path const& path() const noexcept { return path_; }

private:
    std::filesystem::path path_;
};

/// The paths of a certificate's two PEM files. A server loads `cert` as a chain file
/// (SSL_CTX_use_certificate_chain_file, Asio's use_certificate_chain_file), or it presents no intermediate.
struct cert_files {
    std::string cert; // the certificate, then any intermediate a peer needs to reach the root
    std::string key;  // its private key, unencrypted, readable by the owner only (0600)
};

struct issue_options {
    std::string name;             // the files' stem (<dir>/<name>.crt, .key) and the subject's CN
    std::vector<std::string> dns; // subjectAltName DNS names
    std::vector<std::string> ips; // subjectAltName IP addresses, IPv4 or IPv6 text
    std::chrono::seconds not_before = -std::chrono::hours(1); // from now; an hour back absorbs clock skew
    std::chrono::seconds not_after = std::chrono::hours(24);  // from now; negative for one already expired
    bool client = false;                                      // extendedKeyUsage clientAuth, else serverAuth
    bool via_intermediate = false; // signed by the PKI's intermediate CA, which the cert file then also holds
};

/// A root CA and what it issues, all files in one directory. Issuing writes files and changes nothing else,
/// so a const test_pki may be shared by a fixture's tests. A name used twice overwrites the first's files.
class test_pki {
public:
    /// Makes the root CA, subject CN `ca_name` (basicConstraints CA:TRUE, keyUsage keyCertSign and
    /// cRLSign), written to <dir>/<ca_name>.crt and .key, `dir` created when missing; and its intermediate
    /// CA ("<ca_name> Intermediate", path length 0), kept in memory for via_intermediate.
    explicit test_pki(std::filesystem::path dir, std::string ca_name = "Duet Test CA");
    ~test_pki();
    test_pki(test_pki const&) = delete;
    test_pki& operator=(test_pki const&) = delete;

    [[nodiscard]] std::filesystem::path const& dir() const noexcept { return dir_; }
    /// The root CA's certificate (PEM): what a peer of an issued certificate trusts.
    [[nodiscard]] std::string const& ca_file() const noexcept { return ca_file_; }

    /// A leaf (basicConstraints CA:FALSE, keyUsage digitalSignature) issued by the root, or by the
    /// intermediate when `o.via_intermediate`.
    [[nodiscard]] cert_files issue(issue_options const& o) const;
    /// A leaf like issue()'s but its own issuer, which the root does not vouch for (`o.via_intermediate`
    /// is ignored).
    [[nodiscard]] cert_files self_signed(issue_options const& o) const;

private:
    struct authority;

    std::filesystem::path dir_;
    std::string ca_file_;
    std::unique_ptr<authority const> root_;
    std::unique_ptr<authority const> intermediate_;
};

} // namespace duet::test
