// A new W3C Trace Context span id: 16 lowercase hex digits from a per-thread generator, never all zeros.
// Unguessability is not asked of a span id, only that two hops do not collide.
#pragma once

#include <string>

namespace duet::support {

[[nodiscard]] std::string new_span_id();

} // namespace duet::support
