#include "tls/peer_check.hpp"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/verify_context.hpp>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <memory>

namespace duet::tls {

namespace {

bool is_ip_literal(std::string const& host) {
    boost::system::error_code ec;
    boost::asio::ip::make_address(host, ec);
    return !ec;
}

std::string ip_text(ASN1_OCTET_STRING const* ip) {
    auto const* bytes = ASN1_STRING_get0_data(ip);
    auto const n = ASN1_STRING_length(ip);
    if (n == 4)
        return boost::asio::ip::address_v4({bytes[0], bytes[1], bytes[2], bytes[3]}).to_string();
    if (n == 16) {
        boost::asio::ip::address_v6::bytes_type b;
        std::copy(bytes, bytes + 16, b.begin());
        return boost::asio::ip::address_v6(b).to_string();
    }
    return "?";
}

} // namespace

std::string certificate_names(X509* certificate) {
    std::string names;
    auto add = [&](std::string n) {
        if (!names.empty())
            names += ", ";
        names += n;
    };
    using general_names = std::unique_ptr<GENERAL_NAMES, decltype(&GENERAL_NAMES_free)>;
    general_names sans(
        static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr)),
        &GENERAL_NAMES_free);
    if (sans)
        for (int i = 0; i < sk_GENERAL_NAME_num(sans.get()); ++i) {
            auto const* n = sk_GENERAL_NAME_value(sans.get(), i);
            if (n->type == GEN_DNS)
                add(std::string(reinterpret_cast<char const*>(ASN1_STRING_get0_data(n->d.dNSName)),
                                static_cast<std::size_t>(ASN1_STRING_length(n->d.dNSName))));
            else if (n->type == GEN_IPADD)
                add(ip_text(n->d.iPAddress));
        }
    if (names.empty()) {
        char cn[256] = {};
        if (X509_NAME_get_text_by_NID(X509_get_subject_name(certificate), NID_commonName, cn, sizeof cn) > 0)
            add(cn);
    }
    return names.empty() ? "no name" : names;
}

std::shared_ptr<peer_verdict> check_peer(tls_stream& stream, std::string const& host, bool insecure) {
    auto verdict = std::make_shared<peer_verdict>();
    SSL* ssl = stream.native_handle();
    bool const ip = is_ip_literal(host);
    if (!ip) // RFC 6066: SNI carries names only
        SSL_set_tlsext_host_name(ssl, host.c_str());
    if (insecure) {
        std::fprintf(stderr,
                     "duet: warning: TLS to %s is not verified (--insecure): any server can pose as it\n",
                     host.c_str());
        stream.set_verify_mode(boost::asio::ssl::verify_none);
        return verdict;
    }
    auto* param = SSL_get0_param(ssl);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    if (ip)
        X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
    else
        X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
    stream.set_verify_callback([verdict](bool preverified, boost::asio::ssl::verify_context& vc) {
        if (!preverified && verdict->failure.empty()) {
            auto* ctx = vc.native_handle();
            int const err = X509_STORE_CTX_get_error(ctx);
            if (err == X509_V_ERR_HOSTNAME_MISMATCH || err == X509_V_ERR_IP_ADDRESS_MISMATCH)
                verdict->failure = "host name mismatch: cert is for " +
                                   certificate_names(X509_STORE_CTX_get_current_cert(ctx));
            else
                verdict->failure =
                    std::string("certificate verify failed: ") + X509_verify_cert_error_string(err);
        }
        return preverified;
    });
    return verdict;
}

std::string describe_tls_error(boost::system::error_code ec) {
    if (ec == boost::asio::ssl::error::stream_truncated || ec == boost::asio::error::eof)
        return "the peer closed the connection";
    std::string why = ec.message();
    // OpenSSL's texts end in "(SSL routines)" and the like: the library is not the reason.
    if (auto const paren = why.rfind(" ("); paren != std::string::npos && why.back() == ')')
        why.erase(paren);
    return why;
}

std::string describe_handshake_failure(boost::system::error_code ec, peer_verdict const& verdict) {
    if (!verdict.failure.empty())
        return verdict.failure;
    return "TLS handshake failed: " + describe_tls_error(ec);
}

std::string verified_peer_subject(tls_stream& stream) {
    SSL* ssl = stream.native_handle();
    if (SSL_get_verify_result(ssl) != X509_V_OK)
        return {};
    std::unique_ptr<X509, decltype(&X509_free)> cert(SSL_get1_peer_certificate(ssl), &X509_free);
    if (!cert)
        return {};
    std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), &BIO_free);
    X509_NAME_print_ex(out.get(), X509_get_subject_name(cert.get()), 0, XN_FLAG_RFC2253);
    char* data = nullptr;
    auto const n = BIO_get_mem_data(out.get(), &data);
    return std::string(data, static_cast<std::size_t>(n));
}

} // namespace duet::tls
