// duet task get|result|cancel TASK_ID: a task a call became (`duet call --detach`), looked at later.
#include <duet/jsonrpc/json_text.hpp>

#include "client_cli.hpp"

#include <cstdio>

namespace duet::apps {

boost::asio::awaitable<int> run_task(std::shared_ptr<client::client> c, std::vector<std::string> args,
                                     client_cli_options const& o,
                                     std::shared_ptr<client::cancellation> cancel,
                                     std::shared_ptr<followed_task> following) {
    if (args.size() != 2 || (args[0] != "get" && args[0] != "result" && args[0] != "cancel")) {
        std::fprintf(stderr, "duet task: usage: duet task get|result|cancel TASK_ID [URL] [-- COMMAND]\n");
        co_return exit_code::usage;
    }
    auto const& action = args[0];
    auto id = args[1];
    client::request_options options;
    options.cancel = cancel;
    if (action == "get") {
        auto t = co_await c->async_get_task(std::move(id), options);
        if (!t)
            co_return report(t.error());
        if (o.json)
            std::printf("%s\n", jsonrpc::to_json_text(t->task).c_str());
        else
            std::printf("%s\t%s%s%s\n", t->id.c_str(), t->status.c_str(),
                        t->status_message.empty() ? "" : "\t", t->status_message.c_str());
        co_return exit_code::ok;
    }
    if (action == "cancel") {
        auto done = co_await c->async_cancel_task(std::move(id), options);
        if (!done)
            co_return report(done.error());
        if (!o.quiet)
            std::fprintf(stderr, "task %s: cancellation sent\n", args[1].c_str());
        co_return exit_code::ok;
    }
    options.on_task = task_status_printer(o, following);
    auto r = co_await c->async_task_result(std::move(id), options);
    if (!r)
        co_return report(r.error());
    co_return print_call_result(*r, o);
}

} // namespace duet::apps
