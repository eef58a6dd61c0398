// duet: the command-line entry point. Subcommands arrive with their issues; today it reports the protocol
// versions this build speaks and which era each belongs to.
#include <duet/protocol/version.hpp>

#include <cstdio>
#include <cstring>

namespace {

int print_versions() {
    for (auto const& row : duet::protocol::version_registry)
        std::printf("%.*s\t%.*s\n", static_cast<int>(row.name.size()), row.name.data(),
                    static_cast<int>(to_string(row.era).size()), to_string(row.era).data());
    return 0;
}

int usage(std::FILE* out) {
    std::fputs("usage: duet versions     list the MCP protocol versions and their eras\n", out);
    return out == stdout ? 0 : 2;
}

} // namespace

int main(int argc, char** argv) {
    if (argc == 2 && std::strcmp(argv[1], "versions") == 0)
        return print_versions();
    if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0))
        return usage(stdout);
    return usage(stderr);
}
