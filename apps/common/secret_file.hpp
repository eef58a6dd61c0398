// File: apps/common/secret_file.hpp
//
// A secret a flag names a file for (a bearer token, a client secret): never on argv, where `ps` shows it.
#pragma once

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace duet::apps {

/// The secret in `path` (given with `flag`) into `secret`, without the line ends and blanks at its end; a
/// usage error in words when the file cannot be read or holds nothing.
[[nodiscard]] inline std::optional<std::string>
read_secret_file(std::string const& flag, std::string const& path, std::string& secret) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (!in)
        return "cannot read " + flag + " " + path;
    secret = text.str();
    while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r' || secret.back() == ' '))
        secret.pop_back();
    if (secret.empty())
        return flag + " " + path + " is empty";
    return std::nullopt;
}

} // namespace duet::apps
