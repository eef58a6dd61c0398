/// @file duet/transport/stdio.hpp
///
/// The stdio transport (DIGEST §10): newline-delimited UTF-8 JSON-RPC on stdin/stdout, both eras on one
/// process. Requests are handled concurrently (a slow tool never blocks a fast one), writes are serialized
/// (what accumulates while one is under way goes out in the next), only MCP messages reach stdout, a line
/// over the size bound is answered -32600 and skipped, and end of input lets in-flight requests finish before
/// serve_stdio() returns. Pipes and sockets are read and written by the I/O thread itself; a regular file or
/// a terminal gets a thread of its own, so a slow reader never stalls serving.
///
///     duet::server::server srv(...);
///     return duet::transport::serve_stdio(srv);     // exit code for main()
#pragma once

#include <duet/server/server.hpp>

#include <cstddef>

namespace duet::transport {

struct stdio_options {
    int input_fd = 0;
    int output_fd = 1;
    std::size_t max_line_bytes = 4 * 1024 * 1024;
    /// Threads serving the connection. Everything a stdio connection does runs on its one strand (plain
    /// handlers on the server's blocking pool), so more threads add only hand-offs between them.
    std::size_t io_threads = 1;
    /// Answers waiting to be written go out at once when they reach this many bytes, else at the end of the
    /// I/O loop's turn: a long burst's first answers reach the client while the rest are served, so a
    /// pipelining client refills meanwhile (measured: the server's core busy 90-99 % instead of 70-75 % with
    /// 64 requests in flight).
    std::size_t flush_bytes = 2048;
};

/// Serves until end of input, then returns 0 (1 if the output broke).
[[nodiscard]] int serve_stdio(server::server& srv, stdio_options const& options = {});

} // namespace duet::transport
