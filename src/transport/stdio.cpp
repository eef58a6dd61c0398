#include <duet/server/connection.hpp>
#include <duet/transport/stdio.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace duet::transport {

namespace {

// Blocking writes on a thread of their own, so a slow reader of stdout never stalls the I/O threads.
class line_writer {
public:
    explicit line_writer(int fd) : fd_(fd), thread_([this] { run(); }) {}
    ~line_writer() { close(); }

    void push(std::string line) {
        line += '\n';
        {
            std::lock_guard lock(mutex_);
            if (closed_)
                return;
            queue_.push_back(std::move(line));
        }
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

    [[nodiscard]] bool broken() const noexcept { return broken_.load(); }

private:
    void run() {
        std::unique_lock lock(mutex_);
        for (;;) {
            cv_.wait(lock, [&] { return closed_ || !queue_.empty(); });
            if (queue_.empty())
                return;
            std::deque<std::string> batch;
            batch.swap(queue_);
            lock.unlock();
            for (auto const& line : batch)
                write_all(line);
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
    std::deque<std::string> queue_;
    bool closed_ = false;
    std::atomic<bool> broken_{false};
    std::thread thread_;
};

// Splits input into lines; a line longer than the bound is reported once and skipped up to its newline.
template<class OnLine, class OnOversized>
void read_lines(int fd, std::size_t max_line, OnLine on_line, OnOversized on_oversized) {
    std::string pending;
    bool discarding = false;
    std::vector<char> buf(64 * 1024);
    for (;;) {
        auto const n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        std::string_view chunk(buf.data(), static_cast<std::size_t>(n));
        while (!chunk.empty()) {
            auto const nl = chunk.find('\n');
            auto const part = chunk.substr(0, nl);
            if (!discarding) {
                if (pending.size() + part.size() > max_line) {
                    discarding = true;
                    pending.clear();
                    on_oversized();
                } else {
                    pending.append(part);
                }
            }
            if (nl == std::string_view::npos)
                break;
            chunk.remove_prefix(nl + 1);
            if (!discarding) {
                if (!pending.empty() && pending.back() == '\r')
                    pending.pop_back();
                if (!pending.empty())
                    on_line(std::move(pending));
                pending.clear();
            }
            discarding = false;
        }
    }
    // A final line without a newline still counts.
    if (!discarding && !pending.empty())
        on_line(std::move(pending));
}

} // namespace

int serve_stdio(server::server& srv, stdio_options const& options) {
    std::signal(SIGPIPE, SIG_IGN);
    boost::asio::io_context io;
    auto work = boost::asio::make_work_guard(io);
    line_writer writer(options.output_fd);

    server::connection_options copts;
    copts.limits.max_bytes = options.max_line_bytes;
    auto conn = server::connection::create(
        srv, io.get_executor(), [&writer](std::string line) { writer.push(std::move(line)); }, copts);

    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < std::max<std::size_t>(1, options.io_threads); ++i)
        threads.emplace_back([&io] { io.run(); });

    read_lines(
        options.input_fd, options.max_line_bytes, [&](std::string line) { conn->receive(std::move(line)); },
        [&] { conn->receive_oversized(); });

    conn->finish([&work] { work.reset(); });
    for (auto& t : threads)
        t.join();
    conn.reset();
    writer.close();
    return writer.broken() ? 1 : 0;
}

} // namespace duet::transport
