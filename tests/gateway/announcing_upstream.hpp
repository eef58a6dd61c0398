// File: tests/gateway/announcing_upstream.hpp
//
// The files of tests/gateway/announcing_upstream.mjs, an upstream the gateway tests drive from outside: the
// journal every instance follows (announcements to make), the log every instance writes (started,
// subscribe, unsubscribe), in a directory of the test's own.
//
//     announcing_upstream up;
//     gateway_process gw(up.upstream(/*modern=*/false), {"--era", "legacy"});
//     up.announce("updated test://watched");
//     ASSERT_TRUE(up.wait_for("subscribe test://watched"));
#pragma once

#include "gateway/gateway_process.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace duet::test::gateway {

#define DUET_SKIP_WITHOUT_PINNED_NODE()                                                                      \
    if (::duet::test::gateway::pinned_node().empty())                                                        \
    GTEST_SKIP() << "Node is not installed in tests/interop (run scripts/bootstrap)"

/// The announcing upstream's two files, in a directory of the test's own.
class announcing_upstream {
public:
    announcing_upstream() {
        static std::atomic<int> n{0};
        dir_ = std::filesystem::temp_directory_path() /
               ("duet-gateway-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
        std::filesystem::create_directories(dir_);
        std::ofstream(dir_ / "log").close();
        std::ofstream(dir_ / "journal").close();
    }
    ~announcing_upstream() {
        std::error_code ignored;
        std::filesystem::remove_all(dir_, ignored);
    }

    /// The gateway's --upstream for it.
    [[nodiscard]] std::string upstream(bool modern) const {
        return "stdio:" + pinned_node() + " " DUET_SOURCE_DIR "/tests/gateway/announcing_upstream.mjs " +
               (dir_ / "log").string() + " " + (dir_ / "journal").string() + (modern ? " --modern" : "");
    }

    /// Every instance hears of it (see announcing_upstream.mjs for the lines).
    void announce(std::string const& line) const {
        std::ofstream(dir_ / "journal", std::ios::app) << line << "\n";
    }

    /// The log's lines, each "PID WHAT [URI]".
    [[nodiscard]] std::vector<std::string> log() const {
        std::ifstream in(dir_ / "log");
        std::vector<std::string> lines;
        for (std::string line; std::getline(in, line);)
            lines.push_back(line);
        return lines;
    }

    /// The pids that logged `what` (e.g. "subscribe test://watched"), in order.
    [[nodiscard]] std::vector<std::string> pids_that(std::string const& what) const {
        std::vector<std::string> pids;
        for (auto const& line : log()) {
            auto const space = line.find(' ');
            if (space != std::string::npos && line.substr(space + 1) == what)
                pids.push_back(line.substr(0, space));
        }
        return pids;
    }

    /// Waits until `count` instances' log lines say `what`; false when they do not in time.
    bool wait_for(std::string const& what, std::size_t count = 1) const {
        auto const deadline = std::chrono::steady_clock::now() + wait_limit;
        while (std::chrono::steady_clock::now() < deadline) {
            if (pids_that(what).size() >= count)
                return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return false;
    }

    [[nodiscard]] std::string log_text() const {
        std::ostringstream out;
        for (auto const& line : log())
            out << line << "\n";
        return out.str();
    }

private:
    std::filesystem::path dir_;
};

} // namespace duet::test::gateway
