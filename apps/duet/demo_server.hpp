// The demo server `duet serve` runs: one of each feature, written once and served to both eras.
#pragma once

#include <duet/server/server.hpp>

#include <memory>
#include <vector>

namespace duet::apps {

/// Builds the demo server. `eras` restricts it to one era when asked (`--legacy-only`, `--modern-only`).
/// `state_keys`: the requestState key ring shared with other processes (empty: a random key of its own).
[[nodiscard]] std::unique_ptr<server::server>
make_demo_server(protocol::era_support eras, std::vector<server::state_key> state_keys = {});

} // namespace duet::apps
