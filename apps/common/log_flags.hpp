// File: apps/common/log_flags.hpp
//
// --log-format text|json and --log-level debug|info|warning|error: how the process's log (duet/log/log.hpp)
// writes to stderr. At info (the default) a server says what it refuses and what fails, and the gateway one
// line per forwarded request; at debug every request answered is an event too.
//
//     duet::apps::log_flags logging;
//     duet::apps::add_log_flags(*serve, logging);
//     ... after parsing: duet::apps::apply_log_flags(logging);
#pragma once

#include <duet/log/log.hpp>

#include <CLI/CLI.hpp>
#include <string>

namespace duet::apps {

struct log_flags {
    std::string format = "text";
    std::string level = "info";
};

inline void add_log_flags(CLI::App& app, log_flags& flags) {
    app.add_option(
           "--log-format", flags.format,
           "text (lines for people) or json (one JSON object per line: ts, level, event, method, era, "
           "upstream, outcome, latency_ms, trace_id); default text")
        ->check(CLI::IsMember({"text", "json"}));
    app.add_option(
           "--log-level", flags.level,
           "debug (every request answered), info (default), warning or error: the least severe logged")
        ->check(CLI::IsMember({"debug", "info", "warning", "error"}));
}

inline void apply_log_flags(log_flags const& flags) {
    log::configure(log::parse_format(flags.format).value_or(log::format::text),
                   log::parse_level(flags.level).value_or(log::level::info));
}

} // namespace duet::apps
