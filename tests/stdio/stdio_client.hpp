// File: tests/stdio/stdio_client.hpp
//
// Drives the real `duet serve --stdio` binary over pipes, the way an MCP client does (DIGEST §10): one JSON
// line per message on its stdin, one per message read back from its stdout, with bounded waits only (poll(2)
// with a deadline; no sleep is ever used to order events). Every line read is recorded in a transcript, which
// fails the test unless it is JSON-RPC and can be checked against the official schemas at the end.
//
//     stdio_client c;                                     // spawns DUET_BINARY serve --stdio
//     c.send(modern_request(1, "server/discover"));
//     auto r = c.response(1);                             // the response to id 1 (other messages are kept)
//     c.finish();                                         // close stdin, read to EOF, expect exit status 0
//     c.expect_schema_valid();
//
// The child's stderr goes to a file in the test's temporary directory, shown when a wait times out.
#pragma once

#include "support/child_process.hpp"
#include "support/transcript.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::test {

/// Generous: the suite must pass on a loaded two-core machine; only a hang ever waits this long.
inline constexpr std::chrono::milliseconds default_wait = std::chrono::seconds(60);

class stdio_client {
public:
    /// Spawns `DUET_BINARY serve --stdio <extra_args...>`.
    explicit stdio_client(std::vector<std::string> extra_args = {}, served_eras eras = served_eras::both);
    ~stdio_client();
    stdio_client(stdio_client const&) = delete;
    stdio_client& operator=(stdio_client const&) = delete;

    /// Writes one message as a line, recording it. Keeps reading the child's stdout while it writes, so a
    /// large write never deadlocks against a full pipe.
    void send(boost::json::value const& message);
    /// Writes raw bytes (the caller supplies any newline). `as` is recorded as what was sent: the request (or
    /// an array of requests) the bytes carry, so that replies to them are expected; null records nothing.
    void send_raw(std::string_view bytes, boost::json::value const& as = nullptr);

    /// Every message read so far, in order.
    [[nodiscard]] std::vector<boost::json::value> const& messages() const noexcept { return log_.received(); }

    /// Reads until a message at index >= `from` satisfies `pred`; returns its index, or nullopt (and a test
    /// failure) when the deadline passes or the child closes its stdout first.
    std::optional<std::size_t> wait_for(std::function<bool(boost::json::value const&)> const& pred,
                                        std::size_t from = 0,
                                        std::chrono::milliseconds timeout = default_wait);

    /// The response (result or error) to request `id`, same JSON type; null with a test failure when none
    /// came.
    boost::json::value response(boost::json::value const& id,
                                std::chrono::milliseconds timeout = default_wait);

    /// Closes stdin (end of input), reads stdout to EOF and waits for the exit status; returns it (-1 when
    /// the child did not exit in time or died of a signal, with a test failure).
    int finish(std::chrono::milliseconds timeout = default_wait);

    /// Closes our end of the child's stdout, so its next write fails (EPIPE); nothing more is read.
    void close_output();

    /// Checks every message the child wrote against the official schemas (skips when they are unavailable).
    void expect_schema_valid();

    [[nodiscard]] transcript const& log() const noexcept { return log_; }
    [[nodiscard]] std::string stderr_text() const;

private:
    /// Reads what is available within `timeout`; false at EOF or on timeout.
    bool pump(std::chrono::steady_clock::time_point deadline);
    void take_lines();
    void close_input();

    transcript log_;
    child_process child_;
    bool eof_ = false;
    std::string pending_;
};

} // namespace duet::test
