// duet call TOOL key=value...: one tool call; its text on stdout, progress on stderr.
#include <duet/jsonrpc/json_text.hpp>

#include "client_cli.hpp"

#include <cstdio>

namespace duet::apps {

namespace json = boost::json;

namespace {

std::function<void(client::progress_event const&)> progress_printer(client_cli_options const& o) {
    if (o.quiet)
        return nullptr;
    return [](client::progress_event const& p) {
        if (p.total)
            std::fprintf(stderr, "progress %g/%g%s%s\n", p.progress, *p.total, p.message.empty() ? "" : " ",
                         p.message.c_str());
        else
            std::fprintf(stderr, "progress %g%s%s\n", p.progress, p.message.empty() ? "" : " ",
                         p.message.c_str());
    };
}

} // namespace

boost::asio::awaitable<int> run_call(std::shared_ptr<client::client> c, std::vector<std::string> args,
                                     client_cli_options const& o,
                                     std::shared_ptr<client::cancellation> cancel) {
    if (args.empty()) {
        std::fprintf(stderr,
                     "duet call: which tool? usage: duet call [URL] TOOL key=value... [-- COMMAND]\n");
        co_return exit_code::usage;
    }
    auto const tool = args.front();
    std::vector<std::string> const rest(args.begin() + 1, args.end());
    json::object arguments;
    if (auto bad = parse_key_values(rest, arguments); !bad.empty()) {
        std::fprintf(stderr, "duet call: %s\n", bad.c_str());
        co_return exit_code::usage;
    }
    client::request_options options;
    options.cancel = cancel;
    options.on_progress = progress_printer(o);
    std::string name = tool;
    auto r = co_await c->async_call_tool(std::move(name), std::move(arguments), options);
    if (!r)
        co_return report(r.error());
    bool const failed = r->contains("isError") && r->at("isError") == true;
    if (o.json) {
        std::printf("%s\n", jsonrpc::to_json_text(*r).c_str());
    } else {
        std::string text;
        if (auto const* content = r->if_contains("content"); content && content->is_array())
            text = render_content(content->get_array());
        if (text.empty())
            if (auto const* sc = r->if_contains("structuredContent"))
                text = jsonrpc::to_json_text(*sc) + "\n";
        std::fputs(text.c_str(), failed ? stderr : stdout);
    }
    co_return failed ? exit_code::tool_error : exit_code::ok;
}

} // namespace duet::apps
