// DNS-rebinding protection: which Origin and Host headers a server bound to some address accepts. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::transport::http {

/// "localhost", "127.0.0.1" (any 127/8), "::1", "[::1]", with or without a port.
[[nodiscard]] bool is_loopback_host(std::string_view host);

/// The host part of "host:port", "[v6]:port" or a bare host.
[[nodiscard]] std::string_view host_of(std::string_view authority);

/// An absent Origin (a non-browser client) is allowed; "null" and malformed origins are not; otherwise the
/// origin's host must be loopback or the whole origin must be in `allowed`.
[[nodiscard]] bool origin_allowed(std::optional<std::string_view> origin,
                                  std::vector<std::string> const& allowed);

/// Only Host headers naming loopback, naming the address the server is bound to (`bound_address`, empty when
/// that is loopback), or listed in `allowed` ("*" for any) are answered, so a rebound DNS name cannot reach
/// the server: one bound beyond loopback is reached by the names it was told.
[[nodiscard]] bool host_allowed(std::optional<std::string_view> host, std::string_view bound_address,
                                std::vector<std::string> const& allowed);

} // namespace duet::transport::http
