// duet gateway: connects to the upstream once to learn it, then serves it on Streamable HTTP to clients of
// both eras. Upstream connections live on a thread of their own; the HTTP server runs on its own threads.
#include "cmd_gateway.hpp"

#include <duet/client/connect_mode.hpp>
#include <duet/client/target.hpp>
#include <duet/gateway/upstream_backend.hpp>
#include <duet/transport/http_server.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace duet::apps {

namespace {

namespace asio = boost::asio;

struct gateway_cli {
    std::string upstream;
    std::string era = "auto";
    bool lenient_args = false;
    transport::http_options http;
};

// "stdio:COMMAND ARGS..." split on blanks; single or double quotes keep blanks inside one argument.
std::optional<std::vector<std::string>> split_command(std::string_view text) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (char ch : text) {
        if (quote) {
            if (ch == quote)
                quote = 0;
            else
                word += ch;
        } else if (ch == '\'' || ch == '"') {
            quote = ch;
            in_word = true;
        } else if (ch == ' ' || ch == '\t') {
            if (in_word)
                words.push_back(std::move(word));
            word.clear();
            in_word = false;
        } else {
            word += ch;
            in_word = true;
        }
    }
    if (quote)
        return std::nullopt;
    if (in_word)
        words.push_back(std::move(word));
    return words;
}

std::optional<client::server_target> parse_upstream(std::string const& text, std::string& why) {
    constexpr std::string_view stdio_prefix = "stdio:";
    if (text.starts_with(stdio_prefix)) {
        auto words = split_command(std::string_view(text).substr(stdio_prefix.size()));
        if (!words) {
            why = "an unterminated quote in the upstream command";
            return std::nullopt;
        }
        if (words->empty()) {
            why = "no command after \"stdio:\"";
            return std::nullopt;
        }
        client::stdio_target t;
        t.command = words->front();
        t.args.assign(words->begin() + 1, words->end());
        return t;
    }
    auto url = client::parse_http_url(text);
    if (!url) {
        why = url.error().message + " (give an http:// URL or stdio:COMMAND ARGS...)";
        return std::nullopt;
    }
    return client::http_target{text, {}};
}

int run_gateway(gateway_cli const& cli) {
    std::string why;
    auto target = parse_upstream(cli.upstream, why);
    if (!target) {
        std::fprintf(stderr, "duet gateway: --upstream: %s\n", why.c_str());
        return 2;
    }
    auto mode = client::parse_connect_mode(cli.era);
    if (!mode) {
        std::fprintf(stderr, "duet gateway: --era must be legacy, modern or auto, not \"%s\"\n",
                     cli.era.c_str());
        return 2;
    }

    asio::io_context upstream_io;
    auto work = asio::make_work_guard(upstream_io);
    std::thread upstream_thread([&upstream_io] { upstream_io.run(); });
    auto stop_upstream = [&] {
        work.reset();
        upstream_io.stop();
        upstream_thread.join();
    };

    gateway::gateway_options options;
    options.upstream = *target;
    options.mode = *mode;
    options.lenient_args = cli.lenient_args;
    auto created = asio::co_spawn(upstream_io, gateway::upstream_backend::async_create(std::move(options)),
                                  asio::use_future)
                       .get();
    if (!created) {
        std::fprintf(stderr, "duet gateway: cannot reach the upstream %s: %s\n",
                     client::describe(*target).c_str(), created.error().to_string().c_str());
        stop_upstream();
        return 3;
    }
    auto backend = *created;

    auto server_options = backend->describe();
    server::server srv(std::move(server_options));
    backend->attach(srv);

    transport::http_server http(srv, cli.http);
    if (auto ec = http.listen()) {
        std::fprintf(stderr, "duet gateway: cannot listen on %s:%u: %s\n", cli.http.host.c_str(),
                     unsigned(cli.http.port), ec.message().c_str());
        backend->detach();
        stop_upstream();
        return 1;
    }
    std::printf("%s\n", http.url().c_str());
    std::fflush(stdout);
    std::fprintf(
        stderr, "duet gateway: serving %s (%s %s) to clients of both eras; Ctrl-C drains and stops\n",
        client::describe(*target).c_str(), backend->era() == protocol::era::modern ? "modern" : "legacy",
        std::string(protocol::to_string(backend->version())).c_str());
    http.run();

    backend->detach();
    asio::co_spawn(upstream_io, backend->async_close(), asio::use_future).get();
    stop_upstream();
    return 0;
}

} // namespace

std::function<int()> add_gateway_command(CLI::App& app) {
    auto cli = std::make_shared<gateway_cli>();
    auto* cmd = app.add_subcommand("gateway", "Serve an MCP server of either era to clients of both eras");
    cmd->add_option("--upstream", cli->upstream,
                    "The server in front of which to stand: an http:// URL or "
                    "'stdio:COMMAND ARGS...'")
        ->required();
    cmd->add_option("--era", cli->era, "How to reach the upstream: legacy, modern or auto (default auto)");
    cmd->add_flag("--lenient-args", cli->lenient_args,
                  "Accept tool arguments sent flat in params.payload (moved into arguments)");
    cmd->add_option("--host", cli->http.host, "Address to bind (default 127.0.0.1)");
    cmd->add_option("--port", cli->http.port, "Port to bind; 0 picks a free one (default 8750)");
    cmd->add_option("--allow-origin", cli->http.allowed_origins, "An Origin allowed besides loopback ones");
    return [cmd, cli]() -> int {
        if (!cmd->parsed())
            return -1;
        return run_gateway(*cli);
    };
}

} // namespace duet::apps
