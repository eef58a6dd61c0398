// A forked child closes every descriptor above stderr but the one it keeps (src/support/descriptors.hpp):
// through close_range, and through its fallback over /proc/self/fd. Each check runs in a forked child, whose
// exit status says which descriptor was still open (0: as expected).
#include "support/descriptors.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <vector>

namespace {

bool is_open(int fd) {
    return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF;
}

// Opens pipes and a socket without close-on-exec (as Asio opens its sockets), forks, runs `close_all(keep)`
// in the child and checks there: 0 when only 0-2 and `keep` are left, else 10 + the index of the
// descriptor that was wrong.
int run_in_child(std::function<void(int keep)> const& close_all) {
    int a[2], b[2];
    EXPECT_EQ(::pipe(a), 0);
    EXPECT_EQ(::pipe(b), 0);
    int const sock = ::socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_GE(sock, 0);
    int const high = ::fcntl(a[0], F_DUPFD, 200); // a number far above the others
    std::vector<int> const closed{a[0], a[1], b[0], sock, high};
    int const keep = b[1];
    pid_t const pid = ::fork();
    if (pid == 0) {
        close_all(keep);
        for (std::size_t i = 0; i < closed.size(); ++i)
            if (is_open(closed[i]))
                ::_exit(10 + static_cast<int>(i));
        if (!is_open(keep))
            ::_exit(2);
        for (int fd = 0; fd <= 2; ++fd)
            if (!is_open(fd))
                ::_exit(3);
        ::_exit(0);
    }
    for (int fd : {a[0], a[1], b[0], b[1], sock, high})
        ::close(fd);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ChildDescriptors, AForkedChildClosesEverythingAboveStderrButTheOneItKeeps) {
    EXPECT_EQ(run_in_child([](int keep) { duet::support::close_descriptors_above_stdio(keep); }), 0);
}

TEST(ChildDescriptors, TheFallbackOverProcSelfFdClosesTheSame) {
    EXPECT_EQ(run_in_child([](int keep) {
                  if (!duet::support::detail::close_listed_descriptors(keep))
                      ::_exit(4);
              }),
              0);
}

TEST(ChildDescriptors, CloseOnExecIsSetAndAClosedDescriptorSaysSo) {
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    EXPECT_EQ(::fcntl(p[0], F_GETFD) & FD_CLOEXEC, 0);
    EXPECT_TRUE(duet::support::set_close_on_exec(p[0]));
    EXPECT_NE(::fcntl(p[0], F_GETFD) & FD_CLOEXEC, 0);
    ::close(p[0]);
    ::close(p[1]);
    EXPECT_FALSE(duet::support::set_close_on_exec(p[0]));
}

} // namespace
