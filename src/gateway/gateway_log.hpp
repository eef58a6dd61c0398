// File: src/gateway/gateway_log.hpp (private)
//
// The gateway's log lines (one per forwarded request, one per legacy session's start and end): to
// gateway_options::log when set, else to stderr, where the lines written meanwhile share one write, made
// log_flush_delay after the first. Handlers log from the HTTP server's threads: a hand-off to the upstream
// executor per line costs a reactor wake-up and a contended lock, one per flush does not (bench/findings.md,
// "The gateway's per-call path").
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace duet::gateway::detail {

class gateway_log : public std::enable_shared_from_this<gateway_log> {
public:
    /// `sink` empty: stderr, flushed on `ex`.
    gateway_log(boost::asio::any_io_executor ex, std::function<void(std::string const&)> sink);
    ~gateway_log();

    /// One info event of the process's log (duet/log/log.hpp) saying `message`: "duet gateway: MESSAGE" in
    /// the text format (and to a sink), the message of a JSON object in the JSON one; nothing below info.
    void line(std::string const& message) const;

    /// Logs the line `write` appends to the string it is given. Bound for stderr, the line is written
    /// straight into the pending lines: a request's line then costs no string of its own.
    template<typename Write>
    void write_with(Write&& write) const {
        if (sink_) {
            std::string text;
            write(text);
            sink_(text);
            return;
        }
        bool arm = false;
        {
            std::lock_guard lock(mutex_);
            write(pending_);
            pending_ += '\n';
            arm = !flush_armed_;
            flush_armed_ = true;
        }
        if (arm)
            arm_flush();
    }

    /// Writes the pending lines now.
    void flush() const;
    /// Lines go to gateway_options::log rather than stderr (as they are, in no log format).
    [[nodiscard]] bool to_sink() const noexcept { return static_cast<bool>(sink_); }

private:
    void arm_flush() const;
    static boost::asio::awaitable<void> flush_later(std::weak_ptr<gateway_log const> weak);

    boost::asio::any_io_executor ex_;
    std::function<void(std::string const&)> sink_;
    mutable std::mutex mutex_;
    mutable std::string pending_;      ///< stderr lines not written yet
    mutable bool flush_armed_ = false; ///< a flush_later waits
};

} // namespace duet::gateway::detail
