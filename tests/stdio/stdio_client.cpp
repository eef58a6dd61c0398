#include "stdio/stdio_client.hpp"

#include "stdio/messages.hpp"

#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace duet::test {

namespace json = boost::json;
using steady = std::chrono::steady_clock;

namespace {

std::vector<std::string> serve_stdio_args(std::vector<std::string> extra_args) {
    std::vector<std::string> args{DUET_BINARY, "serve", "--stdio"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    return args;
}

} // namespace

stdio_client::stdio_client(std::vector<std::string> extra_args, served_eras eras)
    : log_(eras), child_(serve_stdio_args(std::move(extra_args)), child_process::input::pipe) {
    if (!child_.running())
        return;
    ::fcntl(child_.out(), F_SETFL, ::fcntl(child_.out(), F_GETFL) | O_NONBLOCK);
    ::fcntl(child_.in(), F_SETFL, ::fcntl(child_.in(), F_GETFL) | O_NONBLOCK);
}

stdio_client::~stdio_client() {
    close_input();
    // Bounded: a healthy child exits at end of input; one that does not is killed by child_'s destructor.
    auto const deadline = steady::now() + std::chrono::seconds(10);
    while (!eof_ && pump(deadline)) {
    }
    (void)child_.exited_by(deadline);
}

void stdio_client::close_input() {
    child_.close_in();
}

void stdio_client::close_output() {
    child_.close_out();
    eof_ = true;
}

std::string stdio_client::stderr_text() const {
    return child_.stderr_text();
}

void stdio_client::take_lines() {
    std::size_t nl;
    while ((nl = pending_.find('\n')) != std::string::npos) {
        std::string line = pending_.substr(0, nl);
        pending_.erase(0, nl + 1);
        if (line.empty()) {
            ADD_FAILURE() << "the server wrote an empty line";
            continue;
        }
        log_.record_received(line);
    }
}

bool stdio_client::pump(steady::time_point deadline) {
    if (eof_ || child_.out() < 0)
        return false;
    pollfd p{child_.out(), POLLIN, 0};
    int const n = ::poll(&p, 1, poll_ms_until(deadline));
    if (n < 0 && errno == EINTR)
        return true;
    if (n <= 0)
        return steady::now() < deadline;
    char buf[64 * 1024];
    for (;;) {
        auto const got = ::read(child_.out(), buf, sizeof buf);
        if (got > 0) {
            pending_.append(buf, static_cast<std::size_t>(got));
            continue;
        }
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        eof_ = true; // 0: the child closed its stdout
        break;
    }
    take_lines();
    if (eof_ && !pending_.empty()) {
        ADD_FAILURE() << "the server's output ended without a newline: " << pending_;
        pending_.clear();
    }
    return !eof_;
}

void stdio_client::send_raw(std::string_view bytes, json::value const& as) {
    if (auto const* many = as.if_array())
        for (auto const& m : *many)
            log_.record_sent(m);
    else if (!as.is_null())
        log_.record_sent(as);
    auto const deadline = steady::now() + default_wait;
    while (!bytes.empty()) {
        if (child_.in() < 0) {
            ADD_FAILURE() << "writing after the input was closed";
            return;
        }
        pollfd fds[2] = {{child_.in(), POLLOUT, 0}, {eof_ ? -1 : child_.out(), POLLIN, 0}};
        int const n = ::poll(fds, 2, poll_ms_until(deadline));
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 && steady::now() >= deadline) {
            ADD_FAILURE() << "timed out writing to the server; its stderr:\n" << stderr_text();
            return;
        }
        if (fds[1].revents)
            pump(steady::now()); // drain its output so neither side blocks on a full pipe
        if (fds[0].revents & (POLLERR | POLLHUP)) {
            ADD_FAILURE() << "the server closed its input; its stderr:\n" << stderr_text();
            return;
        }
        if (fds[0].revents & POLLOUT) {
            auto const w = ::write(child_.in(), bytes.data(), bytes.size());
            if (w > 0)
                bytes.remove_prefix(static_cast<std::size_t>(w));
            else if (w < 0 && errno != EAGAIN && errno != EINTR) {
                ADD_FAILURE() << "write to the server: " << std::strerror(errno);
                return;
            }
        }
    }
}

void stdio_client::send(json::value const& message) {
    send_raw(json::serialize(message) + "\n", message);
}

std::optional<std::size_t> stdio_client::wait_for(std::function<bool(json::value const&)> const& pred,
                                                  std::size_t from, std::chrono::milliseconds timeout) {
    auto const deadline = steady::now() + timeout;
    std::size_t i = from;
    for (;;) {
        auto const& all = log_.received();
        for (; i < all.size(); ++i)
            if (pred(all[i]))
                return i;
        if (eof_) {
            ADD_FAILURE() << "the server closed its output before the awaited message; its stderr:\n"
                          << stderr_text();
            return std::nullopt;
        }
        if (steady::now() >= deadline) {
            ADD_FAILURE() << "timed out waiting for a message from the server; its stderr:\n"
                          << stderr_text();
            return std::nullopt;
        }
        pump(deadline);
    }
}

json::value stdio_client::response(json::value const& id, std::chrono::milliseconds timeout) {
    auto const i = wait_for([&](json::value const& m) { return is_response_to(m, id); }, 0, timeout);
    if (!i) {
        ADD_FAILURE() << "no response to id " << id;
        return nullptr;
    }
    return messages()[*i];
}

int stdio_client::finish(std::chrono::milliseconds timeout) {
    close_input();
    auto const deadline = steady::now() + timeout;
    while (!eof_ && steady::now() < deadline)
        pump(deadline);
    if (!eof_) {
        ADD_FAILURE() << "the server did not close its output after end of input; its stderr:\n"
                      << stderr_text();
        return -1;
    }
    return child_.wait_exit(deadline);
}

void stdio_client::expect_schema_valid() {
    log_.expect_schema_valid();
}

} // namespace duet::test
