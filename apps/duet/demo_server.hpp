// The demo server `duet serve` runs: one of each feature, written once and served to both eras.
#pragma once

#include <duet/server/server.hpp>

#include <memory>
#include <vector>

namespace duet::apps {

/// Builds the demo server. `eras` restricts it to one era when asked (`--legacy-only`, `--modern-only`).
/// `shared`: what it shares with the other processes serving its endpoint (the requestState key ring, the
/// event bus and its topic); the rest of those options is the demo's own.
[[nodiscard]] std::unique_ptr<server::server> make_demo_server(protocol::era_support eras,
                                                               server::server_options const& shared = {});

} // namespace duet::apps
