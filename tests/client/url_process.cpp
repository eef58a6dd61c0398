#include "client/url_process.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

extern char** environ;

namespace duet::test::client_side {

url_process::url_process(std::vector<std::string> argv, std::vector<std::string> env) {
    int in_pipe[2], out_pipe[2];
    if (::pipe(in_pipe) != 0 || ::pipe(out_pipe) != 0) {
        ADD_FAILURE() << "pipe: " << std::strerror(errno);
        return;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    posix_spawn_file_actions_addclose(&actions, in_pipe[1]);
    posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
    std::vector<char*> args;
    for (auto& a : argv)
        args.push_back(a.data());
    args.push_back(nullptr);
    std::vector<std::string> env_storage;
    for (char** e = environ; *e; ++e)
        env_storage.emplace_back(*e);
    env_storage.insert(env_storage.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (auto& e : env_storage)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    int const rc = ::posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    in_ = in_pipe[1];
    out_ = out_pipe[0];
    if (rc != 0) {
        pid_ = -1;
        ADD_FAILURE() << "cannot start " << argv[0] << ": " << std::strerror(rc);
        return;
    }
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::string line;
    while (std::chrono::steady_clock::now() < deadline) {
        pollfd p{out_, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0)
            continue;
        char c;
        auto const n = ::read(out_, &c, 1);
        if (n <= 0)
            break;
        if (c == '\n') {
            url_ = line;
            return;
        }
        line += c;
    }
    ADD_FAILURE() << argv[0] << " printed no URL (got \"" << line << "\")";
}

url_process::~url_process() {
    if (in_ >= 0)
        ::close(in_);
    if (out_ >= 0)
        ::close(out_);
    if (pid_ > 0) {
        ::kill(pid_, SIGTERM);
        int status = 0;
        ::waitpid(pid_, &status, 0);
    }
}

} // namespace duet::test::client_side
