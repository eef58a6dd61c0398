// What a child process may inherit of ours: its stdin, stdout and stderr, and nothing else. Every pipe and
// socket Duet opens is marked close-on-exec where it is made, but a descriptor some other part of the
// process opened without the mark (Asio's sockets carry none) would still reach a child, and with it a
// listening socket or a client's connection: the child could answer on it, or keep it open after we closed
// ours. So a forked child also closes everything above stderr before exec.
#pragma once

namespace duet::support {

/// For a forked child before exec: closes every descriptor above 2 but `keep` (-1: none). Only
/// async-signal-safe calls: close_range(2) where the kernel has it, else the numbers /proc/self/fd lists
/// (read with getdents64, no allocation), else every number below the descriptor limit.
void close_descriptors_above_stdio(int keep) noexcept;

/// Marks `fd` close-on-exec; false when it could not be (not an open descriptor).
bool set_close_on_exec(int fd) noexcept;

namespace detail {
/// close_descriptors_above_stdio's fallback where the kernel has no close_range: what /proc/self/fd lists.
/// False when /proc is not mounted. Exposed for its test only.
bool close_listed_descriptors(int keep) noexcept;
} // namespace detail

} // namespace duet::support
