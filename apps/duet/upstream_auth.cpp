#include "upstream_auth.hpp"

#include <duet/auth/file_store.hpp>
#include <duet/auth/oauth.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace duet::apps {

namespace {

std::optional<std::string> read_file(std::string const& path) {
    std::ifstream in(path);
    if (!in)
        return std::nullopt;
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

// The value for `name` among "[NAME=]VALUE" flags: its own, else the one for every upstream.
std::optional<std::string> value_for(std::vector<std::string> const& given, std::string const& name) {
    std::optional<std::string> all, own;
    for (auto const& g : given) {
        auto v = split_per_upstream(g);
        if (v.name.empty())
            all = std::move(v.value);
        else if (v.name == name)
            own = std::move(v.value);
    }
    return own ? own : all;
}

struct header_flag {
    std::string upstream; ///< empty: every HTTP upstream
    std::string name;
    std::string value;
};

// "[UPSTREAM:]NAME=env:VAR" or "...=file:PATH", read now. A header name holds no ':', so a ':' before the
// '=' ends the upstream's name.
std::optional<header_flag> read_header_flag(std::string const& given, std::string& why) {
    header_flag h;
    auto const eq = given.find('=');
    if (eq == std::string::npos || eq == 0) {
        why = "--upstream-header " + given + ": want [UPSTREAM:]NAME=env:VAR or NAME=file:PATH";
        return std::nullopt;
    }
    auto head = given.substr(0, eq);
    auto const source = given.substr(eq + 1);
    if (auto const colon = head.find(':'); colon != std::string::npos) {
        h.upstream = head.substr(0, colon);
        head = head.substr(colon + 1);
    }
    h.name = head;
    if (source.starts_with("env:")) {
        char const* value = std::getenv(source.substr(4).c_str());
        if (!value || !*value) {
            why = "--upstream-header " + given + ": the environment has no " + source.substr(4);
            return std::nullopt;
        }
        h.value = value;
    } else if (source.starts_with("file:")) {
        auto text = read_file(source.substr(5));
        if (!text) {
            why = "--upstream-header " + given + ": cannot read " + source.substr(5);
            return std::nullopt;
        }
        h.value = trimmed(std::move(*text));
    } else {
        why = "--upstream-header " + h.name +
              ": give the value as env:VAR or file:PATH, never on the command line (it shows in ps)";
        return std::nullopt;
    }
    if (h.name.empty() || h.value.find_first_of("\r\n") != std::string::npos) {
        why = "--upstream-header " + given + ": no header name, or a value spanning lines";
        return std::nullopt;
    }
    return h;
}

// Makes `http`'s OAuth provider: the client credentials grant with `machine`, else the stored tokens (the
// store opened once, on first need).
std::optional<std::string> make_provider(std::string const& name, client::http_target& http,
                                         std::optional<auth::machine_credentials> machine,
                                         std::shared_ptr<auth::file_store>& store,
                                         boost::asio::any_io_executor ex) {
    if (std::any_of(http.headers.begin(), http.headers.end(),
                    [](auto const& h) { return h.first == "Authorization" || h.first == "authorization"; }))
        return "the upstream " + (name.empty() ? http.url : name) +
               " has an Authorization header and OAuth both: choose one";
    auth::oauth_options o;
    o.tls = http.tls;
    if (machine) {
        o.machine = std::move(*machine);
    } else {
        if (!store) {
            auto dir = auth::default_credentials_dir();
            if (!dir)
                return dir.error().message;
            auto opened = auth::file_store::open(*dir);
            if (!opened)
                return opened.error().message;
            store = *opened;
        }
        o.store = store; // no user: a token that cannot be refreshed fails the call, naming `duet login`
    }
    auto provider = auth::oauth_authorization::make(ex, http.url, std::move(o));
    if (!provider)
        return provider.error().message;
    http.authorization = *provider;
    return std::nullopt;
}

} // namespace

std::optional<std::string> apply_upstream_oauth(upstream_oauth const& oauth, std::string const& name,
                                                client::http_target& http, boost::asio::any_io_executor ex) {
    std::optional<auth::machine_credentials> machine;
    if (!oauth.client_id.empty()) {
        auth::machine_credentials m;
        m.client_id = oauth.client_id;
        m.signing_algorithm = oauth.signing_alg;
        m.client_secret = oauth.client_secret;
        m.private_key_pem = oauth.private_key_pem;
        machine = std::move(m);
    }
    std::shared_ptr<auth::file_store> store;
    return make_provider(name, http, std::move(machine), store, std::move(ex));
}

per_upstream_value split_per_upstream(std::string const& given) {
    auto const eq = given.find('=');
    if (eq != std::string::npos && eq > 0 && given.find('/') > eq)
        return {given.substr(0, eq), given.substr(eq + 1)};
    return {{}, given};
}

void add_upstream_auth_flags(CLI::App& cmd, upstream_auth_flags& f) {
    cmd.add_option("--upstream-header", f.headers,
                   "HTTP upstreams: a header on every request, [UPSTREAM:]NAME=env:VAR or NAME=file:PATH "
                   "(never a literal value); repeatable");
    cmd.add_option(
        "--upstream-client-id", f.client_id,
        "HTTP upstreams: OAuth client credentials grant with this client id; NAME=ID for one upstream");
    cmd.add_option("--upstream-client-secret-file", f.client_secret_file,
                   "The secret of --upstream-client-id (client_secret_basic); NAME=FILE for one upstream");
    cmd.add_option(
        "--upstream-private-key-file", f.private_key_file,
        "A PEM private key for --upstream-client-id (private_key_jwt); NAME=FILE for one upstream");
    cmd.add_option(
        "--upstream-signing-alg", f.signing_alg,
        "The JWT algorithm of --upstream-private-key-file: ES256, ES384, RS256, PS256 (default ES256)");
    cmd.add_flag(
        "--upstream-login", f.login,
        "HTTP upstreams: use (and refresh) the tokens `duet login URL` stored for each upstream URL");
    cmd.add_option("--upstream-login-for", f.login_for, "As --upstream-login, for the upstream NAME only");
}

std::optional<std::string> apply_upstream_auth(upstream_auth_flags const& f,
                                               std::span<upstream_ref const> upstreams,
                                               boost::asio::any_io_executor ex) {
    auto known = [&](std::string const& name) {
        return std::any_of(upstreams.begin(), upstreams.end(),
                           [&](auto const& u) { return *u.name == name; });
    };
    std::vector<header_flag> headers;
    for (auto const& given : f.headers) {
        std::string why;
        auto h = read_header_flag(given, why);
        if (!h)
            return why;
        if (!h->upstream.empty() && !known(h->upstream))
            return "--upstream-header " + given + ": no upstream is named \"" + h->upstream + "\"";
        headers.push_back(std::move(*h));
    }
    for (auto const* flag : {&f.client_id, &f.client_secret_file, &f.private_key_file})
        for (auto const& given : *flag)
            if (auto const v = split_per_upstream(given); !v.name.empty() && !known(v.name))
                return given + ": no upstream is named \"" + v.name + "\"";
    for (auto const& name : f.login_for)
        if (!known(name))
            return "--upstream-login-for " + name + ": no upstream is named \"" + name + "\"";

    bool any_flag = !headers.empty() || !f.client_id.empty() || f.login || !f.login_for.empty();
    bool any_http = false;
    std::shared_ptr<auth::file_store> store;
    for (auto const& u : upstreams) {
        auto* http = std::get_if<client::http_target>(u.target);
        auto const& name = *u.name;
        bool const named_here =
            std::any_of(headers.begin(), headers.end(), [&](auto const& h) { return h.upstream == name; }) ||
            std::find(f.login_for.begin(), f.login_for.end(), name) != f.login_for.end();
        if (!http) {
            if (named_here && !name.empty())
                return "the upstream " + name +
                       " is a stdio command: give it credentials through --upstream-env";
            continue;
        }
        any_http = true;
        for (auto const& h : headers)
            if (h.upstream.empty() || h.upstream == name)
                http->headers.emplace_back(h.name, h.value);
        auto const client_id = value_for(f.client_id, name);
        bool const login =
            f.login || std::find(f.login_for.begin(), f.login_for.end(), name) != f.login_for.end();
        if (!client_id && !login)
            continue;
        std::optional<auth::machine_credentials> machine;
        if (client_id) {
            auth::machine_credentials m;
            m.client_id = *client_id;
            m.signing_algorithm = f.signing_alg;
            if (auto path = value_for(f.private_key_file, name)) {
                auto text = read_file(*path);
                if (!text)
                    return "--upstream-private-key-file: cannot read " + *path;
                m.private_key_pem = std::move(*text);
            } else if (auto secret_path = value_for(f.client_secret_file, name)) {
                auto text = read_file(*secret_path);
                if (!text || trimmed(*text).empty())
                    return "--upstream-client-secret-file: cannot read " + *secret_path + ", or it is empty";
                m.client_secret = trimmed(std::move(*text));
            } else {
                return "--upstream-client-id " + *client_id +
                       ": give its --upstream-client-secret-file or --upstream-private-key-file";
            }
            machine = std::move(m);
        }
        if (auto bad = make_provider(name, *http, std::move(machine), store, ex))
            return bad;
    }
    if (any_flag && !any_http)
        return "upstream credentials given, but no upstream is an http(s):// URL";
    return std::nullopt;
}

} // namespace duet::apps
