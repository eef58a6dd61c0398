/// @file duet/version.hpp
///
/// Duet's version, in one place: the CMake project reads it from this file (CMakeLists.txt), the `duet`
/// command prints it (`duet --version`), and every implementation Duet describes on the wire (a server's
/// serverInfo, a client's clientInfo, the gateway's own) carries it unless told otherwise.
#pragma once

#include <string_view>

#define DUET_VERSION "0.1.0"

namespace duet {

inline constexpr std::string_view version = DUET_VERSION;

} // namespace duet
