// The upstreams of `duet gateway` (gateway_config.hpp): those the --upstream flags give, then the file's and
// the flags' together as one entry each, their environment, TLS and credentials applied.
#include "gateway_config.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>
#include <variant>

namespace duet::apps {

namespace {

namespace json = boost::json;

template<class T>
using outcome = boost::system::result<T, std::string>;

template<class T>
outcome<T> failed(std::string why) {
    return outcome<T>(boost::system::in_place_error, std::move(why));
}

// ---- the upstreams the flags give
// ---------------------------------------------------------------------------

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
        why = url.error().message + " (give an http(s):// URL or stdio:COMMAND ARGS...)";
        return std::nullopt;
    }
    return client::http_target{text, {}};
}

// The --upstream flags, named and checked: one may be unnamed, several must all be named, each name once.
outcome<std::vector<upstream_entry>> parse_upstream_flags(std::vector<std::string> const& texts) {
    using out_t = std::vector<upstream_entry>;
    out_t out;
    for (auto const& text : texts) {
        upstream_entry u;
        std::string spec = text;
        // NAME=SPEC when an '=' comes before any ':' (a URL or stdio: spec has its ':' first).
        auto const eq = text.find('=');
        if (eq != std::string::npos && eq < text.find(':')) {
            u.name = text.substr(0, eq);
            spec = text.substr(eq + 1);
            if (!valid_upstream_name(u.name))
                return failed<out_t>("--upstream: \"" + u.name +
                                     "\" is not an upstream name (letters, digits, '-', '_' and '.' only)");
        }
        std::string why;
        auto target = parse_upstream(spec, why);
        if (!target)
            return failed<out_t>("--upstream: " + (u.name.empty() ? why : u.name + ": " + why));
        u.target = std::move(*target);
        for (auto const& seen : out)
            if (!u.name.empty() && seen.name == u.name)
                return failed<out_t>("--upstream: two upstreams named \"" + u.name + "\"");
        out.push_back(std::move(u));
    }
    return out;
}

// The upstream TLS flags, into each https upstream's target (over what the file gave it). A name no upstream
// has is a usage error, and so is a TLS flag when no upstream speaks https.
std::optional<std::string> apply_upstream_tls(gateway_cli const& cli,
                                              std::vector<upstream_entry>& upstreams) {
    auto known = [&](std::string const& name) {
        return std::any_of(upstreams.begin(), upstreams.end(), [&](auto const& u) { return u.name == name; });
    };
    struct flag {
        char const* spelling;
        std::vector<std::string> const* given;
        std::string tls::client_config::*field;
    };
    flag const flags[] = {{"--cacert", &cli.cacert, &tls::client_config::ca_file},
                          {"--client-cert", &cli.client_cert, &tls::client_config::client_cert_file},
                          {"--client-key", &cli.client_key, &tls::client_config::client_key_file}};
    bool any_tls_flag = cli.insecure || !cli.insecure_for.empty();
    for (auto const& f : flags)
        for (auto const& g : *f.given) {
            any_tls_flag = true;
            auto const v = split_per_upstream(g);
            if (!v.name.empty() && !known(v.name))
                return std::string(f.spelling) + " " + g + ": no upstream is named \"" + v.name + "\"";
        }
    for (auto const& name : cli.insecure_for)
        if (!known(name))
            return "--insecure-for " + name + ": no upstream is named \"" + name + "\"";
    bool any_https = false;
    for (auto& u : upstreams) {
        auto* h = std::get_if<client::http_target>(&u.target);
        if (!h || !h->url.starts_with("https://"))
            continue;
        any_https = true;
        for (auto const& f : flags) {
            std::optional<std::string> all, own;
            for (auto const& g : *f.given) {
                auto v = split_per_upstream(g);
                if (v.name.empty())
                    all = std::move(v.value);
                else if (v.name == u.name)
                    own = std::move(v.value);
            }
            if (auto value = own ? own : all)
                h->tls.*f.field = *value;
        }
        h->tls.insecure =
            h->tls.insecure || cli.insecure ||
            std::find(cli.insecure_for.begin(), cli.insecure_for.end(), u.name) != cli.insecure_for.end();
    }
    if (any_tls_flag && !any_https)
        return std::string("TLS options given, but no upstream is an https:// URL");
    return std::nullopt;
}

// upstream_entry::identity: every part of the entry a backend is made from, bar the policy and limits
// applied in front of it. The flags' credentials are not in it: they cannot change while the gateway runs.
std::string identity_of(upstream_entry const& u, upstream_oauth const* oauth) {
    json::object id;
    id["name"] = u.name;
    id["mode"] = u.mode ? static_cast<int>(*u.mode) : -1;
    if (auto const* stdio = std::get_if<client::stdio_target>(&u.target)) {
        id["command"] = stdio->command;
        json::array args(stdio->args.begin(), stdio->args.end());
        id["args"] = std::move(args);
        json::array env;
        for (auto const& [k, v] : stdio->env.value_or(client::environment{}))
            env.push_back(json::array{json::string(k), json::string(v)});
        id["env"] = std::move(env);
    } else {
        auto const& http = std::get<client::http_target>(u.target);
        id["url"] = http.url;
        json::array headers;
        for (auto const& [k, v] : http.headers)
            headers.push_back(json::array{json::string(k), json::string(v)});
        id["headers"] = std::move(headers);
        id["tls"] = json::array{json::string(http.tls.ca_file), json::string(http.tls.client_cert_file),
                                json::string(http.tls.client_key_file), http.tls.insecure};
    }
    if (oauth)
        id["oauth"] = json::array{json::string(oauth->client_id), json::string(oauth->client_secret),
                                  json::string(oauth->private_key_pem), json::string(oauth->signing_alg)};
    return json::serialize(id);
}

} // namespace

boost::system::result<std::vector<upstream_entry>, std::string>
gateway_upstreams(gateway_config const& config, boost::asio::any_io_executor ex) {
    using out_t = std::vector<upstream_entry>;
    auto const& cli = config.cli;
    auto from_flags = parse_upstream_flags(cli.upstreams);
    if (!from_flags)
        return failed<out_t>(from_flags.error());

    // The file's, then the flags': one named as a file's replaces it where it stood.
    std::vector<upstream_entry> out;
    std::vector<std::vector<std::string> const*> own_env; // each one's children's variables (the file's)
    std::vector<upstream_oauth const*> own_oauth;
    for (auto const& u : config.upstreams) {
        out.push_back(u.entry);
        own_env.push_back(&u.env);
        own_oauth.push_back(u.oauth ? &*u.oauth : nullptr);
    }
    for (auto& u : *from_flags) {
        auto const same = std::find_if(
            out.begin(), out.end(), [&](auto const& seen) { return !u.name.empty() && seen.name == u.name; });
        if (same == out.end()) {
            out.push_back(std::move(u));
            own_env.push_back(nullptr);
            own_oauth.push_back(nullptr);
            continue;
        }
        auto const i = std::size_t(same - out.begin());
        *same = std::move(u);
        own_env[i] = nullptr;
        own_oauth[i] = nullptr;
    }
    if (out.empty()) {
        std::string why =
            "no upstream: give --upstream URL (or 'stdio:COMMAND ARGS...'), or --config FILE with "
            "mcpServers";
        if (!config.disabled.empty())
            why = "no upstream: every one in " + cli.config_file + cli.check_config_file + " is disabled";
        return failed<out_t>(why);
    }
    if (out.size() > 1)
        for (auto const& u : out)
            if (u.name.empty())
                return failed<out_t>("--upstream: several upstreams must each be named: --upstream NAME=SPEC "
                                     "(served at /mcp/NAME)");

    // Stdio children get the default allow-list, the gateway's upstreamEnv, then their own variables.
    bool any_stdio = false;
    if (auto checked = client::child_environment(cli.upstream_env); !checked)
        return failed<out_t>("--upstream-env " + checked.error().message);
    for (std::size_t i = 0; i < out.size(); ++i) {
        auto* stdio = std::get_if<client::stdio_target>(&out[i].target);
        if (!stdio)
            continue;
        any_stdio = true;
        auto extra = cli.upstream_env;
        if (own_env[i])
            extra.insert(extra.end(), own_env[i]->begin(), own_env[i]->end());
        auto env = client::child_environment(extra);
        if (!env)
            return failed<out_t>(out[i].name + ": env: " + env.error().message);
        stdio->env = std::move(*env);
    }
    if (!cli.upstream_env.empty() && !any_stdio)
        return failed<out_t>("--upstream-env given, but no upstream is a stdio: command");

    if (auto bad = apply_upstream_tls(cli, out))
        return failed<out_t>(*bad);
    // The file's credentials, then the flags' over them.
    for (std::size_t i = 0; i < out.size(); ++i)
        if (own_oauth[i])
            if (auto* http = std::get_if<client::http_target>(&out[i].target))
                if (auto bad = apply_upstream_oauth(*own_oauth[i], out[i].name, *http, ex))
                    return failed<out_t>(out[i].name + ": auth: " + *bad);
    std::vector<upstream_ref> refs;
    for (auto& u : out)
        refs.push_back({&u.name, &u.target});
    if (auto bad = apply_upstream_auth(cli.upstream_auth, refs, ex))
        return failed<out_t>(*bad);
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i].identity = identity_of(out[i], own_oauth[i]);
    return out;
}

} // namespace duet::apps
