// File: tests/http/prometheus_text.hpp
//
// Reading a Duet process's metrics as a scraper would: the scrape URL it said on stderr, the text of GET
// /metrics, one sample's value, and the verdict of `promtool check metrics` (Prometheus's own parser and
// linter, from Debian's prometheus package) on the text.
#pragma once

#include "http/http_client.hpp"

#include <string>

namespace duet::test::http {

/// The endpoint of the "metrics at http://..." line in `stderr_text`; a test failure when there is none.
[[nodiscard]] endpoint metrics_endpoint_in(std::string const& stderr_text);

/// GET /metrics: the body, with a test failure unless it is a 200 in the text format.
[[nodiscard]] std::string scrape(endpoint const& metrics);

/// The value of the sample `series` (name and labels, as written); 0 when absent.
[[nodiscard]] double sample(std::string const& text, std::string const& series);

/// promtool's verdict on `text`: empty when it accepts it, else what it said.
[[nodiscard]] std::string promtool_check(std::string const& text);

} // namespace duet::test::http
