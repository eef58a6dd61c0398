#include "origin.hpp"

#include <duet/protocol/header_codec.hpp>

#include <algorithm>

namespace duet::transport::http {

namespace {

bool listed(std::string_view value, std::vector<std::string> const& allowed) {
    return std::any_of(allowed.begin(), allowed.end(),
                       [&](std::string const& a) { return protocol::iequals(a, value); });
}

} // namespace

std::string_view host_of(std::string_view authority) {
    if (authority.starts_with('[')) {
        auto const close = authority.find(']');
        return close == std::string_view::npos ? authority : authority.substr(0, close + 1);
    }
    auto const colon = authority.find(':');
    // More than one colon without brackets is a bare IPv6 address.
    if (colon != std::string_view::npos && authority.find(':', colon + 1) == std::string_view::npos)
        return authority.substr(0, colon);
    return authority;
}

bool is_loopback_host(std::string_view host) {
    host = host_of(host);
    if (protocol::iequals(host, "localhost") || host == "[::1]" || host == "::1")
        return true;
    if (!host.starts_with("127."))
        return false;
    int dots = 0;
    for (char c : host) {
        if (c == '.')
            ++dots;
        else if (c < '0' || c > '9')
            return false;
    }
    return dots == 3;
}

bool origin_allowed(std::optional<std::string_view> origin, std::vector<std::string> const& allowed) {
    if (!origin)
        return true;
    if (listed(*origin, allowed))
        return true;
    auto const scheme_end = origin->find("://");
    if (scheme_end == std::string_view::npos)
        return false;
    auto const scheme = origin->substr(0, scheme_end);
    if (!protocol::iequals(scheme, "http") && !protocol::iequals(scheme, "https"))
        return false;
    auto authority = origin->substr(scheme_end + 3);
    if (authority.empty() || authority.find('/') != std::string_view::npos)
        return false;
    return is_loopback_host(authority);
}

bool host_allowed(std::optional<std::string_view> host, std::string_view bound_address,
                  std::vector<std::string> const& allowed) {
    if (!host || host->empty())
        return false; // HTTP/1.1 requires Host
    if (listed(*host, allowed) || listed(host_of(*host), allowed) || listed("*", allowed))
        return true;
    if (is_loopback_host(*host))
        return true;
    if (bound_address.empty())
        return false;
    auto const name = host_of(*host);
    // An IPv6 literal arrives bracketed.
    if (name.size() == bound_address.size() + 2 && name.starts_with('['))
        return name.substr(1, bound_address.size()) == bound_address;
    return name == bound_address;
}

} // namespace duet::transport::http
