// File: tests/http/raw_socket.hpp
//
// One client connection to a loopback port, read and written by hand: the test decides exactly when each
// byte goes out, keeps the connection alive across requests, and sees when the server closes it.
//
//     raw_socket c(port);
//     c.send(raw_request(ep, spec));              // a kept-alive request
//     auto const answer = c.read_response();      // status line, headers and Content-Length body
//     c.closed_within(http_wait);                 // the server ended the connection
//     c.server_end_closed();                      // ... seen without reading what it sent
#pragma once

#include "http/http_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace duet::test::http {

// One client connection, read and written by hand.
class raw_socket {
public:
    /// Connects to the loopback port; `rcvbuf` > 0 shrinks the receive buffer first (a client that reads
    /// slowly holds the server's write sooner); `source` (e.g. "127.0.0.2", also loopback on Linux) is the
    /// address the connection comes from, so one test can be several peers.
    explicit raw_socket(std::uint16_t port, int rcvbuf = 0, char const* source = nullptr)
        : fd_(::socket(AF_INET, SOCK_STREAM, 0)), server_port_(port) {
        if (rcvbuf > 0)
            ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
        if (source) {
            sockaddr_in from{};
            from.sin_family = AF_INET;
            ::inet_pton(AF_INET, source, &from.sin_addr);
            ::bind(fd_, reinterpret_cast<sockaddr const*>(&from), sizeof from);
        }
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        connected_ = ::connect(fd_, reinterpret_cast<sockaddr const*>(&a), sizeof a) == 0;
    }
    ~raw_socket() { ::close(fd_); }
    raw_socket(raw_socket const&) = delete;
    raw_socket& operator=(raw_socket const&) = delete;

    [[nodiscard]] bool connected() const noexcept { return connected_; }

    bool send(std::string_view bytes) {
        while (!bytes.empty()) {
            auto const n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
            if (n <= 0)
                return false;
            bytes.remove_prefix(static_cast<std::size_t>(n));
        }
        return true;
    }

    enum class got { data, closed, nothing };

    /// Waits up to `timeout` for bytes (appended to `into`) or the end of the connection (a FIN or a reset).
    got read_some(std::string& into, std::chrono::milliseconds timeout) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0)
            return got::nothing;
        char buf[65536];
        auto const n = ::recv(fd_, buf, sizeof buf, 0);
        if (n <= 0)
            return got::closed;
        into.append(buf, static_cast<std::size_t>(n));
        return got::data;
    }

    /// One complete response with a Content-Length body; empty when the connection ended or `timeout`
    /// passed first.
    std::string read_response(std::chrono::milliseconds timeout = http_wait) {
        auto const give_up = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            auto const head_end = pending_.find("\r\n\r\n");
            if (head_end != std::string::npos) {
                auto const length_at = pending_.find("Content-Length: ");
                std::size_t length = 0;
                if (length_at != std::string::npos && length_at < head_end)
                    length = std::stoul(pending_.substr(length_at + 16));
                if (pending_.size() >= head_end + 4 + length) {
                    auto out = pending_.substr(0, head_end + 4 + length);
                    pending_.erase(0, out.size());
                    return out;
                }
            }
            auto const left = std::chrono::duration_cast<std::chrono::milliseconds>(
                give_up - std::chrono::steady_clock::now());
            if (left <= std::chrono::milliseconds(0) || read_some(pending_, left) != got::data)
                return {};
        }
    }

    /// Reads (and counts in `bytes`) whatever comes until the server ends the connection; false when it did
    /// not within `timeout`.
    bool closed_within(std::chrono::milliseconds timeout, std::size_t* bytes = nullptr) {
        auto const give_up = std::chrono::steady_clock::now() + timeout;
        std::string sink;
        for (;;) {
            auto const left = std::chrono::duration_cast<std::chrono::milliseconds>(
                give_up - std::chrono::steady_clock::now());
            if (left <= std::chrono::milliseconds(0))
                return false;
            auto const g = read_some(sink, left);
            if (bytes)
                *bytes += sink.size();
            sink.clear();
            if (g == got::closed)
                return true;
            if (g == got::nothing)
                return false;
        }
    }

    /// Whether the server has closed its end of the connection, seen in the kernel's table of TCP sockets
    /// (its socket left ESTABLISHED, or is gone) without reading: the bytes it sent stay unread. A client
    /// that stops reading cannot see the close otherwise, since the FIN waits behind the unread data.
    [[nodiscard]] bool server_end_closed() const {
        sockaddr_in mine{};
        socklen_t size = sizeof mine;
        if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&mine), &size) != 0)
            return false;
        auto const local_port = ntohs(mine.sin_port);
        for (char const* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
            std::ifstream in(table);
            std::string line;
            std::getline(in, line); // the column names
            while (std::getline(in, line)) {
                std::istringstream fields(line);
                std::string slot, local, remote, state;
                if (!(fields >> slot >> local >> remote >> state))
                    continue;
                if (port_of(local) == server_port_ && port_of(remote) == local_port)
                    return state != "01"; // TCP_ESTABLISHED
            }
        }
        return true;
    }

private:
    // The port of an "ADDRESS:PORT" entry of /proc/net/tcp (both in hex).
    static std::uint16_t port_of(std::string const& entry) {
        auto const colon = entry.rfind(':');
        return colon == std::string::npos
                   ? 0
                   : static_cast<std::uint16_t>(std::stoul(entry.substr(colon + 1), nullptr, 16));
    }

    int fd_;
    std::uint16_t server_port_;
    bool connected_ = false;
    std::string pending_;
};

/// The bytes of a kept-alive request `spec` to `ep` (Host and Content-Length added).
inline std::string raw_request(endpoint const& ep, request_spec const& spec) {
    std::string out = spec.method + " " + (spec.target.empty() ? ep.path : spec.target) +
                      " HTTP/1.1\r\nHost: " + ep.authority() + "\r\n";
    for (auto const& h : spec.headers)
        out += h.name + ": " + h.value + "\r\n";
    out += "Content-Length: " + std::to_string(spec.body.size()) + "\r\n\r\n" + spec.body;
    return out;
}

/// The body of a response read_response() returned.
inline std::string_view body_of(std::string_view response) {
    auto const at = response.find("\r\n\r\n");
    return at == std::string_view::npos ? std::string_view() : response.substr(at + 4);
}

} // namespace duet::test::http
