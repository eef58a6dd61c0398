// The client side of stdio (DIGEST §10): the server is our child; its stdin and stdout carry
// newline-delimited JSON-RPC and its stderr is ours (passed through untouched), or read line by line for
// stdio_settings::on_stderr. The child inherits those three descriptors and no other, and the environment
// its target gives (or ours). Shutdown closes its stdin, waits, then sends SIGTERM, waits, then SIGKILL.
#include <duet/jsonrpc/codec.hpp>

#include "support/busy_batching.hpp"
#include "support/descriptors.hpp"
#include "support/line_splitter.hpp"
#include "support/stderr_lines.hpp"
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

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <string_view>
#include <vector>

namespace duet::client::detail {

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;
constexpr auto tuple_awaitable = asio::as_tuple(use_awaitable);

namespace {

/// The read buffer's first size; it doubles while a line does not fit.
constexpr std::size_t initial_read_bytes = 16 * 1024;
/// How much of the child's stderr is read at once.
constexpr std::size_t stderr_read_bytes = 64 * 1024;
/// How much of its stderr a child may write in one stderr window; past it, reading waits for the next
/// window (the child's writes wait meanwhile): a child writing without end then costs this thread a bounded
/// share of its time, however fast it writes.
constexpr std::size_t stderr_bytes_per_window = 4 * 1024 * 1024;
constexpr auto stderr_window = std::chrono::seconds(1);
constexpr auto grace_after_eof = std::chrono::seconds(2);
constexpr auto grace_after_sigterm = std::chrono::seconds(2);

class stdio_transport : public transport, public std::enable_shared_from_this<stdio_transport> {
public:
    stdio_transport(asio::any_io_executor ex, stdio_target target, stdio_settings settings)
        : ex_(ex), target_(std::move(target)), settings_(std::move(settings)), to_child_(ex), from_child_(ex),
          child_stderr_(ex) {}

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
        // Every descriptor made here is close-on-exec from the start (pipe2): a child another thread forks
        // meanwhile inherits none of them.
        int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, status_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
        bool const read_stderr = static_cast<bool>(settings_.on_stderr);
        if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 ||
            ::pipe2(status_pipe, O_CLOEXEC) != 0 || (read_stderr && ::pipe2(err_pipe, O_CLOEXEC) != 0)) {
            int const e = errno;
            close_all({in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], status_pipe[0], status_pipe[1],
                       err_pipe[0], err_pipe[1]});
            co_return make_error(errc::spawn_failed, std::string("pipe: ") + std::strerror(e));
        }
        // Everything the child needs is made before fork: after it, only async-signal-safe calls.
        std::vector<std::string> argv_storage{target_.command};
        argv_storage.insert(argv_storage.end(), target_.args.begin(), target_.args.end());
        std::vector<char*> argv;
        for (auto& a : argv_storage)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        std::vector<std::string> env_storage;
        std::vector<char*> envp;
        if (target_.env) {
            for (auto const& [name, value] : *target_.env)
                env_storage.push_back(name + "=" + value);
            for (auto& e : env_storage)
                envp.push_back(e.data());
            envp.push_back(nullptr);
        }

        pid_t const pid = ::fork();
        if (pid < 0) {
            int const e = errno;
            close_all({in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], status_pipe[0], status_pipe[1],
                       err_pipe[0], err_pipe[1]});
            co_return make_error(errc::spawn_failed, std::string("fork: ") + std::strerror(e));
        }
        if (pid == 0) {
            // Child: only async-signal-safe calls from here on.
            become_stdio(in_pipe[0], 0);
            become_stdio(out_pipe[1], 1);
            if (read_stderr)
                become_stdio(err_pipe[1], 2);
            // Whatever else is open here is ours (the gateway's listening socket, its clients' connections,
            // other children's pipes), close-on-exec or not; the status pipe stays until exec closes it.
            support::close_descriptors_above_stdio(status_pipe[1]);
            ::signal(SIGPIPE, SIG_DFL);
            support::restore_scheduling_in_child();
            if (target_.env)
                ::execvpe(argv[0], argv.data(), envp.data());
            else
                ::execvp(argv[0], argv.data());
            int const e = errno;
            [[maybe_unused]] auto n = ::write(status_pipe[1], &e, sizeof e);
            ::_exit(127);
        }
        pid_ = pid;
        close_all({in_pipe[0], out_pipe[1], status_pipe[1], err_pipe[1]});
        int exec_errno = 0;
        auto const n = ::read(status_pipe[0], &exec_errno, sizeof exec_errno); // EOF: exec succeeded
        ::close(status_pipe[0]);
        if (n == static_cast<ssize_t>(sizeof exec_errno)) {
            close_all({in_pipe[1], out_pipe[0], err_pipe[0]});
            int status = 0;
            ::waitpid(pid_, &status, 0);
            pid_ = -1;
            co_return make_error(errc::spawn_failed,
                                 "cannot run " + target_.command + ": " + std::strerror(exec_errno));
        }
        to_child_.assign(in_pipe[1]);
        from_child_.assign(out_pipe[0]);
        auto self = shared_from_this();
        if (read_stderr) {
            child_stderr_.assign(err_pipe[0]);
            asio::co_spawn(ex_, async_read_stderr(self), asio::detached);
        }
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
        child_stderr_.close(ignored);
    }

private:
    static void close_all(std::initializer_list<int> fds) {
        for (int fd : fds)
            if (fd >= 0)
                ::close(fd);
    }

    // In the child: `fd` becomes descriptor `target`, without the close-on-exec mark it was made with. dup2
    // of a descriptor onto itself changes nothing, so that case clears the mark by hand.
    static void become_stdio(int fd, int target) noexcept {
        if (fd == target)
            ::fcntl(fd, F_SETFD, 0);
        else
            ::dup2(fd, target);
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

    // Hands on every whole line as soon as a read completes it. A line over max_message_bytes ends the
    // conversation (too_large) and is never read to its end: our end of the pipe closes, so a child still
    // writing it gets EPIPE instead of waiting on a reader that is gone. A last line without a newline is not
    // a message.
    static awaitable<void> async_read_loop(std::shared_ptr<stdio_transport> self) {
        auto const max_line = self->settings_.max_message_bytes;
        support::line_splitter split(max_line, std::min(initial_read_bytes, max_line + 1));
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
                boost::system::error_code ignored;
                self->from_child_.close(ignored);
                if (auto sink = self->sink_.lock())
                    sink->on_closed(message_too_large(max_line));
                co_return;
            }
        }
    }

    // The child's stderr, line by line to settings_.on_stderr, bounded (support/stderr_lines.hpp); reading
    // pauses once a window's bytes are spent. Ends at EOF (the child, and whatever it left its stderr to,
    // exited) or when async_close closes the pipe.
    static awaitable<void> async_read_stderr(std::shared_ptr<stdio_transport> self) {
        support::stderr_lines lines({});
        std::vector<char> buffer(stderr_read_bytes);
        auto const emit = [&](std::string_view line) {
            self->settings_.on_stderr(line);
        };
        asio::steady_timer pause(self->ex_);
        auto window_began = std::chrono::steady_clock::now();
        std::size_t window_bytes = 0;
        for (;;) {
            auto const read =
                co_await self->child_stderr_.async_read_some(asio::buffer(buffer), tuple_awaitable);
            auto const now = std::chrono::steady_clock::now();
            if (std::get<0>(read)) {
                lines.finish(now, emit);
                co_return;
            }
            auto const n = std::get<1>(read);
            lines.feed(std::string_view(buffer.data(), n), now, emit);
            if (now - window_began >= stderr_window) {
                window_began = now;
                window_bytes = 0;
            }
            window_bytes += n;
            if (window_bytes >= stderr_bytes_per_window) {
                pause.expires_at(window_began + stderr_window);
                co_await pause.async_wait(tuple_awaitable);
                window_began = std::chrono::steady_clock::now();
                window_bytes = 0;
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
        auto frame = jsonrpc::parse_frame(line, {.max_bytes = settings_.max_message_bytes});
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
    stdio_settings settings_;
    asio::posix::stream_descriptor to_child_;
    asio::posix::stream_descriptor from_child_;
    asio::posix::stream_descriptor child_stderr_; ///< open only while on_stderr reads it
    pid_t pid_ = -1;
    std::weak_ptr<transport_sink> sink_;
    std::string out_;  ///< being written
    std::string next_; ///< lines sent meanwhile, written next
    bool writing_ = false;
    bool closing_ = false;
};

} // namespace

std::shared_ptr<transport> make_stdio_transport(asio::any_io_executor ex, stdio_target target,
                                                stdio_settings settings) {
    return std::make_shared<stdio_transport>(ex, std::move(target), std::move(settings));
}

error message_too_large(std::size_t max_message_bytes, unsigned http_status) {
    return make_error(
        errc::too_large,
        "the server sent a message over " + std::to_string(max_message_bytes) +
            " bytes (the limit of this client); the connection was dropped without reading the rest",
        http_status);
}

} // namespace duet::client::detail
