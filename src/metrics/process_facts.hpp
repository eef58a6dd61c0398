// The process's own figures Prometheus names process_*: read from /proc/self when scraped (Linux).
#pragma once

namespace duet::metrics::detail {

struct process_facts {
    double resident_bytes = 0;
    double virtual_bytes = 0;
    double open_fds = 0;
    double max_fds = 0;
    double cpu_seconds = 0;
};

[[nodiscard]] process_facts read_process_facts();
/// When this process started, in seconds since the Unix epoch (its start in ticks after boot, plus the
/// boot time); 0 when /proc does not say.
[[nodiscard]] double process_start_time_seconds();

} // namespace duet::metrics::detail
