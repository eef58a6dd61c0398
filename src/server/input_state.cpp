#include <duet/jsonrpc/json_text.hpp>
#include <duet/server/input_state.hpp>

#include <boost/json/parse.hpp>
#include <boost/throw_exception.hpp>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

namespace duet::server {

namespace {

constexpr char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string encode64(std::string_view in) {
    std::string out;
    std::uint32_t acc = 0;
    int bits = 0;
    for (unsigned char c : in) {
        acc = (acc << 8) | c;
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out += b64url[(acc >> bits) & 63];
        }
    }
    if (bits > 0)
        out += b64url[(acc << (6 - bits)) & 63];
    return out;
}

std::optional<std::string> decode64(std::string_view in) {
    std::string out;
    std::uint32_t acc = 0;
    int bits = 0;
    for (char c : in) {
        auto const* p = std::find(std::begin(b64url), std::end(b64url) - 1, c);
        if (p == std::end(b64url) - 1)
            return std::nullopt;
        acc = (acc << 6) | std::uint32_t(p - b64url);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += char((acc >> bits) & 0xFF);
        }
    }
    // One spelling per body: a lone last character, or left-over bits that are not zero, spell bytes some
    // other text spells too (RFC 4648 §3.5), and a sealed state has exactly one text.
    if (bits >= 6 || (acc & ((1u << bits) - 1)) != 0)
        return std::nullopt;
    return out;
}

void canonical(boost::json::value const& v, std::string& out) {
    if (auto const* o = v.if_object()) {
        std::vector<std::pair<std::string_view, boost::json::value const*>> members;
        for (auto const& kv : *o)
            members.emplace_back(kv.key(), &kv.value());
        std::sort(members.begin(), members.end(),
                  [](auto const& a, auto const& b) { return a.first < b.first; });
        out += '{';
        bool first = true;
        for (auto const& [k, child] : members) {
            out += first ? "" : ",";
            first = false;
            jsonrpc::append_json_string(out, k);
            out += ':';
            canonical(*child, out);
        }
        out += '}';
    } else if (auto const* a = v.if_array()) {
        out += '[';
        for (std::size_t i = 0; i < a->size(); ++i) {
            out += i ? "," : "";
            canonical((*a)[i], out);
        }
        out += ']';
    } else {
        jsonrpc::append_json_text(out, v);
    }
}

std::string mac(std::string const& key, std::string_view data) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int len = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<unsigned char const*>(data.data()), data.size(), md.data(), &len);
    return std::string(reinterpret_cast<char const*>(md.data()), len);
}

std::string digest(std::string_view data) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int len = 0;
    EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_sha256(), nullptr);
    return encode64(std::string_view(reinterpret_cast<char const*>(md.data()), len));
}

std::int64_t seconds(std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

} // namespace

void throw_exception_from_error(state_error const& e, boost::source_location const& loc) {
    boost::throw_exception(std::invalid_argument(e.message), loc);
}

state_sealer::state_sealer(std::string key) {
    if (key.empty()) {
        key.resize(32);
        if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())) != 1)
            throw std::runtime_error("the system random generator failed");
    } else if (key.size() < 16) {
        throw std::invalid_argument("a requestState key needs at least 16 bytes");
    }
    keys_.push_back({{}, std::move(key)});
}

state_sealer::state_sealer(std::vector<state_key> keys) : keys_(std::move(keys)) {
    if (keys_.empty())
        throw std::invalid_argument("a requestState key ring needs a key");
    for (std::size_t i = 0; i < keys_.size(); ++i) {
        auto const& id = keys_[i].id;
        bool const id_ok = !id.empty() && id.size() <= 32 && std::all_of(id.begin(), id.end(), [](char c) {
            return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                   c == '_';
        });
        if (!id_ok)
            throw std::invalid_argument("a requestState key id is 1 to 32 of A-Z a-z 0-9 - _, not \"" + id +
                                        "\"");
        if (keys_[i].secret.size() < 16)
            throw std::invalid_argument("the requestState key " + id + " needs at least 16 bytes");
        for (std::size_t j = 0; j < i; ++j)
            if (keys_[j].id == id)
                throw std::invalid_argument("two requestState keys have the id " + id);
    }
}

std::string state_sealer::canonical_params(boost::json::value const& params) {
    boost::json::object trimmed;
    if (auto const* o = params.if_object())
        for (auto const& kv : *o)
            if (kv.key() != "_meta" && kv.key() != "inputResponses" && kv.key() != "requestState")
                trimmed.emplace(kv.key(), kv.value());
    std::string out;
    canonical(trimmed, out);
    return out;
}

std::string state_sealer::seal(std::string_view method, boost::json::value const& params,
                               input_state const& state, std::chrono::system_clock::time_point expiry) const {
    boost::json::object payload{{"v", 1},
                                {"m", method},
                                {"p", digest(canonical_params(params))},
                                {"exp", seconds(expiry)},
                                {"a", state.answers},
                                {"s", state.handler_state},
                                {"q", state.pending}};
    auto const& key = keys_.front();
    // A key with an id is named first, and the MAC covers the name: "ID.BODY.MAC", or "BODY.MAC" without one.
    auto const sealed =
        (key.id.empty() ? std::string() : key.id + ".") + encode64(jsonrpc::to_json_text(payload));
    return sealed + "." + encode64(mac(key.secret, sealed));
}

boost::system::result<input_state, state_error>
state_sealer::open(std::string_view token, std::string_view method, boost::json::value const& params,
                   std::chrono::system_clock::time_point now) const {
    auto const dot = token.rfind('.');
    if (dot == std::string_view::npos)
        return state_error{"requestState is malformed"};
    auto const sealed = token.substr(0, dot);
    auto const id_end = sealed.find('.');
    auto const id = id_end == std::string_view::npos ? std::string_view() : sealed.substr(0, id_end);
    auto const body = id_end == std::string_view::npos ? sealed : sealed.substr(id_end + 1);
    auto const key =
        std::find_if(keys_.begin(), keys_.end(), [id](state_key const& k) { return k.id == id; });
    if (key == keys_.end())
        return state_error{id.empty() ? "requestState was not issued by this server or was altered"
                                      : "requestState was sealed with a key this server does not hold"};
    // Compared as text: decoding would ignore the unused low bits of the last character, so several
    // spellings of one MAC would pass.
    auto const given = token.substr(dot + 1);
    auto const expected = encode64(mac(key->secret, sealed));
    if (given.size() != expected.size() || CRYPTO_memcmp(given.data(), expected.data(), expected.size()) != 0)
        return state_error{"requestState was not issued by this server or was altered"};
    auto const json = decode64(body);
    boost::system::error_code ec;
    auto const payload = json ? boost::json::parse(*json, ec) : boost::json::value{};
    auto const* o = payload.if_object();
    if (!json || ec || !o)
        return state_error{"requestState is malformed"};
    auto const* m = o->if_contains("m");
    auto const* p = o->if_contains("p");
    auto const* exp = o->if_contains("exp");
    auto const* a = o->if_contains("a");
    auto const* s = o->if_contains("s");
    auto const* q = o->if_contains("q");
    if (!m || !m->is_string() || !p || !p->is_string() || !exp || !exp->is_int64() || !a || !a->is_object() ||
        !s || !s->is_object() || !q || !q->is_array())
        return state_error{"requestState is malformed"};
    if (m->get_string() != method)
        return state_error{"requestState belongs to another method"};
    if (p->get_string() != digest(canonical_params(params)))
        return state_error{"requestState belongs to a request with other params"};
    if (exp->get_int64() < seconds(now))
        return state_error{"requestState has expired; start the request again"};
    return input_state{a->get_object(), s->get_object(), q->get_array()};
}

} // namespace duet::server
