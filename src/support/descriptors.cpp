#include "support/descriptors.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace duet::support {

namespace {

// Closes [first, last] (both ends included, last may be UINT_MAX); false when the kernel has no
// close_range.
bool close_range_of(unsigned first, unsigned last) noexcept {
#ifdef SYS_close_range
    if (first > last)
        return true;
    return ::syscall(SYS_close_range, first, last, 0) == 0;
#else
    (void)first;
    (void)last;
    return false;
#endif
}

// The number a /proc/self/fd entry names; -1 for "." and "..".
int parse_fd(char const* name) noexcept {
    if (*name < '0' || *name > '9')
        return -1;
    long n = 0;
    for (; *name >= '0' && *name <= '9'; ++name) {
        n = n * 10 + (*name - '0');
        if (n > INT_MAX)
            return -1;
    }
    return *name == '\0' ? static_cast<int>(n) : -1;
}

// Closes what /proc/self/fd lists, reading it with the raw getdents64 (opendir allocates); false when /proc
// is not there. Closing while reading is sound for /proc/self/fd: each read lists what is open then, and a
// pass that closed something is followed by another until one finds nothing left.
} // namespace

bool detail::close_listed_descriptors(int keep) noexcept {
    int const dir = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return false;
    alignas(8) char buf[4096];
    for (bool closed_some = true; closed_some;) {
        closed_some = false;
        ::lseek(dir, 0, SEEK_SET);
        for (;;) {
            auto const n = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
            if (n <= 0)
                break;
            for (long at = 0; at < n;) {
                // struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, char name[].
                unsigned short reclen = 0;
                std::memcpy(&reclen, buf + at + 16, sizeof reclen);
                int const fd = parse_fd(buf + at + 19);
                if (fd > 2 && fd != keep && fd != dir) {
                    ::close(fd);
                    closed_some = true;
                }
                at += reclen;
            }
        }
    }
    ::close(dir);
    return true;
}

void close_descriptors_above_stdio(int keep) noexcept {
    if (keep > 2) {
        if (close_range_of(3, static_cast<unsigned>(keep) - 1) &&
            close_range_of(static_cast<unsigned>(keep) + 1, UINT_MAX))
            return;
    } else if (close_range_of(3, UINT_MAX)) {
        return;
    }
    if (detail::close_listed_descriptors(keep))
        return;
    rlimit limit{};
    rlim_t last = 65536;
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        last = std::min<rlim_t>(limit.rlim_cur, 1 << 20);
    for (rlim_t fd = 3; fd < last; ++fd)
        if (static_cast<int>(fd) != keep)
            ::close(static_cast<int>(fd));
}

bool set_close_on_exec(int fd) noexcept {
    int const flags = ::fcntl(fd, F_GETFD);
    return flags >= 0 && ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0;
}

} // namespace duet::support
