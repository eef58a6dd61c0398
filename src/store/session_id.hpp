#pragma once

#include <string>

namespace duet::store {

/// 128 bits from the OS CSPRNG (OpenSSL RAND_bytes), as 32 lowercase hex digits: visible ASCII per the spec.
/// Every store mints its ids so: a client cannot tell which store (or process) served it.
[[nodiscard]] std::string mint_session_id();

} // namespace duet::store
