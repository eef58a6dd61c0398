// duet call TOOL key=value...: one tool call; its text on stdout, progress and task status on stderr.
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

std::function<void(client::task_info const&)> task_status_printer(client_cli_options const& o,
                                                                  std::shared_ptr<followed_task> following) {
    auto last = std::make_shared<std::string>();
    bool const quiet = o.quiet;
    return [quiet, following, last](client::task_info const& t) {
        following->id = t.terminal() ? std::string() : t.id;
        auto line =
            "task " + t.id + ": " + t.status + (t.status_message.empty() ? "" : " - " + t.status_message);
        if (quiet || line == *last)
            return;
        *last = line;
        std::fprintf(stderr, "%s\n", line.c_str());
    };
}

int print_call_result(json::object const& r, client_cli_options const& o) {
    bool const failed = r.contains("isError") && r.at("isError") == true;
    if (o.json) {
        std::printf("%s\n", jsonrpc::to_json_text(r).c_str());
    } else {
        std::string text;
        if (auto const* content = r.if_contains("content"); content && content->is_array())
            text = render_content(content->get_array());
        if (text.empty())
            if (auto const* sc = r.if_contains("structuredContent"))
                text = jsonrpc::to_json_text(*sc) + "\n";
        std::fputs(text.c_str(), failed ? stderr : stdout);
    }
    return failed ? exit_code::tool_error : exit_code::ok;
}

boost::asio::awaitable<int> run_call(std::shared_ptr<client::client> c, std::vector<std::string> args,
                                     client_cli_options const& o,
                                     std::shared_ptr<client::cancellation> cancel,
                                     std::shared_ptr<followed_task> following) {
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
    options.on_task = task_status_printer(o, following);
    options.detach_task = o.detach;
    options.ask_for_task = o.detach;
    std::string name = tool;
    auto r = co_await c->async_call_tool(std::move(name), std::move(arguments), options);
    if (!r)
        co_return report(r.error());
    if (o.detach) {
        if (auto task = client::task_in(*r)) {
            // The id alone on stdout, for scripts; how to come back on stderr, for people.
            std::printf("%s\n", o.json ? jsonrpc::to_json_text(task->task).c_str() : task->id.c_str());
            if (!o.quiet && !o.command.empty())
                std::fprintf(stderr,
                             "task %s: %s; it runs in the server process this command started, which ends "
                             "with it\n",
                             task->id.c_str(), task->status.c_str());
            else if (!o.quiet && c->era() == protocol::era::legacy)
                std::fprintf(stderr,
                             "task %s: %s; a 2025-11-25 task belongs to its session (or the caller's "
                             "token), and this command's session ends now\n",
                             task->id.c_str(), task->status.c_str());
            else if (!o.quiet)
                std::fprintf(stderr, "task %s: %s; its result: duet task result %s %s\n", task->id.c_str(),
                             task->status.c_str(), task->id.c_str(), o.server.c_str());
            co_return exit_code::ok;
        }
    }
    co_return print_call_result(*r, o);
}

} // namespace duet::apps
