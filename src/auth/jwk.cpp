#include "jose.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/throw_exception.hpp>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/param_build.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace duet::auth {

namespace json = boost::json;

namespace detail {

namespace {

constexpr std::string_view base64url_alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

constexpr std::array<signed char, 256> base64url_values() {
    std::array<signed char, 256> table{};
    table.fill(-1);
    for (std::size_t i = 0; i < base64url_alphabet.size(); ++i)
        table[static_cast<unsigned char>(base64url_alphabet[i])] = static_cast<signed char>(i);
    return table;
}

constexpr auto base64url_table = base64url_values();

std::string describe_char(char c) {
    auto const u = static_cast<unsigned char>(c);
    if (u > 0x20 && u < 0x7f)
        return std::string("'") + c + "'";
    static constexpr char hex[] = "0123456789abcdef";
    return std::string("byte 0x") + hex[u >> 4] + hex[u & 0xf];
}

} // namespace

std::optional<std::string> base64url_decode(std::string_view text, std::string& fault) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (base64url_table[static_cast<unsigned char>(text[i])] >= 0)
            continue;
        fault = describe_char(text[i]) + " at offset " + std::to_string(i) + " is not base64url";
        if (text[i] == '=')
            fault += " (a JWT's parts carry no padding)";
        return std::nullopt;
    }
    if (text.size() % 4 == 1) {
        fault = "its length leaves a lone character";
        return std::nullopt;
    }
    std::string out;
    out.reserve(text.size() / 4 * 3 + 2);
    std::uint32_t bits = 0;
    int held = 0;
    for (char c : text) {
        bits = (bits << 6) | static_cast<std::uint32_t>(base64url_table[static_cast<unsigned char>(c)]);
        held += 6;
        if (held >= 8) {
            held -= 8;
            out += static_cast<char>((bits >> held) & 0xff);
        }
    }
    // The bits below the last whole byte must be zero: otherwise two texts would decode to the same bytes.
    if ((bits & ((1u << held) - 1)) != 0) {
        fault = "its last character has bits set past the data";
        return std::nullopt;
    }
    return out;
}

std::string quoted(std::string_view text, std::size_t limit) {
    std::string out = "\"";
    for (std::size_t i = 0; i < text.size() && i < limit; ++i) {
        auto const u = static_cast<unsigned char>(text[i]);
        out += u >= 0x20 && u < 0x7f && text[i] != '"' && text[i] != '\\' ? text[i] : '?';
    }
    if (text.size() > limit)
        out += "...";
    return out + "\"";
}

jwk_set::impl const& jwk_set_access::of(jwk_set const& set) noexcept {
    return set.state();
}

jwk_set jwk_set_access::make(std::shared_ptr<jwk_set::impl const> impl) noexcept {
    return jwk_set(std::move(impl));
}

} // namespace detail

namespace {

template<class T, void (*Free)(T*)>
struct freer {
    void operator()(T* p) const noexcept { Free(p); }
};
using bn_ptr = std::unique_ptr<BIGNUM, freer<BIGNUM, BN_free>>;
using param_bld_ptr = std::unique_ptr<OSSL_PARAM_BLD, freer<OSSL_PARAM_BLD, OSSL_PARAM_BLD_free>>;
using params_ptr = std::unique_ptr<OSSL_PARAM, freer<OSSL_PARAM, OSSL_PARAM_free>>;
using pkey_ctx_ptr = std::unique_ptr<EVP_PKEY_CTX, freer<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;

// A key is read into this or into the reason it is skipped.
struct key_result {
    std::shared_ptr<EVP_PKEY> key;
    std::string fault;
};

key_result skip(std::string why) {
    return {nullptr, std::move(why)};
}

// A base64url member of a key, decoded; `size` (when not 0) is the exact length RFC 7518 §6 fixes for it.
std::optional<std::string> member_bytes(json::object const& jwk, std::string_view name, std::string& fault,
                                        std::size_t size = 0) {
    auto const* v = jwk.if_contains(name);
    if (!v) {
        fault = "it has no " + std::string(name);
        return std::nullopt;
    }
    if (!v->is_string()) {
        fault = "its " + std::string(name) + " is not a string";
        return std::nullopt;
    }
    std::string why;
    auto bytes = detail::base64url_decode(v->get_string(), why);
    if (!bytes) {
        fault = "its " + std::string(name) + " is not base64url: " + why;
        return std::nullopt;
    }
    if (size != 0 && bytes->size() != size) {
        fault = "its " + std::string(name) + " is " + std::to_string(bytes->size()) + " bytes, not " +
                std::to_string(size);
        return std::nullopt;
    }
    if (bytes->empty()) {
        fault = "its " + std::string(name) + " is empty";
        return std::nullopt;
    }
    return bytes;
}

// OpenSSL builds the key from its public parameters (OpenSSL 3's provider interface), then checks it as a
// public key: an EC point must lie on its curve, an RSA modulus and exponent must be plausible.
key_result from_params(char const* type, OSSL_PARAM_BLD* builder) {
    // OpenSSL refuses an EC point off its curve already here; sizes were checked before, so that is the
    // cause.
    std::string const refused = std::string_view(type) == "EC" ? "its point is not on the curve"
                                                               : "OpenSSL cannot make a public key of it";
    params_ptr params(OSSL_PARAM_BLD_to_param(builder));
    pkey_ctx_ptr ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
    EVP_PKEY* raw = nullptr;
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
        EVP_PKEY_fromdata(ctx.get(), &raw, EVP_PKEY_PUBLIC_KEY, params.get()) != 1 || !raw) {
        ERR_clear_error();
        return skip(refused);
    }
    std::shared_ptr<EVP_PKEY> key(raw, EVP_PKEY_free);
    pkey_ctx_ptr check(EVP_PKEY_CTX_new_from_pkey(nullptr, key.get(), nullptr));
    if (std::string_view(type) != "ED25519" && (!check || EVP_PKEY_public_check(check.get()) != 1)) {
        ERR_clear_error();
        return skip(std::string_view(type) == "EC" ? "its point is not on the curve"
                                                   : "OpenSSL finds it no valid public key");
    }
    return {std::move(key), {}};
}

key_result read_rsa(json::object const& jwk) {
    std::string fault;
    auto const n = member_bytes(jwk, "n", fault);
    if (!n)
        return skip(fault);
    auto const e = member_bytes(jwk, "e", fault);
    if (!e)
        return skip(fault);
    bn_ptr nb(
        BN_bin2bn(reinterpret_cast<unsigned char const*>(n->data()), static_cast<int>(n->size()), nullptr));
    bn_ptr eb(
        BN_bin2bn(reinterpret_cast<unsigned char const*>(e->data()), static_cast<int>(e->size()), nullptr));
    if (!nb || !eb)
        return skip("OpenSSL cannot hold its numbers");
    // RFC 7518 §3.3: a key of 2048 bits or larger MUST be used with RS*/PS*; a smaller one can be forged.
    if (BN_num_bits(nb.get()) < 2048)
        return skip("its modulus is " + std::to_string(BN_num_bits(nb.get())) +
                    " bits, under the 2048 RFC 7518 §3.3 requires");
    param_bld_ptr builder(OSSL_PARAM_BLD_new());
    if (!builder || OSSL_PARAM_BLD_push_BN(builder.get(), OSSL_PKEY_PARAM_RSA_N, nb.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(builder.get(), OSSL_PKEY_PARAM_RSA_E, eb.get()) != 1)
        return skip("OpenSSL cannot hold its numbers");
    return from_params("RSA", builder.get());
}

key_result read_ec(json::object const& jwk, std::string const& crv) {
    // RFC 7518 §6.2.1.2: x and y are the full size of a coordinate, leading zeros kept.
    std::size_t const size = crv == "P-256" ? 32 : 48;
    std::string fault;
    auto const x = member_bytes(jwk, "x", fault, size);
    if (!x)
        return skip(fault);
    auto const y = member_bytes(jwk, "y", fault, size);
    if (!y)
        return skip(fault);
    std::string point = "\x04" + *x + *y; // SEC 1 §2.3.3, uncompressed
    param_bld_ptr builder(OSSL_PARAM_BLD_new());
    if (!builder ||
        OSSL_PARAM_BLD_push_utf8_string(builder.get(), OSSL_PKEY_PARAM_GROUP_NAME, crv.c_str(), 0) != 1 ||
        OSSL_PARAM_BLD_push_octet_string(builder.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                         point.size()) != 1)
        return skip("OpenSSL cannot hold its point");
    return from_params("EC", builder.get());
}

key_result read_ed25519(json::object const& jwk) {
    std::string fault;
    auto const x = member_bytes(jwk, "x", fault, 32); // RFC 8037 §2
    if (!x)
        return skip(fault);
    param_bld_ptr builder(OSSL_PARAM_BLD_new());
    if (!builder ||
        OSSL_PARAM_BLD_push_octet_string(builder.get(), OSSL_PKEY_PARAM_PUB_KEY, x->data(), x->size()) != 1)
        return skip("OpenSSL cannot hold its key");
    return from_params("ED25519", builder.get());
}

// Whether a key of this type and curve can make signatures of `alg` (RFC 7518 §3.1, RFC 8037 §3.1).
bool suits(std::string_view kty, std::string_view crv, std::string_view alg) {
    if (kty == "RSA")
        return alg == "RS256" || alg == "RS384" || alg == "RS512" || alg == "PS256" || alg == "PS384" ||
               alg == "PS512";
    if (kty == "EC")
        return (crv == "P-256" && alg == "ES256") || (crv == "P-384" && alg == "ES384");
    if (kty == "OKP")
        return crv == "Ed25519" && alg == "EdDSA";
    return false;
}

std::optional<std::string> string_member(json::object const& jwk, std::string_view name, std::string& fault) {
    auto const* v = jwk.if_contains(name);
    if (!v)
        return std::string();
    if (!v->is_string()) {
        fault = "its " + std::string(name) + " is not a string";
        return std::nullopt;
    }
    return std::string(v->get_string());
}

// One member of `keys`: a usable key, or the reason it is not (`fault`).
std::optional<jwk_set::impl::entry> read_key(json::value const& member, std::string& kid,
                                             std::string& fault) {
    if (!member.is_object()) {
        fault = "it is not a JSON object";
        return std::nullopt;
    }
    auto const& jwk = member.get_object();
    auto const kid_member = string_member(jwk, "kid", fault);
    if (!kid_member)
        return std::nullopt;
    kid = *kid_member;
    auto const kty = string_member(jwk, "kty", fault);
    if (!kty)
        return std::nullopt;
    if (kty->empty()) {
        fault = "it has no kty";
        return std::nullopt;
    }
    // Before the private members are looked for: a symmetric key is its secret, `k`.
    if (*kty == "oct") {
        fault = "kty oct is a shared secret, which a public key set never holds";
        return std::nullopt;
    }
    auto const use = string_member(jwk, "use", fault);
    if (!use)
        return std::nullopt;
    // RFC 7517 §4.2: a key published for encryption is not for checking signatures.
    if (!use->empty() && *use != "sig") {
        fault = "its use is " + detail::quoted(*use) + ", not \"sig\"";
        return std::nullopt;
    }
    if (auto const* ops = jwk.if_contains("key_ops")) {
        auto const verifies = [](json::value const& op) {
            return op.is_string() && op.get_string() == "verify";
        };
        if (!ops->is_array() || std::none_of(ops->get_array().begin(), ops->get_array().end(), verifies)) {
            fault = "its key_ops do not include \"verify\"";
            return std::nullopt;
        }
    }
    auto const alg = string_member(jwk, "alg", fault);
    if (!alg)
        return std::nullopt;
    auto const crv = string_member(jwk, "crv", fault);
    if (!crv)
        return std::nullopt;
    // A set that publishes a private key has leaked it: anyone could sign with it, so it proves nothing.
    for (auto const* secret : {"d", "p", "q", "dp", "dq", "qi", "oth", "k"}) {
        if (jwk.contains(secret)) {
            fault =
                std::string("it carries the private member ") + secret + "; a key set publishes public keys";
            return std::nullopt;
        }
    }

    key_result read;
    if (*kty == "RSA") {
        read = read_rsa(jwk);
    } else if (*kty == "EC") {
        if (*crv != "P-256" && *crv != "P-384") {
            fault = "its curve " + detail::quoted(*crv) + " is not P-256 or P-384";
            return std::nullopt;
        }
        read = read_ec(jwk, *crv);
    } else if (*kty == "OKP") {
        if (*crv != "Ed25519") {
            fault = "its curve " + detail::quoted(*crv) + " is not Ed25519";
            return std::nullopt;
        }
        read = read_ed25519(jwk);
    } else {
        fault = "its kty " + detail::quoted(*kty) + " is not RSA, EC or OKP";
        return std::nullopt;
    }
    if (!read.key) {
        fault = std::move(read.fault);
        return std::nullopt;
    }
    // Checked after the key is read, so that an unsupported key is reported as such first.
    if (!alg->empty() && !suits(*kty, *crv, *alg)) {
        fault = "its alg " + detail::quoted(*alg) + " does not suit a key of kty " + *kty +
                (crv->empty() ? std::string() : " and crv " + *crv);
        return std::nullopt;
    }
    return jwk_set::impl::entry{jwk_summary{kid, *kty, *kty == "RSA" ? std::string() : *crv, *alg},
                                std::move(read.key)};
}

} // namespace

jwk_set::jwk_set() noexcept = default;

jwk_set::jwk_set(std::shared_ptr<impl const> impl) noexcept : impl_(std::move(impl)) {}

jwk_set::impl const& jwk_set::state() const noexcept {
    static impl const none;
    return impl_ ? *impl_ : none;
}

std::size_t jwk_set::size() const noexcept {
    return state().entries.size();
}

std::vector<jwk_summary> const& jwk_set::keys() const noexcept {
    return state().summaries;
}

std::vector<jwk_skipped> const& jwk_set::skipped() const noexcept {
    return state().skipped;
}

bool jwk_set::contains(std::string_view kid) const noexcept {
    return std::any_of(state().summaries.begin(), state().summaries.end(),
                       [kid](jwk_summary const& s) { return s.kid == kid; });
}

void throw_exception_from_error(jwks_error const& e, boost::source_location const& loc) {
    boost::throw_exception(std::invalid_argument(e.description), loc);
}

boost::system::result<jwk_set, jwks_error> read_jwk_set(json::value const& document) {
    if (!document.is_object())
        return jwks_error{"the JWK Set is not a JSON object"};
    auto const* keys = document.get_object().if_contains("keys");
    if (!keys)
        return jwks_error{"the JWK Set has no keys member"};
    if (!keys->is_array())
        return jwks_error{"the JWK Set's keys is not an array"};
    auto impl = std::make_shared<jwk_set::impl>();
    auto const& members = keys->get_array();
    for (std::size_t i = 0; i < members.size(); ++i) {
        std::string kid;
        std::string fault;
        auto entry = read_key(members[i], kid, fault);
        if (!entry) {
            impl->skipped.push_back(jwk_skipped{i, std::move(kid), std::move(fault)});
            continue;
        }
        impl->summaries.push_back(entry->summary);
        impl->entries.push_back(std::move(*entry));
    }
    return detail::jwk_set_access::make(std::move(impl));
}

boost::system::result<jwk_set, jwks_error> parse_jwk_set(std::string_view json_text) {
    boost::system::error_code ec;
    auto const document = json::parse(json_text, ec);
    if (ec)
        return jwks_error{"the JWK Set is not JSON: " + ec.message()};
    return read_jwk_set(document);
}

} // namespace duet::auth
