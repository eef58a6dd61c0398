#include "http/prometheus_text.hpp"

#include "support/child_process.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <regex>

namespace duet::test::http {

endpoint metrics_endpoint_in(std::string const& stderr_text) {
    std::smatch m;
    static std::regex const said("metrics at (http://[^ \n]+)");
    if (!std::regex_search(stderr_text, m, said)) {
        ADD_FAILURE() << "no metrics URL on stderr:\n" << stderr_text;
        return {};
    }
    return endpoint::parse(m[1].str());
}

std::string scrape(endpoint const& metrics) {
    auto const r = exchange(metrics, request_spec{.method = "GET"});
    EXPECT_EQ(r.status, 200u);
    EXPECT_EQ(r.header("Content-Type").value_or(""), "text/plain; version=0.0.4; charset=utf-8");
    return r.body;
}

double sample(std::string const& text, std::string const& series) {
    auto const at = text.find("\n" + series + " ");
    if (at == std::string::npos)
        return 0;
    return std::stod(text.substr(at + series.size() + 2));
}

std::string promtool_check(std::string const& text) {
    child_process promtool({"/usr/bin/promtool", "check", "metrics"}, child_process::input::pipe);
    if (!promtool.running())
        return "promtool did not start (scripts/bootstrap installs the prometheus package)";
    std::size_t written = 0;
    while (written < text.size()) {
        auto const n = ::write(promtool.in(), text.data() + written, text.size() - written);
        if (n <= 0)
            break;
        written += static_cast<std::size_t>(n);
    }
    promtool.close_in();
    int const status = promtool.wait_exit(http_wait);
    return status == 0 ? std::string() : "exit " + std::to_string(status) + ": " + promtool.stderr_text();
}

} // namespace duet::test::http
