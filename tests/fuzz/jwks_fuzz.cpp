// Fuzz target over the resource server's reading of a JWK Set document (auth/access_token.hpp,
// parse_jwk_set), which comes from the authorization server over the network. The laws: a document is either
// refused whole or read into usable and skipped keys that together account for every element of its `keys`
// array, each usable key named by `contains` when it has a kid, and reading is the same the second time.
#include <duet/auth/access_token.hpp>

#include <boost/json/parse.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    std::string_view const text(reinterpret_cast<char const*>(data), size);
    auto const set = duet::auth::parse_jwk_set(text);
    auto const again = duet::auth::parse_jwk_set(text);
    if (set.has_value() != again.has_value())
        std::abort();
    if (!set) {
        if (set.error().description.empty())
            std::abort();
        return 0;
    }
    if (set->size() != set->keys().size() || set->size() != again->size())
        std::abort();
    boost::system::error_code ec;
    auto const doc = boost::json::parse(text, ec);
    if (ec || !doc.is_object())
        std::abort(); // accepted, so it was a JSON object
    auto const* keys = doc.get_object().if_contains("keys");
    if (!keys || !keys->is_array() || keys->get_array().size() != set->size() + set->skipped().size())
        std::abort();
    for (auto const& k : set->keys())
        if (!k.kid.empty() && !set->contains(k.kid))
            std::abort();
    for (auto const& s : set->skipped())
        if (s.reason.empty() || s.index >= keys->get_array().size())
            std::abort();
    return 0;
}
