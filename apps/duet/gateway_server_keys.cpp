// The upstreams of a config file (mcpServers.NAME): their command or URL, secrets, TLS, credentials,
// filters and limits, each error named by its key path.
#include <duet/store/redis.hpp>

#include "config_reader.hpp"
#include "gateway_config_keys.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>
#include <boost/json/value.hpp>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <sstream>
#include <utility>
#include <variant>

namespace duet::apps::config {

namespace {

// An HTTP header's name: a token (RFC 9110).
bool header_name(std::string_view name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
    });
}

} // namespace

// A rate as {"perSecond": N, "burst": M}.
std::optional<gateway::rate> read_rate(reader& r, json::value const& v, std::string const& path) {
    std::optional<double> per_second, burst;
    bool has_per_second = false;
    r.walk(v, path,
           {{"perSecond",
             [&](json::value const& x, std::string const& p) {
                 has_per_second = true;
                 per_second = r.number(x, p, 0, 1e6);
                 if (per_second && *per_second <= 0) {
                     r.fail(p, "must be above 0");
                     per_second.reset();
                 }
             }},
            {"burst", [&](json::value const& x, std::string const& p) {
                 burst = r.number(x, p, 1, 1e9);
             }}});
    if (v.is_object() && !has_per_second)
        r.fail(path, "missing perSecond");
    if (!per_second)
        return std::nullopt;
    return gateway::rate{*per_second, burst ? *burst : std::max(1.0, *per_second)};
}

namespace {

// One kind's filters: allow, deny, and for tools and prompts rename and describe; checked by check_policy.
void read_kind(reader& r, json::value const& v, std::string const& path, std::string_view kind,
               gateway::kind_policy& out) {
    auto globs = [&](std::vector<std::string>& into) {
        return [&r, &into](json::value const& x, std::string const& p) {
            auto s = r.strings(x, p);
            if (!s)
                return;
            for (std::size_t i = 0; i < s->size(); ++i)
                if (!gateway::valid_glob((*s)[i]))
                    r.fail(element_path(p, i), json::serialize(json::string((*s)[i])) +
                                                   " is not a glob (printable ASCII, not empty)");
            into = std::move(*s);
        };
    };
    auto names = [&](std::map<std::string, std::string>& into) {
        return [&r, &into](json::value const& x, std::string const& p) {
            if (auto m = r.string_map(x, p))
                into = std::map<std::string, std::string>(m->begin(), m->end());
        };
    };
    std::vector<key_reader> keys{{"allow", globs(out.allow)}, {"deny", globs(out.deny)}};
    if (kind != "resources") {
        keys.push_back({"rename", names(out.rename)});
        keys.push_back({"describe", names(out.describe)});
    }
    auto const before = r.errors.size();
    r.walk(v, path, keys);
    if (r.errors.size() == before)
        if (auto bad = gateway::check_policy(out, kind)) {
            // Said as "tools: ...": the path names the kind already.
            auto const said = std::string(kind) + ": ";
            r.fail(path, bad->starts_with(said) ? bad->substr(said.size()) : *bad);
        }
}

// What one mcpServers entry says, before it is put together.
struct server_keys {
    std::optional<std::string> type, command, url, era;
    std::optional<std::vector<std::string>> args;
    std::optional<std::vector<std::pair<std::string, std::string>>> env, headers;
    std::optional<tls::client_config> tls;
    std::optional<upstream_oauth> oauth;
    std::vector<std::string> given; ///< the keys present, for "only for stdio/HTTP" errors
};

} // namespace

std::optional<file_upstream> read_server(reader& r, std::string const& name, json::value const& v,
                                         std::string const& path, bool& disabled) {
    auto const before = r.errors.size();
    // "disabled" first: a disabled entry is skipped unread (its secrets need not be there).
    if (auto const* o = v.if_object())
        if (auto const* d = o->if_contains("disabled"))
            if (auto b = r.boolean(*d, member_path(path, "disabled")); b && *b) {
                disabled = true;
                return std::nullopt;
            }
    file_upstream out;
    out.entry.name = name;
    server_keys k;
    auto secrets = [&](std::optional<std::vector<std::pair<std::string, std::string>>>& into, bool headers) {
        return [&r, &into, headers](json::value const& x, std::string const& p) {
            auto const* o = r.object(x, p);
            if (!o)
                return;
            std::vector<std::pair<std::string, std::string>> read;
            for (auto const& kv : *o) {
                auto const kp = member_path(p, kv.key());
                std::string const key(kv.key());
                if (headers ? !header_name(key) : key.empty() || key.find('=') != std::string::npos) {
                    r.fail(kp, headers ? "not a header name" : "not a variable name");
                    continue;
                }
                auto value = r.secret(kv.value(), kp);
                if (value && headers && value->find_first_of("\r\n") != std::string::npos) {
                    r.fail(kp, "a header value may not span lines");
                    continue;
                }
                if (value)
                    read.emplace_back(key, std::move(*value));
            }
            into = std::move(read);
        };
    };
    auto note = [&](std::string_view key, auto read) {
        return key_reader{key, [&k, key, read](json::value const& x, std::string const& p) {
                              k.given.emplace_back(key);
                              read(x, p);
                          }};
    };
    r.walk(v, path,
           {note("type",
                 [&](json::value const& x, std::string const& p) {
                     if (x.is_string() && x.get_string() == "sse") {
                         r.fail(p, "\"sse\" (the old HTTP+SSE transport) is not supported: give the server's "
                                   "Streamable HTTP endpoint as \"http\"");
                         return;
                     }
                     k.type = r.choice(x, p, {"stdio", "http", "streamable-http"});
                 }),
            note("command",
                 [&](json::value const& x, std::string const& p) { k.command = r.nonempty_string(x, p); }),
            note("args", [&](json::value const& x, std::string const& p) { k.args = r.strings(x, p); }),
            note("env", secrets(k.env, false)),
            note("url",
                 [&](json::value const& x, std::string const& p) {
                     k.url = r.string(x, p);
                     if (!k.url)
                         return;
                     if (auto parsed = client::parse_http_url(*k.url); !parsed) {
                         r.fail(p, parsed.error().message);
                         k.url.reset();
                     }
                 }),
            note("headers", secrets(k.headers, true)),
            {"disabled", [](json::value const&, std::string const&) { /* read above */ }},
            note("era",
                 [&](json::value const& x, std::string const& p) {
                     if (auto era = r.choice(x, p, {"auto", "legacy", "modern"}))
                         out.entry.mode = client::parse_connect_mode(*era);
                 }),
            {"tools",
             [&](json::value const& x, std::string const& p) {
                 read_kind(r, x, p, "tools", out.entry.exposure.tools);
             }},
            {"prompts",
             [&](json::value const& x, std::string const& p) {
                 read_kind(r, x, p, "prompts", out.entry.exposure.prompts);
             }},
            {"resources",
             [&](json::value const& x, std::string const& p) {
                 read_kind(r, x, p, "resources", out.entry.exposure.resources);
             }},
            {"maxConcurrentCalls",
             [&](json::value const& x, std::string const& p) {
                 if (auto n = r.whole(x, p, 0, 1 << 16))
                     out.entry.max_concurrent_calls = *n;
             }},
            {"circuitBreaker",
             [&](json::value const& x, std::string const& p) {
                 auto& b = out.entry.breaker;
                 auto ms = [](double s) {
                     return std::chrono::milliseconds(std::max<long long>(1, std::llround(s * 1000)));
                 };
                 std::optional<std::string> max_path;
                 r.walk(x, p,
                        {{"failures",
                          [&](json::value const& y, std::string const& q) {
                              if (auto n = r.whole(y, q, 0, 1000000))
                                  b.failures = *n;
                          }},
                         {"backoffSeconds",
                          [&](json::value const& y, std::string const& q) {
                              if (auto s = r.number(y, q, 0.001, 86400))
                                  b.first_backoff = ms(*s);
                          }},
                         {"maxBackoffSeconds", [&](json::value const& y, std::string const& q) {
                              if (auto s = r.number(y, q, 0.001, 86400)) {
                                  b.max_backoff = ms(*s);
                                  max_path = q;
                              }
                          }}});
                 // Only a maximum given is checked: one left out grows with the first backoff.
                 if (!max_path && b.max_backoff < b.first_backoff)
                     b.max_backoff = b.first_backoff;
                 if (b.max_backoff < b.first_backoff)
                     r.fail(*max_path, "maxBackoffSeconds is less than backoffSeconds");
             }},
            {"required",
             [&](json::value const& x, std::string const& p) {
                 if (auto b = r.boolean(x, p))
                     out.entry.required = *b;
             }},
            note("tls",
                 [&](json::value const& x, std::string const& p) {
                     tls::client_config t;
                     auto file = [&](std::string& into) {
                         return [&r, &into](json::value const& y, std::string const& q) {
                             if (auto f = r.readable_file(y, q))
                                 into = std::move(*f);
                         };
                     };
                     r.walk(x, p,
                            {{"cacert", file(t.ca_file)},
                             {"clientCert", file(t.client_cert_file)},
                             {"clientKey", file(t.client_key_file)},
                             {"insecure", [&](json::value const& y, std::string const& q) {
                                  if (auto b = r.boolean(y, q))
                                      t.insecure = *b;
                              }}});
                     if (t.client_key_file.empty() != t.client_cert_file.empty())
                         r.fail(p, "clientCert and clientKey go together");
                     k.tls = std::move(t);
                 }),
            note("auth", [&](json::value const& x, std::string const& p) {
                upstream_oauth o;
                bool login = false, has_secret = false, has_key = false;
                r.walk(x, p,
                       {{"clientId",
                         [&](json::value const& y, std::string const& q) {
                             if (auto s = r.nonempty_string(y, q))
                                 o.client_id = std::move(*s);
                         }},
                        {"clientSecret",
                         [&](json::value const& y, std::string const& q) {
                             has_secret = true;
                             if (auto s = r.secret(y, q)) {
                                 if (s->empty())
                                     r.fail(q, "is empty");
                                 o.client_secret = std::move(*s);
                             }
                         }},
                        {"privateKey",
                         [&](json::value const& y, std::string const& q) {
                             has_key = true;
                             if (auto s = r.secret(y, q))
                                 o.private_key_pem = std::move(*s);
                         }},
                        {"signingAlg",
                         [&](json::value const& y, std::string const& q) {
                             if (auto s = r.choice(y, q, {"ES256", "ES384", "RS256", "PS256"}))
                                 o.signing_alg = std::move(*s);
                         }},
                        {"login", [&](json::value const& y, std::string const& q) {
                             if (auto b = r.boolean(y, q))
                                 login = *b;
                         }}});
                if (!x.is_object())
                    return;
                if (!o.client_id.empty() && login)
                    r.fail(p,
                           "give clientId (the client credentials grant) or login (the tokens `duet login` "
                           "stored), not both");
                else if (!o.client_id.empty() && has_secret == has_key)
                    r.fail(p, "clientId needs one of clientSecret and privateKey");
                else if (o.client_id.empty() && (has_secret || has_key))
                    r.fail(p, "clientSecret and privateKey go with clientId");
                if (!o.client_id.empty() || login)
                    k.oauth = std::move(o);
            })});
    if (!v.is_object() || r.errors.size() != before)
        return std::nullopt;

    auto has = [&](std::string_view key) {
        return std::find(k.given.begin(), k.given.end(), key) != k.given.end();
    };
    bool stdio = false;
    if (k.type) {
        stdio = *k.type == "stdio";
    } else if (has("command") && has("url")) {
        r.fail(path, "both command and url: give command (a stdio upstream) or url (an HTTP one)");
        return std::nullopt;
    } else if (!has("command") && !has("url")) {
        r.fail(path, "missing command (a stdio upstream) or url (an HTTP one)");
        return std::nullopt;
    } else {
        stdio = has("command");
    }
    for (std::string_view key : stdio ? std::vector<std::string_view>{"url", "headers", "tls", "auth"}
                                      : std::vector<std::string_view>{"command", "args", "env"})
        if (has(key))
            r.fail(member_path(path, key), stdio ? "not for a stdio upstream" : "not for an HTTP upstream");
    if (stdio && !k.command)
        r.fail(path, "missing command");
    if (!stdio && !k.url)
        r.fail(path, "missing url");
    if (r.errors.size() != before)
        return std::nullopt;

    if (stdio) {
        client::stdio_target t;
        t.command = *k.command;
        // A relative command holding a '/' is the config's; a bare name is looked up on PATH.
        if (t.command.find('/') != std::string::npos)
            t.command = r.resolved(t.command);
        t.args = k.args.value_or(std::vector<std::string>{});
        for (auto& [key, value] : k.env.value_or(decltype(k.env)::value_type{}))
            out.env.push_back(key + "=" + value);
        out.entry.target = std::move(t);
        return out;
    }
    client::http_target t;
    t.url = *k.url;
    if (k.headers)
        t.headers = std::move(*k.headers);
    if (k.tls) {
        if (!t.url.starts_with("https://")) {
            r.fail(member_path(path, "tls"), "only for an https:// url");
            return std::nullopt;
        }
        t.tls = std::move(*k.tls);
    }
    if (k.oauth && std::any_of(t.headers.begin(), t.headers.end(), [](auto const& h) {
            return h.first == "Authorization" || h.first == "authorization";
        })) {
        r.fail(member_path(path, "auth"), "an Authorization header and auth both: choose one");
        return std::nullopt;
    }
    out.oauth = std::move(k.oauth);
    out.entry.target = std::move(t);
    return out;
}

} // namespace duet::apps::config
