// The part of a gathered write a socket takes at once, without waiting, and what is left of it.
//
// An Asio async_write that the socket takes whole in its first attempt still hands its completion to the
// io_context's queue (a handler is never run inside the call that started it): one more turn of the event
// loop, and one more epoll_wait, per answer. On a loopback socket with room, which is nearly every answer, a
// non-blocking sendmsg first does the whole write in the call; async_write then only carries what is left,
// which is also where an error is reported (a failed attempt here sends nothing).
#pragma once

#include <boost/asio/buffer.hpp>

#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <cstddef>

namespace duet::support {

/// Sends what `fd` takes now of `buffers` (MSG_DONTWAIT, no SIGPIPE) and returns what is left of them: all of
/// them after any error, none when the socket took everything (boost::asio::buffer_size of it is 0).
template<std::size_t N>
[[nodiscard]] std::array<boost::asio::const_buffer, N>
send_now(int fd, std::array<boost::asio::const_buffer, N> buffers) noexcept {
    std::array<iovec, N> iov{};
    for (std::size_t i = 0; i < N; ++i)
        iov[i] = {const_cast<void*>(buffers[i].data()), buffers[i].size()};
    msghdr msg{};
    msg.msg_iov = iov.data();
    msg.msg_iovlen = N;
    auto const n = ::sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    auto sent = n > 0 ? static_cast<std::size_t>(n) : 0;
    for (auto& b : buffers) {
        auto const skip = sent < b.size() ? sent : b.size();
        b += skip;
        sent -= skip;
    }
    return buffers;
}

} // namespace duet::support
