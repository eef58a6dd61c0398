// duet read URI: a resource's contents (text as is; binary as a summary unless --json).
#include <duet/jsonrpc/json_text.hpp>

#include "client_cli.hpp"

#include <cstdio>

namespace duet::apps {

namespace json = boost::json;

boost::asio::awaitable<int> run_read(std::shared_ptr<client::client> c, std::vector<std::string> args,
                                     client_cli_options const& o,
                                     std::shared_ptr<client::cancellation> cancel) {
    if (args.size() != 1) {
        std::fprintf(stderr, "duet read: usage: duet read [URL] URI [-- COMMAND]\n");
        co_return exit_code::usage;
    }
    client::request_options options;
    options.cancel = cancel;
    std::string uri = args.front();
    auto r = co_await c->async_read_resource(std::move(uri), options);
    if (!r)
        co_return report(r.error());
    if (o.json) {
        std::printf("%s\n", jsonrpc::to_json_text(*r).c_str());
        co_return exit_code::ok;
    }
    auto const* contents = r->if_contains("contents");
    if (!contents || !contents->is_array()) {
        std::fprintf(stderr, "duet read: the result has no contents\n");
        co_return exit_code::protocol_error;
    }
    for (auto const& item : contents->get_array()) {
        auto const* it = item.if_object();
        if (!it)
            continue;
        if (auto const* t = it->if_contains("text"); t && t->is_string()) {
            std::string text(t->get_string());
            if (!text.empty() && text.back() != '\n')
                text += '\n';
            std::fputs(text.c_str(), stdout);
        } else if (auto const* b = it->if_contains("blob"); b && b->is_string()) {
            auto const* mime = it->if_contains("mimeType");
            std::printf("[binary %s, %zu bytes base64; use --json for the data]\n",
                        mime && mime->is_string() ? mime->get_string().c_str() : "?", b->get_string().size());
        }
    }
    co_return exit_code::ok;
}

} // namespace duet::apps
