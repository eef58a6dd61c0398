// A double as JavaScript writes it (Number.prototype.toString, which JSON.stringify uses for finite numbers):
// the shortest digits that read back as the same double, without an exponent from 1e-6 up to below 1e21.
// Private to json_text.cpp; pinned by tests/unit/jsonrpc/json_text_test.cpp.
#pragma once

#include <cstddef>

namespace duet::jsonrpc::detail {

/// The most characters write_double writes: "-0.00000" and 17 digits, or "-1.2345678901234567e-308".
inline constexpr std::size_t max_double_text = 32;

/// Writes `d` at `out`, which has room for max_double_text characters, and returns the end. -0 is written
/// as `0`, and NaN and the infinities as `null`, as JSON.stringify writes them.
char* write_double(char* out, double d) noexcept;

} // namespace duet::jsonrpc::detail
