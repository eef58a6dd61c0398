// duet listen [tools] [prompts] [resources] [URI...]: change notifications, one line each, until interrupted.
#include <duet/jsonrpc/json_text.hpp>

#include "client_cli.hpp"

#include <cstdio>

namespace duet::apps {

namespace json = boost::json;

boost::asio::awaitable<int> run_listen(std::shared_ptr<client::client> c, std::vector<std::string> args,
                                       client_cli_options const& o,
                                       std::shared_ptr<client::cancellation> cancel) {
    client::listen_filter filter;
    for (auto const& a : args) {
        if (a == "tools")
            filter.tools_list_changed = true;
        else if (a == "prompts")
            filter.prompts_list_changed = true;
        else if (a == "resources")
            filter.resources_list_changed = true;
        else if (a.find(':') != std::string::npos)
            filter.resource_subscriptions.push_back(a);
        else {
            std::fprintf(stderr, "duet listen: \"%s\" is neither tools, prompts, resources nor a URI\n",
                         a.c_str());
            co_return exit_code::usage;
        }
    }
    if (args.empty())
        filter.tools_list_changed = filter.prompts_list_changed = filter.resources_list_changed = true;
    bool const as_json = o.json;
    bool const quiet = o.quiet;
    std::function<void(client::listen_event const&)> on_event = [as_json,
                                                                 quiet](client::listen_event const& e) {
        using kind = client::listen_event::kind;
        if (e.what == kind::dropped) {
            if (!quiet)
                std::fprintf(stderr, "duet listen: the stream dropped; listening again\n");
            return;
        }
        if (e.what == kind::acknowledged) {
            if (!quiet)
                std::fprintf(stderr, "duet listen: the server will send %s\n",
                             jsonrpc::to_json_text(e.params.contains("notifications")
                                                       ? e.params.at("notifications")
                                                       : json::value(json::object{}))
                                 .c_str());
            return;
        }
        if (as_json) {
            json::object line{{"method", e.method}, {"params", e.params}};
            std::printf("%s\n", jsonrpc::to_json_text(line).c_str());
        } else {
            auto const* uri = e.params.if_contains("uri");
            std::printf("%s%s%s\n", e.method.c_str(), uri ? " " : "",
                        uri && uri->is_string() ? uri->get_string().c_str() : "");
        }
        std::fflush(stdout);
    };
    if (!quiet)
        std::fprintf(stderr, "duet listen: %s (%s); Ctrl-C ends it\n",
                     std::string(to_string(c->era())).c_str(),
                     std::string(protocol::to_string(c->version())).c_str());
    client::request_options options;
    options.cancel = cancel;
    auto r = co_await c->async_listen(std::move(filter), std::move(on_event), options);
    if (!r)
        co_return report(r.error());
    co_return cancel->cancelled() ? exit_code::ok : exit_code::unreachable;
}

} // namespace duet::apps
