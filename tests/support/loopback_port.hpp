// A loopback port free a moment ago, for a server a test starts whose port must be known before it starts (an
// audience naming its URL, a Redis the test restarts on the same port). Nothing else on the machine takes
// ports this way, so the race is only in theory.
#pragma once

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

namespace duet::test {

inline std::uint16_t free_loopback_port() {
    int const s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (s < 0 || ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0)
        ADD_FAILURE() << "no free loopback port";
    if (s >= 0)
        ::close(s);
    return ntohs(a.sin_port);
}

} // namespace duet::test
