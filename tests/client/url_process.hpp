// File: tests/client/url_process.hpp
//
// A helper process that serves HTTP and prints its URL as the first stdout line (a fake server, an interop
// peer). Its stdin stays open while the object lives: closing it is how the process learns to exit; the
// destructor then sends SIGTERM and reaps it.
//
//     url_process p({node, fake("http_scripted.mjs"), "auth"});
//     if(p.url().empty()) return;   // a test failure was recorded
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace duet::test::client_side {

class url_process {
public:
    explicit url_process(std::vector<std::string> argv, std::vector<std::string> env = {});
    ~url_process();
    url_process(url_process const&) = delete;
    url_process& operator=(url_process const&) = delete;

    [[nodiscard]] std::string const& url() const noexcept { return url_; }

private:
    pid_t pid_ = -1;
    int in_ = -1;
    int out_ = -1;
    std::string url_;
};

} // namespace duet::test::client_side
