// File: apps/common/state_key_flags.hpp
//
// --state-key-file: the requestState key ring several processes serving one endpoint share, so a modern
// client's input round sealed by one process opens on another. One key per line, `ID=SECRET` (the id 1 to 32
// of A-Z a-z 0-9 - _, the secret at least 16 bytes), the first line sealing and every line opening; blank
// lines and lines starting with # are skipped. The file holds secrets: one that others may read is refused.
//
//     duet::apps::state_key_flags keys;
//     duet::apps::add_state_key_flags(*serve, keys);
//     ... after parsing:
//     if(auto why = duet::apps::apply_state_key_flags(keys, options)) { print(*why); return 2; }
#pragma once

#include <duet/server/server.hpp>

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

namespace duet::apps {

struct state_key_flags {
    std::string file;
};

inline void add_state_key_flags(CLI::App& app, state_key_flags& flags) {
    app.add_option("--state-key-file", flags.file,
                   "The requestState key ring shared by every process serving this endpoint: ID=SECRET per "
                   "line, the first sealing (default: a random key of this process's own)")
        ->check(CLI::ExistingFile);
}

/// Sets options.request_state_keys from the file; a usage error in words.
[[nodiscard]] inline std::optional<std::string> apply_state_key_flags(state_key_flags const& flags,
                                                                      server::server_options& options) {
    if (flags.file.empty())
        return std::nullopt;
    struct stat st {};
    if (::stat(flags.file.c_str(), &st) != 0)
        return "cannot read --state-key-file " + flags.file;
    if ((st.st_mode & 077) != 0)
        return "--state-key-file " + flags.file + " may be read by others; make it 0600 (chmod 600)";
    std::ifstream in(flags.file);
    std::vector<server::state_key> keys;
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) {
        ++n;
        while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
            line.pop_back();
        if (line.empty() || line.front() == '#')
            continue;
        auto const eq = line.find('=');
        if (eq == std::string::npos)
            return "--state-key-file " + flags.file + " line " + std::to_string(n) + ": not ID=SECRET";
        keys.push_back({line.substr(0, eq), line.substr(eq + 1)});
    }
    if (keys.empty())
        return "--state-key-file " + flags.file + " holds no key";
    try {
        server::state_sealer check(keys); // the same rules the server applies, said before it starts
    } catch (std::invalid_argument const& e) {
        return "--state-key-file " + flags.file + ": " + e.what();
    }
    options.request_state_keys = std::move(keys);
    return std::nullopt;
}

} // namespace duet::apps
