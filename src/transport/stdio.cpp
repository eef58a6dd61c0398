#include <duet/server/connection.hpp>
#include <duet/transport/stdio.hpp>

#include "support/line_splitter.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace duet::transport {

namespace {

namespace asio = boost::asio;

constexpr std::size_t read_chunk = 64 * 1024;

// Whether `fd` can be read or written through the I/O threads' reactor (epoll): pipes and sockets can,
// regular files cannot.
bool reactor_capable(int fd) {
    struct stat st {};
    return ::fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

bool same_file(int a, int b) {
    struct stat sa {};
    struct stat sb {};
    return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// Non-blocking mode is a property of the open file, shared by every descriptor of it: the reactor's
// descriptors put stdin/stdout in it while they serve and put the flags back afterwards, and stderr must not
// share the file (a log line would fail with EAGAIN instead of waiting).
class file_flags {
public:
    explicit file_flags(int fd) : fd_(fd), flags_(::fcntl(fd, F_GETFL)) {}
    ~file_flags() {
        if (flags_ != -1)
            ::fcntl(fd_, F_SETFL, flags_);
    }
    file_flags(file_flags const&) = delete;
    file_flags& operator=(file_flags const&) = delete;

private:
    int fd_;
    int flags_;
};

// Where the connection's messages go. Both kinds take lines from the connection's strand and coalesce what
// accumulates while a write is under way into the next write(2), so a burst of answers costs one system call
// rather than one each.
class output {
public:
    virtual ~output() = default;
    virtual void push(std::string line) = 0;
    [[nodiscard]] virtual bool broken() const noexcept = 0;
};

// Writes on the I/O threads through the reactor: a slow reader of stdout never blocks them, and no thread
// hand-off is needed. What a running write leaves behind goes out in the next one. A turn's answers go out
// together at its end, or as soon as `flush_at` bytes are waiting: the client can then send more while the
// rest of a long burst is served, instead of both sides taking turns a whole burst at a time.
class reactor_output final : public output {
public:
    reactor_output(asio::io_context& io, int fd, std::size_t flush_at) : fd_(io), flush_at_(flush_at) {
        boost::system::error_code ec;
        fd_.assign(::fcntl(fd, F_DUPFD_CLOEXEC, 0), ec); // a copy no child inherits
        ok_ = !ec;
    }

    [[nodiscard]] bool ok() const noexcept { return ok_; }

    void push(std::string line) override {
        std::lock_guard lock(mutex_);
        if (broken_)
            return;
        pending_.append(line).push_back('\n');
        if (writing_)
            return; // the running write's completion takes what piles up meanwhile
        if (pending_.size() >= flush_at_) {
            start_write();
            return;
        }
        if (posted_)
            return;
        posted_ = true;
        // Posted, not written now: the other answers this turn of the I/O loop produces join this write.
        asio::post(fd_.get_executor(), [this] {
            std::lock_guard posted_lock(mutex_);
            posted_ = false;
            if (!writing_)
                start_write();
        });
    }

    [[nodiscard]] bool broken() const noexcept override { return broken_.load(); }

private:
    // Called with mutex_ held and no write under way.
    void start_write() {
        if (pending_.empty() || broken_) {
            pending_.clear();
            return;
        }
        writing_ = true;
        sending_.clear();
        sending_.swap(pending_);
        asio::async_write(fd_, asio::buffer(sending_), [this](boost::system::error_code ec, std::size_t) {
            std::lock_guard written_lock(mutex_);
            writing_ = false;
            if (ec)
                broken_ = true;
            start_write();
        });
    }

    asio::posix::stream_descriptor fd_;
    std::size_t flush_at_;
    bool ok_ = false;
    std::mutex mutex_;
    std::string pending_;  ///< lines waiting for the next write
    std::string sending_;  ///< what the write under way sends
    bool posted_ = false;  ///< a write is posted for the end of this turn of the I/O loop
    bool writing_ = false; ///< a write is under way
    std::atomic<bool> broken_{false};
};

// Blocking writes on a thread of their own, for an output the reactor cannot serve (a regular file, or a
// terminal or file that stderr shares), so a slow reader never stalls the I/O threads.
class thread_output final : public output {
public:
    explicit thread_output(int fd) : fd_(fd), thread_([this] { run(); }) {}
    ~thread_output() override { close(); }

    void push(std::string line) override {
        bool wake = false;
        {
            std::lock_guard lock(mutex_);
            if (closed_)
                return;
            pending_.append(line).push_back('\n');
            wake = waiting_;
        }
        if (wake)
            cv_.notify_one();
    }

    /// Flushes what is queued, then stops.
    void close() {
        {
            std::lock_guard lock(mutex_);
            closed_ = true;
        }
        cv_.notify_one();
        if (thread_.joinable())
            thread_.join();
    }

    [[nodiscard]] bool broken() const noexcept override { return broken_.load(); }

private:
    void run() {
        std::string batch;
        std::unique_lock lock(mutex_);
        for (;;) {
            waiting_ = true;
            cv_.wait(lock, [&] { return closed_ || !pending_.empty(); });
            waiting_ = false;
            if (pending_.empty())
                return;
            batch.clear();
            batch.swap(pending_);
            lock.unlock();
            write_all(batch);
            lock.lock();
        }
    }

    void write_all(std::string const& s) {
        if (broken_)
            return;
        std::size_t off = 0;
        while (off < s.size()) {
            auto const n = ::write(fd_, s.data() + off, s.size() - off);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                broken_ = true;
                return;
            }
            off += static_cast<std::size_t>(n);
        }
    }

    int fd_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::string pending_;
    bool closed_ = false;
    bool waiting_ = false; ///< the thread sleeps on cv_: a push must wake it
    std::atomic<bool> broken_{false};
    std::thread thread_;
};

// Reads on the I/O threads through the reactor, a chunk at a time, and hands each line to the connection.
class reactor_input {
public:
    reactor_input(asio::io_context& io, int fd, std::size_t max_line,
                  std::shared_ptr<server::connection> conn, std::function<void()> at_end)
        : fd_(io), split_(max_line, read_chunk), conn_(std::move(conn)), at_end_(std::move(at_end)) {
        boost::system::error_code ec;
        fd_.assign(::fcntl(fd, F_DUPFD_CLOEXEC, 0), ec); // a copy no child inherits
        ok_ = !ec;
    }

    [[nodiscard]] bool ok() const noexcept { return ok_; }

    void start() {
        auto const room = split_.space();
        fd_.async_read_some(asio::buffer(room.data(), room.size()),
                            [this](boost::system::error_code ec, std::size_t n) {
                                // The lines of one read go to the connection together, in order, in one
                                // string (one allocation per read, not one per line); an oversized line in
                                // between goes after the lines before it.
                                std::string lines;
                                auto flush = [&] {
                                    if (!lines.empty())
                                        conn_->receive(std::exchange(lines, {}));
                                };
                                split_.commit(
                                    n,
                                    [&](std::string_view line) {
                                        if (lines.empty())
                                            lines.reserve(n + line.size() + 1);
                                        lines.append(line).push_back('\n');
                                    },
                                    [&] {
                                        flush();
                                        conn_->receive_oversized();
                                    });
                                flush();
                                if (!ec) {
                                    start();
                                    return;
                                }
                                // End of input (or an input that failed): what was read is all there is, and
                                // a last line without a newline still counts (as it came: a trailing '\r' is
                                // the JSON parser's whitespace).
                                if (auto const last = split_.unfinished(); !last.empty())
                                    conn_->receive(std::string(last));
                                at_end_();
                            });
    }

private:
    asio::posix::stream_descriptor fd_;
    bool ok_ = false;
    support::line_splitter split_;
    std::shared_ptr<server::connection> conn_;
    std::function<void()> at_end_;
};

// Reads with blocking read(2) on the calling thread, for an input the reactor cannot serve (a regular file,
// a terminal).
void read_blocking(int fd, std::size_t max_line, server::connection& conn) {
    support::line_splitter split(max_line, read_chunk);
    auto on_line = [&conn](std::string_view line) {
        conn.receive(std::string(line));
    };
    auto on_oversized = [&conn] {
        conn.receive_oversized();
    };
    for (;;) {
        auto const room = split.space();
        auto const n = ::read(fd, room.data(), room.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        split.commit(static_cast<std::size_t>(n), on_line, on_oversized);
    }
    if (auto const last = split.unfinished(); !last.empty())
        on_line(last);
}

} // namespace

int serve_stdio(server::server& srv, stdio_options const& options) {
    std::signal(SIGPIPE, SIG_IGN);
    auto const threads = std::max<std::size_t>(1, options.io_threads);
    asio::io_context io(static_cast<int>(threads));
    auto work = asio::make_work_guard(io);

    // The reactor serves stdin and stdout when they are pipes or sockets that stderr does not share; anything
    // else falls back to a thread of its own.
    int const in = options.input_fd;
    int const out = options.output_fd;
    bool const async_in = reactor_capable(in) && !same_file(in, STDERR_FILENO) && in != STDERR_FILENO;
    bool const async_out = reactor_capable(out) && !same_file(out, STDERR_FILENO) && out != STDERR_FILENO;
    file_flags const in_flags(in);
    file_flags const out_flags(out);

    std::unique_ptr<reactor_output> reactor_out;
    std::unique_ptr<thread_output> thread_out;
    output* sink = nullptr;
    if (async_out) {
        reactor_out =
            std::make_unique<reactor_output>(io, out, std::max<std::size_t>(1, options.flush_bytes));
        if (reactor_out->ok())
            sink = reactor_out.get();
        else
            reactor_out.reset();
    }
    if (!sink) {
        thread_out = std::make_unique<thread_output>(out);
        sink = thread_out.get();
    }

    server::connection_options copts;
    copts.limits.max_bytes = options.max_line_bytes;
    auto conn = server::connection::create(
        srv, io.get_executor(), [sink](std::string line) { sink->push(std::move(line)); }, copts);
    auto const end_of_input = [conn, &work] {
        conn->finish([&work] { work.reset(); });
    };

    std::unique_ptr<reactor_input> reactor_in;
    if (async_in) {
        reactor_in = std::make_unique<reactor_input>(io, in, options.max_line_bytes, conn, end_of_input);
        if (reactor_in->ok())
            reactor_in->start();
        else
            reactor_in.reset();
    }

    std::vector<std::thread> pool;
    if (reactor_in) {
        // The calling thread is one of the I/O threads.
        for (std::size_t i = 1; i < threads; ++i)
            pool.emplace_back([&io] { io.run(); });
        io.run();
    } else {
        for (std::size_t i = 0; i < threads; ++i)
            pool.emplace_back([&io] { io.run(); });
        read_blocking(in, options.max_line_bytes, *conn);
        end_of_input();
    }
    for (auto& t : pool)
        t.join();
    reactor_in.reset();
    conn.reset();
    if (thread_out)
        thread_out->close();
    return sink->broken() ? 1 : 0;
}

} // namespace duet::transport
