// duet discover: connect (by --era) and show what the server is.
#include <duet/jsonrpc/json_text.hpp>

#include "client_cli.hpp"

#include <cstdio>

namespace duet::apps {

namespace json = boost::json;

boost::asio::awaitable<int> run_discover(std::shared_ptr<client::client> c, std::vector<std::string> args,
                                         client_cli_options const& o,
                                         std::shared_ptr<client::cancellation> cancel) {
    if (!args.empty()) {
        std::fprintf(stderr, "duet discover: unexpected argument \"%s\"\n", args.front().c_str());
        co_return exit_code::usage;
    }
    client::request_options options;
    options.cancel = cancel;
    auto r = co_await c->async_discover(options);
    if (!r && c->era() == protocol::era::modern && r.error().code == client::errc::rpc_error) {
        // A modern server without server/discover is still a modern server; show what is known.
        r = c->handshake_result();
    }
    if (!r)
        co_return report(r.error());
    auto const era = std::string(to_string(c->era()));
    auto const version = std::string(protocol::to_string(c->version()));
    if (o.json) {
        json::object out{{"era", era},
                         {"protocolVersion", version},
                         {"serverInfo", c->server_info()},
                         {"capabilities", c->server_capabilities()},
                         {"result", *r}};
        if (!c->instructions().empty())
            out["instructions"] = c->instructions();
        std::printf("%s\n", jsonrpc::to_json_text(out).c_str());
        co_return exit_code::ok;
    }
    auto const& info = c->server_info();
    auto str = [](json::object const& o2, char const* key) {
        auto const* v = o2.if_contains(key);
        return v && v->is_string() ? std::string(v->get_string()) : std::string();
    };
    std::printf("server:   %s %s\n", str(info, "name").c_str(), str(info, "version").c_str());
    if (auto t = str(info, "title"); !t.empty())
        std::printf("title:    %s\n", t.c_str());
    std::printf("era:      %s (%s)\n", era.c_str(), version.c_str());
    if (auto const* sv = r->if_contains("supportedVersions"); sv && sv->is_array())
        std::printf("versions: %s\n", jsonrpc::to_json_text(*sv).c_str());
    std::string caps;
    for (auto const& kv : c->server_capabilities())
        caps += (caps.empty() ? "" : ", ") + std::string(kv.key());
    std::printf("offers:   %s\n", caps.empty() ? "(nothing)" : caps.c_str());
    if (!c->instructions().empty())
        std::printf("instructions:\n  %s\n", c->instructions().c_str());
    co_return exit_code::ok;
}

} // namespace duet::apps
