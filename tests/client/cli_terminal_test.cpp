// `duet call` answering a server's elicitation at a terminal: one prompt per field of the requested schema,
// the typed line sent back as the answer, end of input a cancel. The command runs on a pseudo-terminal, as a
// user would run it; without a terminal it declines (cli_test.cpp).
#include <gtest/gtest.h>

#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace {

/// `duet call ask_name --era ERA -- duet serve --stdio` on a pseudo-terminal, fed `reply` once it prompts.
struct terminal_run {
    int code = -1;
    std::string screen;       ///< everything the command and its server wrote to the terminal
    bool no_terminal = false; ///< this machine gives no pseudo-terminals (a container without devpts)
};

terminal_run call_ask_name_at_terminal(char const* era, std::string const& reply) {
    terminal_run run;
    int master = -1;
    pid_t const pid = ::forkpty(&master, nullptr, nullptr, nullptr);
    if (pid < 0) {
        run.no_terminal = true;
        return run;
    }
    if (pid == 0) {
        ::execl(DUET_BINARY, DUET_BINARY, "call", "ask_name", "--era", era, "--", DUET_BINARY, "serve",
                "--stdio", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    bool replied = false;
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
        auto const left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            ADD_FAILURE() << "the command did not finish; the terminal shows:\n" << run.screen;
            ::kill(pid, SIGKILL);
            break;
        }
        pollfd p{master, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0)
            continue;
        char buf[512];
        auto const n = ::read(master, buf, sizeof buf);
        if (n <= 0)
            break; // EIO: the last process holding the terminal has gone
        run.screen.append(buf, static_cast<std::size_t>(n));
        if (!replied && run.screen.find("name (string): ") != std::string::npos) {
            replied = true;
            [[maybe_unused]] auto const w = ::write(master, reply.data(), reply.size());
        }
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(master);
    run.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return run;
}

class DuetCliAtTerminal : public ::testing::TestWithParam<char const*> {};

TEST_P(DuetCliAtTerminal, PromptsForTheRequestedFieldAndSendsTheTypedValue) {
    auto const run = call_ask_name_at_terminal(GetParam(), "Ada\n");
    if (run.no_terminal)
        GTEST_SKIP() << "no pseudo-terminal on this machine";
    EXPECT_EQ(run.code, 0) << run.screen;
    EXPECT_NE(run.screen.find("duet: the server asks: What is your name?"), std::string::npos) << run.screen;
    EXPECT_NE(run.screen.find("Hello, Ada!"), std::string::npos) << run.screen;
}

TEST_P(DuetCliAtTerminal, EndOfInputAtThePromptCancels) {
    auto const run = call_ask_name_at_terminal(GetParam(), "\x04"); // ^D: end of input on a terminal
    if (run.no_terminal)
        GTEST_SKIP() << "no pseudo-terminal on this machine";
    EXPECT_EQ(run.code, 0) << run.screen;
    EXPECT_NE(run.screen.find("The user declined to answer"), std::string::npos) << run.screen;
    EXPECT_EQ(run.screen.find("Hello,"), std::string::npos) << run.screen;
}

INSTANTIATE_TEST_SUITE_P(BothEras, DuetCliAtTerminal, ::testing::Values("legacy", "modern"));

} // namespace
