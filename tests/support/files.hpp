// File: tests/support/files.hpp
//
// Whole files the tests read back: what a child process or a peer wrote, an official example message.
#pragma once

#include <string>

namespace duet::test {

/// The whole of the file at `path`; empty when it cannot be read.
[[nodiscard]] std::string read_file(std::string const& path);

/// The whole of a file the test wrote in the temporary directory, which is removed once read so that runs
/// leave nothing behind.
[[nodiscard]] std::string take_file(std::string const& path);

} // namespace duet::test
