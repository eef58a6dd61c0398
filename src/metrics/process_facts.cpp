#include "process_facts.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

namespace duet::metrics::detail {

namespace {

// /proc/self/stat after the command name (which may hold spaces and parentheses: the last ')' ends it),
// split on spaces; fields[0] is the state, field 3 of the man page.
bool stat_fields(std::string (&fields)[50]) {
    std::ifstream in("/proc/self/stat");
    std::string line;
    if (!std::getline(in, line))
        return false;
    auto const close = line.rfind(')');
    if (close == std::string::npos)
        return false;
    std::istringstream rest(line.substr(close + 2));
    for (auto& f : fields)
        if (!(rest >> f))
            break;
    return true;
}

double number(std::string const& text) {
    try {
        return std::stod(text);
    } catch (...) {
        return 0;
    }
}

} // namespace

process_facts read_process_facts() {
    process_facts facts;
    long const page = sysconf(_SC_PAGESIZE);
    long const ticks = sysconf(_SC_CLK_TCK);
    std::string fields[50];
    if (stat_fields(fields)) {
        // Man page fields 14 and 15 (utime, stime) in ticks, 23 vsize in bytes, 24 rss in pages.
        facts.cpu_seconds =
            (number(fields[11]) + number(fields[12])) / static_cast<double>(ticks > 0 ? ticks : 100);
        facts.virtual_bytes = number(fields[20]);
        facts.resident_bytes = number(fields[21]) * static_cast<double>(page > 0 ? page : 4096);
    }
    std::error_code ec;
    double open = 0;
    for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec))
        ++open;
    facts.open_fds = open > 0 ? open - 1 : 0; // the directory's own descriptor, open while it is read
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        facts.max_fds = static_cast<double>(limit.rlim_cur);
    return facts;
}

double process_start_time_seconds() {
    std::string fields[50];
    long const ticks = sysconf(_SC_CLK_TCK);
    if (!stat_fields(fields))
        return 0;
    double boot = 0;
    std::ifstream in("/proc/stat");
    for (std::string key; in >> key;) {
        if (key == "btime") {
            in >> boot;
            break;
        }
        in.ignore(1 << 20, '\n');
    }
    if (boot == 0)
        return 0;
    // Man page field 22, starttime, in ticks after boot.
    return boot + number(fields[19]) / static_cast<double>(ticks > 0 ? ticks : 100);
}

} // namespace duet::metrics::detail
