// File: apps/duet/client_cli.hpp
//
// The client side of the `duet` command: `duet discover | tools | prompts | resources | call | read | prompt
// | listen`, each against a URL or a command given after `--`:
//
//     duet tools http://127.0.0.1:8750/mcp
//     duet call echo text=hi -- duet serve --stdio
//     duet --json read duet://demo/readme -- duet serve --stdio       (options may go anywhere before --)
//
// Exit codes (documented in `duet --help` and README): see exit_code below.
#pragma once

#include <duet/client/client.hpp>

#include "cli_auth.hpp"

#include <boost/asio/awaitable.hpp>

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace duet::apps {

/// What scripts can rely on.
namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int tool_error = 1;   ///< the tool ran and reported failure (isError)
inline constexpr int usage = 2;        ///< bad command line, or an impossible request (e.g. modern on legacy)
inline constexpr int unreachable = 3;  ///< could not start/reach the server, or it went away, or timed out
inline constexpr int server_error = 4; ///< the server answered with a JSON-RPC error
inline constexpr int protocol_error = 5; ///< the server broke the protocol or settled on an unusable version
inline constexpr int auth = 6;           ///< HTTP 401/403
inline constexpr int interrupted = 130;  ///< SIGINT / SIGTERM
} // namespace exit_code

/// Options every client command shares.
struct client_cli_options {
    std::string era = "auto";
    std::string protocol_version;
    bool json = false;
    bool quiet = false;
    bool no_input = false;
    double timeout_seconds = 60;
    std::vector<std::string> headers; ///< "Name: value"
    tls::client_config tls;           ///< https: --cacert, --client-cert/--client-key, --insecure
    auth_cli_options auth; ///< OAuth: --client-id, --client-secret-file, --client-metadata-url, --scope
    std::vector<std::string> words;   ///< positionals: [URL] then the command's own arguments
    std::vector<std::string> command; ///< after `--`: the stdio server to spawn
    bool detach = false;              ///< call: print the task's id instead of waiting for its result
    bool cancel_on_exit = false;      ///< call: Ctrl-C cancels the task it follows without asking
    std::string server;               ///< how the server was named (URL, or `-- COMMAND`), for hints
};

/// The task a command follows now (empty id: none), so an interruption can ask what becomes of it.
struct followed_task {
    std::string id;
};

/// Registers the client subcommands on `app`. `command` is what followed `--` on the command line. The
/// returned function runs the parsed one (exit code), or is empty when none of them was chosen.
std::function<int()> add_client_commands(CLI::App& app, std::vector<std::string> const& command);

/// --cacert, --client-cert, --client-key and --insecure, into `tls`.
void add_tls_client_options(CLI::App& sub, tls::client_config& tls);

/// The exit code and the message on stderr for a client error.
int report(client::error const& e);

/// Renders content blocks (tool results, prompt messages) for people.
std::string render_content(boost::json::array const& content);
/// Parses `key=value` arguments: the value as JSON when it is a number, true/false/null, an object, an array
/// or a quoted string, else as a plain string. Empty error string on success.
std::string parse_key_values(std::vector<std::string> const& words, boost::json::object& out);

// The commands (one file each).
boost::asio::awaitable<int> run_discover(std::shared_ptr<client::client> c, std::vector<std::string> args,
                                         client_cli_options const& o,
                                         std::shared_ptr<client::cancellation> cancel);
boost::asio::awaitable<int> run_list(std::shared_ptr<client::client> c, std::vector<std::string> args,
                                     client_cli_options const& o,
                                     std::shared_ptr<client::cancellation> cancel, client::list_kind kind);
boost::asio::awaitable<int> run_call(std::shared_ptr<client::client> c, std::vector<std::string> args,
                                     client_cli_options const& o,
                                     std::shared_ptr<client::cancellation> cancel,
                                     std::shared_ptr<followed_task> following);
boost::asio::awaitable<int> run_task(std::shared_ptr<client::client> c, std::vector<std::string> args,
                                     client_cli_options const& o,
                                     std::shared_ptr<client::cancellation> cancel,
                                     std::shared_ptr<followed_task> following);
/// Prints a tool call's result for people (or as JSON with --json): its exit code.
int print_call_result(boost::json::object const& r, client_cli_options const& o);
/// Reports each new status of a followed task on stderr (nothing with --quiet).
std::function<void(client::task_info const&)> task_status_printer(client_cli_options const& o,
                                                                  std::shared_ptr<followed_task> following);
boost::asio::awaitable<int> run_read(std::shared_ptr<client::client> c, std::vector<std::string> args,
                                     client_cli_options const& o,
                                     std::shared_ptr<client::cancellation> cancel);
boost::asio::awaitable<int> run_prompt(std::shared_ptr<client::client> c, std::vector<std::string> args,
                                       client_cli_options const& o,
                                       std::shared_ptr<client::cancellation> cancel);
boost::asio::awaitable<int> run_listen(std::shared_ptr<client::client> c, std::vector<std::string> args,
                                       client_cli_options const& o,
                                       std::shared_ptr<client::cancellation> cancel);

} // namespace duet::apps
