// The client side of stdio (DIGEST §10): the server is our child; its stdin and stdout carry
// newline-delimited JSON-RPC and its stderr is ours (passed through untouched). Shutdown closes its stdin,
// waits, then sends SIGTERM, waits, then SIGKILL.
#include <duet/jsonrpc/codec.hpp>

#include "support/busy_batching.hpp"
#include "support/line_splitter.hpp"
#include "transport.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <string_view>

namespace duet::client::detail {

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;
constexpr auto tuple_awaitable = asio::as_tuple(use_awaitable);

namespace {

constexpr std::size_t max_line_bytes = 64 * 1024 * 1024;
/// The read buffer's first size; it doubles while a line does not fit.
constexpr std::size_t initial_read_bytes = 16 * 1024;
constexpr auto grace_after_eof = std::chrono::seconds(2);
constexpr auto grace_after_sigterm = std::chrono::seconds(2);

class stdio_transport : public transport, public std::enable_shared_from_this<stdio_transport> {
public:
    stdio_transport(asio::any_io_executor ex, stdio_target target)
        : ex_(ex), target_(std::move(target)), to_child_(ex), from_child_(ex) {}

    ~stdio_transport() override {
        // Never leave a child behind, even when nobody called async_close().
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            int status = 0;
            ::waitpid(pid_, &status, 0);
        }
    }

    awaitable<result<void>> async_start(std::weak_ptr<transport_sink> sink) override {
        sink_ = std::move(sink);
        // A write to a child that already exited must be an error, not a signal that ends this process.
        std::signal(SIGPIPE, SIG_IGN);
        int in_pipe[2], out_pipe[2], status_pipe[2];
        if (::pipe2(in_pipe, O_CLOEXEC) != 0)
            co_return make_error(errc::spawn_failed, std::string("pipe: ") + std::strerror(errno));
        if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
            close_all({in_pipe[0], in_pipe[1]});
            co_return make_error(errc::spawn_failed, std::string("pipe: ") + std::strerror(errno));
        }
        if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
            close_all({in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1]});
            co_return make_error(errc::spawn_failed, std::string("pipe: ") + std::strerror(errno));
        }
        std::vector<std::string> argv_storage{target_.command};
        argv_storage.insert(argv_storage.end(), target_.args.begin(), target_.args.end());
        std::vector<char*> argv;
        for (auto& a : argv_storage)
            argv.push_back(a.data());
        argv.push_back(nullptr);

        pid_t const pid = ::fork();
        if (pid < 0) {
            close_all({in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], status_pipe[0], status_pipe[1]});
            co_return make_error(errc::spawn_failed, std::string("fork: ") + std::strerror(errno));
        }
        if (pid == 0) {
            // Child: only async-signal-safe calls from here on.
            ::dup2(in_pipe[0], 0);
            ::dup2(out_pipe[1], 1);
            ::signal(SIGPIPE, SIG_DFL);
            support::restore_scheduling_in_child();
            ::execvp(argv[0], argv.data());
            int const e = errno;
            [[maybe_unused]] auto n = ::write(status_pipe[1], &e, sizeof e);
            ::_exit(127);
        }
        pid_ = pid;
        close_all({in_pipe[0], out_pipe[1], status_pipe[1]});
        int exec_errno = 0;
        auto const n = ::read(status_pipe[0], &exec_errno, sizeof exec_errno); // EOF: exec succeeded
        ::close(status_pipe[0]);
        if (n == static_cast<ssize_t>(sizeof exec_errno)) {
            close_all({in_pipe[1], out_pipe[0]});
            int status = 0;
            ::waitpid(pid_, &status, 0);
            pid_ = -1;
            co_return make_error(errc::spawn_failed,
                                 "cannot run " + target_.command + ": " + std::strerror(exec_errno));
        }
        to_child_.assign(in_pipe[1]);
        from_child_.assign(out_pipe[0]);
        auto self = shared_from_this();
        asio::co_spawn(ex_, async_read_loop(std::move(self)), asio::detached);
        co_return result<void>{};
    }

    void send(jsonrpc::message m, send_facts) override {
        if (closing_)
            return;
        auto line = jsonrpc::serialize(m);
        line += '\n';
        if (writing_) {
            next_ += line; // lines queued meanwhile (calls carried at once) go out in one write
            return;
        }
        // Nothing being written: this line goes out now, from here (a speculative write), with no coroutine
        // of its own.
        writing_ = true;
        out_ = std::move(line);
        write_out();
    }

    void abandon(jsonrpc::request_id const&) override {} // stdio cancels with notifications/cancelled
    void begin_legacy_session(protocol::version) override {}
    [[nodiscard]] bool is_http() const noexcept override { return false; }

    awaitable<void> async_close() override {
        closing_ = true;
        boost::system::error_code ignored;
        to_child_.close(ignored); // EOF on the server's stdin: it SHOULD exit
        if (pid_ > 0) {
            if (!co_await async_wait_exit(grace_after_eof)) {
                ::kill(pid_, SIGTERM);
                if (!co_await async_wait_exit(grace_after_sigterm)) {
                    ::kill(pid_, SIGKILL);
                    int status = 0;
                    ::waitpid(pid_, &status, 0);
                    pid_ = -1;
                }
            }
        }
        from_child_.close(ignored);
    }

private:
    static void close_all(std::initializer_list<int> fds) {
        for (int fd : fds)
            ::close(fd);
    }

    // Polls for the child's exit until `limit` passes; true once it is reaped.
    awaitable<bool> async_wait_exit(std::chrono::milliseconds limit) {
        asio::steady_timer timer(ex_);
        auto const deadline = std::chrono::steady_clock::now() + limit;
        for (;;) {
            int status = 0;
            auto const r = ::waitpid(pid_, &status, WNOHANG);
            if (r == pid_ || r < 0) {
                pid_ = -1;
                co_return true;
            }
            if (std::chrono::steady_clock::now() >= deadline)
                co_return false;
            timer.expires_after(std::chrono::milliseconds(10));
            co_await timer.async_wait(tuple_awaitable);
        }
    }

    void write_out() {
        asio::async_write(
            to_child_, asio::buffer(out_),
            [self = shared_from_this()](boost::system::error_code ec, std::size_t) { self->wrote(ec); });
    }

    void wrote(boost::system::error_code ec) {
        out_.clear();
        if (ec) {
            next_.clear();
            writing_ = false;
            return; // the reader reports the child's end
        }
        if (next_.empty()) {
            writing_ = false;
            return;
        }
        out_.swap(next_);
        write_out();
    }

    // Hands on every whole line as soon as a read completes it. A line of max_line_bytes or more ends the
    // conversation with the error async_read_until gave at its limit (it counted the buffer, so a line of
    // exactly the limit was already too long); a last line without a newline is not a message.
    static awaitable<void> async_read_loop(std::shared_ptr<stdio_transport> self) {
        support::line_splitter split(max_line_bytes - 1, initial_read_bytes);
        bool oversized = false;
        for (;;) {
            auto const room = split.space();
            auto const read = co_await self->from_child_.async_read_some(
                asio::buffer(room.data(), room.size()), tuple_awaitable);
            auto const ec = std::get<0>(read);
            auto const n = std::get<1>(read);
            if (ec) {
                self->report_closed(ec);
                co_return;
            }
            split.commit(
                n,
                [&](std::string_view line) {
                    if (!oversized)
                        self->take_line(line);
                },
                [&] { oversized = true; });
            if (oversized) {
                self->report_closed(asio::error::not_found);
                co_return;
            }
        }
    }

    void report_closed(boost::system::error_code ec) {
        if (auto sink = sink_.lock())
            sink->on_closed(make_error(
                errc::closed, ec == asio::error::eof ? "the server process closed its output"
                                                     : "reading from the server failed: " + ec.message()));
    }

    void take_line(std::string_view line) {
        auto frame = jsonrpc::parse_frame(line, {.max_bytes = max_line_bytes});
        auto const deliver = [&](jsonrpc::parsed& p) {
            if (!p)
                return; // not a message; nothing to answer on the client side
            if (auto sink = sink_.lock())
                sink->on_message(std::move(*p), 0, nullptr);
        };
        if (auto* one = std::get_if<jsonrpc::parsed>(&frame.content))
            deliver(*one);
        else
            for (auto& e : std::get<jsonrpc::batch>(frame.content).elements)
                deliver(e);
    }

    asio::any_io_executor ex_;
    stdio_target target_;
    asio::posix::stream_descriptor to_child_;
    asio::posix::stream_descriptor from_child_;
    pid_t pid_ = -1;
    std::weak_ptr<transport_sink> sink_;
    std::string out_;  ///< being written
    std::string next_; ///< lines sent meanwhile, written next
    bool writing_ = false;
    bool closing_ = false;
};

} // namespace

std::shared_ptr<transport> make_stdio_transport(asio::any_io_executor ex, stdio_target target) {
    return std::make_shared<stdio_transport>(ex, std::move(target));
}

} // namespace duet::client::detail
