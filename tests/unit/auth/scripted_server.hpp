// An HTTP/1.1 server on 127.0.0.1 for the auth tests that fetch (the JWKS key source, token introspection):
// it reads each request to its end (Content-Length), keeps its text, and answers with what the test set,
// one connection at a time, then closes it.
//
//     scripted_server server("/jwks.json");
//     server.answer(body, 200, "Cache-Control: max-age=1\r\n");
//     ... server.url(), server.requests(), server.seen()
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace auth_test_support {

class scripted_server {
public:
    explicit scripted_server(std::string path) : path_(std::move(path)) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        socklen_t size = sizeof addr;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &size);
        port_ = ntohs(addr.sin_port);
        ::listen(fd_, 16);
        thread_ = std::thread([this] { serve(); });
    }
    scripted_server(scripted_server const&) = delete;
    scripted_server& operator=(scripted_server const&) = delete;
    ~scripted_server() { stop(); }

    [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + path_; }
    [[nodiscard]] int requests() const { return requests_.load(); }
    /// Every request's text, head and body, in order.
    [[nodiscard]] std::vector<std::string> seen() {
        std::lock_guard lock(mutex_);
        return seen_;
    }

    /// What every later request is answered with: a JSON body, its status, extra header lines ("Name:
    /// v\r\n").
    void answer(std::string body, int status = 200, std::string headers = {}) {
        std::lock_guard lock(mutex_);
        body_ = std::move(body);
        status_ = status;
        headers_ = std::move(headers);
    }

    /// Closes the listening socket: later connections are refused.
    void stop() {
        if (fd_ < 0)
            return;
        ::shutdown(fd_, SHUT_RDWR);
        thread_.join();
        ::close(fd_);
        fd_ = -1;
    }

private:
    void serve() {
        for (;;) {
            int const c = ::accept(fd_, nullptr, nullptr);
            if (c < 0)
                return;
            std::string request;
            char buffer[4096];
            std::size_t want = std::string::npos;
            for (;;) {
                auto const end = request.find("\r\n\r\n");
                if (end != std::string::npos && want == std::string::npos) {
                    want = end + 4;
                    auto const at = request.find("Content-Length: ");
                    if (at != std::string::npos && at < end)
                        want += std::stoul(request.substr(at + 16));
                }
                if (want != std::string::npos && request.size() >= want)
                    break;
                auto const n = ::recv(c, buffer, sizeof buffer, 0);
                if (n <= 0)
                    break;
                request.append(buffer, static_cast<std::size_t>(n));
            }
            ++requests_;
            std::string out;
            {
                std::lock_guard lock(mutex_);
                seen_.push_back(request);
                out = "HTTP/1.1 " + std::to_string(status_) +
                      " Scripted\r\nContent-Type: application/json\r\nContent-Length: " +
                      std::to_string(body_.size()) + "\r\nConnection: close\r\n" + headers_ + "\r\n" + body_;
            }
            for (std::size_t sent = 0; sent < out.size();) {
                auto const n = ::send(c, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
                if (n <= 0)
                    break;
                sent += static_cast<std::size_t>(n);
            }
            ::close(c);
        }
    }

    std::string path_;
    int fd_ = -1;
    std::uint16_t port_ = 0;
    std::thread thread_;
    std::atomic<int> requests_{0};
    std::mutex mutex_;
    std::string body_;
    int status_ = 200;
    std::string headers_;
    std::vector<std::string> seen_;
};

} // namespace auth_test_support
