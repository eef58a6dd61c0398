// What `duet` does with a credentials file it cannot trust (cli_auth.hpp, auth::file_store): an error in
// words, exit 2, and the file left exactly as it was; and `duet logout` / `duet auth status` with nothing
// kept. Runs the real binary with its own $XDG_CONFIG_HOME.
#include "support/child_process.hpp"
#include "support/files.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace auth_cli {

using duet::test::child_process;

struct cli_outcome {
    int code = -1;
    std::string out;
    std::string err;
};

// A scratch $XDG_CONFIG_HOME for the test, with the duet directory made private.
class config_home {
public:
    config_home() {
        auto pattern = ::testing::TempDir() + "duet-auth-cli-XXXXXX";
        if (::mkdtemp(pattern.data()) == nullptr)
            ADD_FAILURE() << "mkdtemp " << pattern;
        path_ = pattern;
        ::mkdir((path_ + "/duet").c_str(), 0700);
        ::setenv("XDG_CONFIG_HOME", path_.c_str(), 1);
    }
    ~config_home() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    [[nodiscard]] std::string file() const { return path_ + "/duet/credentials.json"; }

private:
    std::string path_;
};

cli_outcome run_duet(std::vector<std::string> args) {
    args.insert(args.begin(), DUET_BINARY);
    child_process child(std::move(args), child_process::input::null);
    cli_outcome o;
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    char buffer[4096];
    for (ssize_t n; (n = ::read(child.out(), buffer, sizeof buffer)) > 0;)
        o.out.append(buffer, static_cast<std::size_t>(n));
    o.code = child.wait_exit(deadline);
    o.err = child.stderr_text();
    return o;
}

void write(std::string const& path, std::string const& text, mode_t mode) {
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
}

TEST(DuetAuthCli, NothingKeptIsSaidPlainly) {
    config_home home;
    auto const status = run_duet({"auth", "status"});
    EXPECT_EQ(status.code, 0) << status.err;
    EXPECT_EQ(status.out, "not logged in\n");
    auto const one = run_duet({"auth", "status", "http://127.0.0.1:9/mcp"});
    EXPECT_EQ(one.code, 6) << "asking about one server that has no tokens is an authorization answer";
    auto const out = run_duet({"logout", "http://127.0.0.1:9/mcp"});
    EXPECT_EQ(out.code, 0) << out.err;
    EXPECT_EQ(out.out, "no credentials kept for http://127.0.0.1:9/mcp\n");
}

TEST(DuetAuthCli, ACorruptCredentialsFileIsAnErrorAndStaysAsItWas) {
    config_home home;
    write(home.file(), "{\"tokens\": 7}", 0600);
    for (auto const& args : std::vector<std::vector<std::string>>{
             {"auth", "status"}, {"logout"}, {"call", "http://127.0.0.1:9/mcp", "echo"}}) {
        auto const r = run_duet(args);
        EXPECT_EQ(r.code, 2) << args.front() << ": " << r.err;
        EXPECT_NE(r.err.find(home.file() + " is not a Duet credentials file"), std::string::npos) << r.err;
        EXPECT_EQ(duet::test::read_file(home.file()), "{\"tokens\": 7}") << "never overwritten";
    }
}

TEST(DuetAuthCli, ACredentialsFileOpenToOthersIsRefused) {
    config_home home;
    write(home.file(), "{\"tokens\":[],\"registrations\":[]}", 0644);
    auto const r = run_duet({"logout"});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("is open to other users (mode 0644): chmod 600"), std::string::npos) << r.err;
}

TEST(DuetAuthCli, ASecretNeedsItsClientIdAndNeverComesFromArgv) {
    config_home home;
    ::setenv("DUET_CLIENT_SECRET", "s3cret", 1);
    auto const r = run_duet({"login", "http://127.0.0.1:9/mcp"});
    ::unsetenv("DUET_CLIENT_SECRET");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("a client secret needs its --client-id"), std::string::npos) << r.err;
    auto const literal = run_duet({"login", "http://127.0.0.1:9/mcp", "--client-secret", "x"});
    EXPECT_NE(literal.code, 0) << "there is no --client-secret flag: secrets stay off the command line";
}

} // namespace auth_cli
