// The demo server `duet serve` runs: one of each feature, written once and served to both eras.
#pragma once

#include <duet/server/server.hpp>

#include <memory>

namespace duet::apps {

/// Builds the demo server. `eras` restricts it to one era when asked (`--legacy-only`, `--modern-only`).
[[nodiscard]] std::unique_ptr<server::server> make_demo_server(protocol::era_support eras);

} // namespace duet::apps
