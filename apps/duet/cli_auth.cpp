#include "cli_auth.hpp"

#include <duet/auth/file_store.hpp>
#include <duet/auth/scopes.hpp>
#include <duet/auth/user_steps.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

extern char** environ;

namespace duet::apps {

namespace {

client::error usage(std::string const& why) {
    return client::make_error(client::errc::usage, why);
}

// Opens `url` in the user's browser when xdg-open is there; the child gets no terminal output of ours.
void open_browser(std::string const& url) {
    if (std::system("command -v xdg-open >/dev/null 2>&1") != 0)
        return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    std::string program = "xdg-open";
    std::string argument = url;
    char* argv[] = {program.data(), argument.data(), nullptr};
    pid_t pid = 0;
    if (posix_spawnp(&pid, "xdg-open", &actions, nullptr, argv, environ) == 0) {
        int status = 0;
        ::waitpid(pid, &status, 0);
    }
    posix_spawn_file_actions_destroy(&actions);
}

client::result<std::string> read_secret(auth_cli_options const& o) {
    if (!o.client_secret_file.empty()) {
        std::ifstream in(o.client_secret_file);
        if (!in)
            return usage("cannot read --client-secret-file " + o.client_secret_file);
        std::stringstream text;
        text << in.rdbuf();
        auto secret = text.str();
        while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r'))
            secret.pop_back();
        if (secret.empty())
            return usage("--client-secret-file " + o.client_secret_file + " is empty");
        return secret;
    }
    if (char const* env = std::getenv("DUET_CLIENT_SECRET"); env && *env)
        return std::string(env);
    return std::string();
}

} // namespace

void add_auth_options(CLI::App& sub, auth_cli_options& o) {
    sub.add_option("--client-id", o.client_id,
                   "OAuth: a client id registered beforehand with the server's "
                   "authorization server");
    sub.add_option("--client-secret-file", o.client_secret_file,
                   "OAuth: the file holding --client-id's secret (or $DUET_CLIENT_SECRET)")
        ->check(CLI::ExistingFile);
    sub.add_option("--client-metadata-url", o.client_metadata_url,
                   "OAuth: the https URL of this client's metadata document, used as its client id where "
                   "supported");
    sub.add_option("--scope", o.scopes, "OAuth: scopes to ask for instead of the server's suggestion");
}

client::result<std::shared_ptr<auth::oauth_authorization>>
make_cli_authorization(boost::asio::any_io_executor ex, std::string const& url, auth_cli_options const& o,
                       tls::client_config const& tls, user_presence presence) {
    auth::oauth_options options;
    options.tls = tls;
    options.client_metadata_url = o.client_metadata_url;
    auto secret = read_secret(o);
    if (!secret)
        return secret.error();
    if (!o.client_id.empty())
        options.preregistered.push_back(auth::client_registration{{}, o.client_id, *secret, {}, {}});
    else if (!secret->empty())
        return usage("a client secret needs its --client-id");
    if (!o.scopes.empty()) {
        std::vector<std::string> scopes;
        for (auto const& s : o.scopes)
            for (auto& one : auth::split_scopes(s))
                scopes.push_back(std::move(one));
        options.scopes = std::move(scopes);
    }
    if (auto dir = auth::default_credentials_dir()) {
        auto store = auth::file_store::open(*dir);
        if (!store)
            return store.error();
        options.store = *store;
    }
    bool const at_terminal = ::isatty(0) && ::isatty(2);
    if (presence == user_presence::always || at_terminal) {
        auto receiver = auth::loopback_redirect::open(ex);
        if (!receiver)
            return receiver.error();
        options.redirect_uri = (*receiver)->redirect_uri();
        options.user = auth::loopback_user_step(*receiver, [](std::string const& authorization_url) {
            std::fprintf(stderr,
                         "duet: the server needs your authorization. Open this URL in a browser:\n\n  %s\n\n"
                         "duet: waiting for the browser to come back to this machine...\n",
                         authorization_url.c_str());
            std::fflush(stderr);
            open_browser(authorization_url);
        });
    }
    return auth::oauth_authorization::make(ex, url, std::move(options));
}

} // namespace duet::apps
