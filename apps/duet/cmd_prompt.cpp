// duet prompt NAME key=value...: a prompt's messages.
#include <duet/jsonrpc/json_text.hpp>

#include "client_cli.hpp"

#include <cstdio>

namespace duet::apps {

namespace json = boost::json;

boost::asio::awaitable<int> run_prompt(std::shared_ptr<client::client> c, std::vector<std::string> args,
                                       client_cli_options const& o,
                                       std::shared_ptr<client::cancellation> cancel) {
    if (args.empty()) {
        std::fprintf(stderr,
                     "duet prompt: which prompt? usage: duet prompt [URL] NAME key=value... [-- COMMAND]\n");
        co_return exit_code::usage;
    }
    std::string name = args.front();
    std::vector<std::string> const rest(args.begin() + 1, args.end());
    json::object arguments;
    if (auto bad = parse_key_values(rest, arguments); !bad.empty()) {
        std::fprintf(stderr, "duet prompt: %s\n", bad.c_str());
        co_return exit_code::usage;
    }
    client::request_options options;
    options.cancel = cancel;
    auto r = co_await c->async_get_prompt(std::move(name), std::move(arguments), options);
    if (!r)
        co_return report(r.error());
    if (o.json) {
        std::printf("%s\n", jsonrpc::to_json_text(*r).c_str());
        co_return exit_code::ok;
    }
    if (auto const* d = r->if_contains("description"); d && d->is_string())
        std::printf("# %s\n", d->get_string().c_str());
    if (auto const* messages = r->if_contains("messages"); messages && messages->is_array()) {
        for (auto const& m : messages->get_array()) {
            auto const* mo = m.if_object();
            if (!mo)
                continue;
            auto const* role = mo->if_contains("role");
            json::array one;
            if (auto const* content = mo->if_contains("content"))
                one.push_back(*content);
            std::printf("%s: %s", role && role->is_string() ? role->get_string().c_str() : "?",
                        render_content(one).c_str());
        }
    }
    co_return exit_code::ok;
}

} // namespace duet::apps
