// File: apps/duet/cli_auth.hpp
//
// OAuth for the `duet` command line: the flags every HTTP command takes (--client-id, --client-secret-file,
// --client-metadata-url, --scope), the credentials file under $XDG_CONFIG_HOME/duet/, and the user's step at
// a terminal (the authorization URL on stderr, a browser opened with xdg-open when there is one, the
// loopback redirect awaited). Without a terminal a command that meets a 401 fails with exit 6 and the advice
// to run `duet login URL` first.
#pragma once

#include <duet/auth/oauth.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

namespace duet::apps {

struct auth_cli_options {
    std::string client_id;
    std::string client_secret_file; ///< the secret is read from here, or from $DUET_CLIENT_SECRET
    std::string client_metadata_url;
    std::vector<std::string> scopes; ///< each may hold several, space-separated
};

void add_auth_options(CLI::App& sub, auth_cli_options& o);

/// How the user's step is taken.
enum class user_presence {
    terminal_only, ///< the flow runs when stdin and stderr are terminals (any command)
    always,        ///< the URL is printed and the redirect awaited even without a terminal (`duet login`)
};

/// The provider for the server at `url`, with the credentials file; a usage error in words (the secret
/// file unreadable, the credentials file corrupt or foreign).
[[nodiscard]] client::result<std::shared_ptr<auth::oauth_authorization>>
make_cli_authorization(boost::asio::any_io_executor ex, std::string const& url, auth_cli_options const& o,
                       tls::client_config const& tls, user_presence presence);

} // namespace duet::apps
