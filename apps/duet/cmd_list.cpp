// duet tools | prompts | resources: every item of a list (all pages).
#include <duet/jsonrpc/json_text.hpp>

#include "client_cli.hpp"

#include <boost/json/value_to.hpp>

#include <cstdio>

namespace duet::apps {

namespace json = boost::json;

boost::asio::awaitable<int> run_list(std::shared_ptr<client::client> c, std::vector<std::string> args,
                                     client_cli_options const& o,
                                     std::shared_ptr<client::cancellation> cancel, client::list_kind kind) {
    if (!args.empty()) {
        std::fprintf(stderr, "duet: unexpected argument \"%s\"\n", args.front().c_str());
        co_return exit_code::usage;
    }
    client::request_options options;
    options.cancel = cancel;
    auto r = co_await c->async_list(kind, options);
    if (!r)
        co_return report(r.error());
    if (o.json) {
        std::printf("%s\n", jsonrpc::to_json_text(*r).c_str());
        co_return exit_code::ok;
    }
    if (r->empty())
        std::fprintf(stderr, "(none)\n");
    for (auto const& item : *r) {
        auto const* it = item.if_object();
        if (!it)
            continue;
        auto str = [&](char const* key) {
            auto const* v = it->if_contains(key);
            return v && v->is_string() ? std::string(v->get_string()) : std::string();
        };
        auto id = kind == client::list_kind::resources            ? str("uri")
                  : kind == client::list_kind::resource_templates ? str("uriTemplate")
                                                                  : str("name");
        auto text = str("description");
        if (text.empty())
            text = str("title");
        std::printf("%-28s %s\n", id.c_str(), text.c_str());
        if (kind == client::list_kind::prompts)
            if (auto const* a = it->if_contains("arguments"); a && a->is_array())
                for (auto const& arg : a->get_array())
                    if (auto const* ao = arg.if_object(); ao && ao->contains("name"))
                        std::printf("    %s%s\n", json::value_to<std::string>(ao->at("name")).c_str(),
                                    ao->contains("required") && ao->at("required") == true ? " (required)"
                                                                                           : "");
    }
    co_return exit_code::ok;
}

} // namespace duet::apps
