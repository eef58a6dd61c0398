#include <duet/auth/credentials.hpp>

#include <algorithm>

namespace duet::auth {

client::result<std::optional<token_set>> memory_store::load_tokens(std::string const& resource) {
    auto const it =
        std::find_if(tokens_.begin(), tokens_.end(), [&](auto const& t) { return t.resource == resource; });
    if (it == tokens_.end())
        return std::optional<token_set>{};
    return std::optional<token_set>(*it);
}

client::result<void> memory_store::save_tokens(token_set const& tokens) {
    std::erase_if(tokens_, [&](auto const& t) { return t.resource == tokens.resource; });
    tokens_.push_back(tokens);
    return {};
}

client::result<void> memory_store::erase_tokens(std::string const& resource) {
    std::erase_if(tokens_, [&](auto const& t) { return t.resource == resource; });
    return {};
}

client::result<std::optional<client_registration>>
memory_store::load_registration(std::string const& issuer) {
    auto const it = std::find_if(registrations_.begin(), registrations_.end(),
                                 [&](auto const& r) { return r.issuer == issuer; });
    if (it == registrations_.end())
        return std::optional<client_registration>{};
    return std::optional<client_registration>(*it);
}

client::result<void> memory_store::save_registration(client_registration const& registration) {
    std::erase_if(registrations_, [&](auto const& r) { return r.issuer == registration.issuer; });
    registrations_.push_back(registration);
    return {};
}

} // namespace duet::auth
