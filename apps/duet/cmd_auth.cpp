#include "cmd_auth.hpp"

#include <duet/auth/discovery.hpp>
#include <duet/auth/file_store.hpp>
#include <duet/auth/scopes.hpp>
#include <duet/jsonrpc/json_text.hpp>

#include "client_cli.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cstdio>
#include <ctime>
#include <memory>

namespace duet::apps {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

struct auth_command_options {
    std::string url;
    bool json = false;
    auth_cli_options auth;
    tls::client_config tls;
};

std::string when(std::optional<std::chrono::system_clock::time_point> t) {
    if (!t)
        return "no expiry";
    auto const seconds = std::chrono::system_clock::to_time_t(*t);
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

client::result<std::shared_ptr<auth::file_store>> open_store() {
    auto dir = auth::default_credentials_dir();
    if (!dir)
        return dir.error();
    return auth::file_store::open(*dir);
}

client::result<std::string> resource_of(std::string const& url) {
    auto parsed = client::parse_http_url(url);
    if (!parsed)
        return parsed.error();
    return auth::canonical_resource(*parsed);
}

asio::awaitable<client::result<auth::token_set>>
async_login(std::shared_ptr<auth::oauth_authorization> provider) {
    co_return co_await provider->async_login();
}

int run_login(auth_command_options const& o) {
    asio::io_context io;
    auto provider = make_cli_authorization(io.get_executor(), o.url, o.auth, o.tls, user_presence::always);
    if (!provider)
        return report(provider.error());
    auto done = asio::co_spawn(io, async_login(*provider), asio::use_future);
    io.run();
    auto granted = done.get();
    if (!granted)
        return report(granted.error());
    auto const scopes = auth::join_scopes(granted->scopes);
    std::printf("logged in to %s: issuer %s, scopes %s, %s%s\n", granted->resource.c_str(),
                granted->issuer.c_str(), scopes.empty() ? "(none)" : scopes.c_str(),
                granted->expires_at ? ("expires " + when(granted->expires_at)).c_str() : "no expiry",
                granted->refresh_token.empty() ? "" : ", refreshable");
    return exit_code::ok;
}

int run_logout(auth_command_options const& o) {
    auto store = open_store();
    if (!store)
        return report(store.error());
    if (o.url.empty()) {
        auto all = (*store)->all_tokens();
        if (!all)
            return report(all.error());
        if (auto erased = (*store)->erase_all_tokens(); !erased)
            return report(erased.error());
        std::printf("logged out of %zu server%s\n", all->size(), all->size() == 1 ? "" : "s");
        return exit_code::ok;
    }
    auto resource = resource_of(o.url);
    if (!resource)
        return report(resource.error());
    auto held = (*store)->load_tokens(*resource);
    if (!held)
        return report(held.error());
    if (!*held) {
        std::printf("no credentials kept for %s\n", resource->c_str());
        return exit_code::ok;
    }
    if (auto erased = (*store)->erase_tokens(*resource); !erased)
        return report(erased.error());
    std::printf("logged out of %s\n", resource->c_str());
    return exit_code::ok;
}

int run_status(auth_command_options const& o) {
    auto store = open_store();
    if (!store)
        return report(store.error());
    auto all = (*store)->all_tokens();
    if (!all)
        return report(all.error());
    if (!o.url.empty()) {
        auto resource = resource_of(o.url);
        if (!resource)
            return report(resource.error());
        std::erase_if(*all, [&](auto const& t) { return t.resource != *resource; });
    }
    auto const now = std::chrono::system_clock::now();
    if (o.json) {
        json::array rows;
        for (auto const& t : *all) {
            json::array scopes;
            for (auto const& s : t.scopes)
                scopes.emplace_back(s);
            json::object row{{"resource", t.resource},
                             {"issuer", t.issuer},
                             {"scopes", std::move(scopes)},
                             {"refreshable", !t.refresh_token.empty()},
                             {"expired", t.expires_within(std::chrono::seconds(0), now)}};
            if (t.expires_at)
                row["expires_at"] = when(t.expires_at);
            rows.emplace_back(std::move(row));
        }
        std::printf("%s\n", jsonrpc::to_json_text(rows).c_str());
        return exit_code::ok;
    }
    if (all->empty()) {
        std::printf("not logged in%s%s\n", o.url.empty() ? "" : " to ", o.url.c_str());
        return o.url.empty() ? exit_code::ok : exit_code::auth;
    }
    for (auto const& t : *all) {
        auto const scopes = auth::join_scopes(t.scopes);
        std::printf("%s\n  issuer   %s\n  scopes   %s\n  expires  %s%s\n  refresh  %s\n", t.resource.c_str(),
                    t.issuer.c_str(), scopes.empty() ? "(none)" : scopes.c_str(), when(t.expires_at).c_str(),
                    t.expires_within(std::chrono::seconds(0), now) ? " (expired)" : "",
                    t.refresh_token.empty() ? "no" : "yes");
    }
    return exit_code::ok;
}

} // namespace

std::function<int()> add_auth_commands(CLI::App& app) {
    auto o = std::make_shared<auth_command_options>();
    auto* login =
        app.add_subcommand("login", "Authorize this client with an MCP server (OAuth): duet login URL");
    login->add_option("url", o->url, "The server's URL")->required();
    add_auth_options(*login, o->auth);
    add_tls_client_options(*login, o->tls);
    auto* logout = app.add_subcommand("logout", "Forget the credentials kept for a server, or for all");
    logout->add_option("url", o->url, "The server's URL (none: every server)");
    auto* auth = app.add_subcommand("auth", "Credentials kept for MCP servers");
    auth->require_subcommand(1);
    auto* status = auth->add_subcommand("status", "Show issuer, scopes and expiry (never a token)");
    status->add_option("url", o->url, "Only this server");
    status->add_flag("--json", o->json, "Print JSON");
    return [o, login, logout, status]() -> int {
        if (login->parsed())
            return run_login(*o);
        if (logout->parsed())
            return run_logout(*o);
        if (status->parsed())
            return run_status(*o);
        return -1;
    };
}

} // namespace duet::apps
