// duet: the command-line entry point.
//
//   duet serve --stdio [--legacy-only | --modern-only]   the demo server on stdin/stdout
//   duet versions                                        the protocol versions this build speaks
#include <duet/protocol/version.hpp>
#include <duet/transport/stdio.hpp>

#include "demo_server.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>

namespace {

int print_versions() {
    for (auto const& row : duet::protocol::version_registry)
        std::printf("%.*s\t%.*s\n", static_cast<int>(row.name.size()), row.name.data(),
                    static_cast<int>(to_string(row.era).size()), to_string(row.era).data());
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"duet: a dual-era Model Context Protocol toolkit"};
    app.require_subcommand(1);

    auto* versions = app.add_subcommand("versions", "List the MCP protocol versions and their eras");

    auto* serve = app.add_subcommand("serve", "Run the demo server");
    bool stdio = false;
    bool legacy_only = false;
    bool modern_only = false;
    serve->add_flag("--stdio", stdio, "Serve on stdin/stdout (newline-delimited JSON-RPC)");
    auto* lo = serve->add_flag("--legacy-only", legacy_only, "Accept only legacy (initialize) clients");
    serve->add_flag("--modern-only", modern_only, "Accept only modern (2026-07-28) clients")->excludes(lo);

    CLI11_PARSE(app, argc, argv);

    if (versions->parsed())
        return print_versions();

    if (!stdio) {
        std::fputs(
            "duet serve: only --stdio is available in this build (HTTP arrives with the HTTP transport)\n",
            stderr);
        return 2;
    }
    auto const eras = legacy_only   ? duet::protocol::era_support::legacy_only
                      : modern_only ? duet::protocol::era_support::modern_only
                                    : duet::protocol::era_support::both;
    auto srv = duet::apps::make_demo_server(eras);
    std::fputs("duet: demo server on stdio (both eras unless restricted); logs go to stderr\n", stderr);
    return duet::transport::serve_stdio(*srv);
}
