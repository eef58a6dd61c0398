// `duet gateway --config FILE` (gateway_config.hpp): the file read with Boost.JSON and walked by a reader
// that knows the key path of every value, so each error names where it is; then the flags over it, and the
// upstreams made of both.
#include "gateway_config.hpp"

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

namespace duet::apps {

namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using config::element_path;
using config::key_reader;
using config::member_path;
using config::read_rate;
using config::read_server;
using config::reader;

template<class T>
using outcome = boost::system::result<T, std::string>;

template<class T>
outcome<T> failed(std::string why) {
    return outcome<T>(boost::system::in_place_error, std::move(why));
}

// The "gateway" keys, each into `cli` unless its flag was given.
void read_gateway(reader& r, json::value const& v, gateway_cli& cli) {
    auto flag = [&](std::string const& f) {
        return cli.given.contains(f);
    };
    // The value read by `read` into `field` unless one of `flags` was given.
    auto into = [&](auto& field, std::vector<std::string> flags, auto read) {
        return [&field, flags, read, &flag](json::value const& x, std::string const& p) {
            auto value = read(x, p);
            if (!value)
                return;
            for (auto const& f : flags)
                if (flag(f))
                    return;
            field = static_cast<std::remove_reference_t<decltype(field)>>(std::move(*value));
        };
    };
    auto text = [&r](json::value const& x, std::string const& p) {
        return r.nonempty_string(x, p);
    };
    auto any_text = [&r](json::value const& x, std::string const& p) {
        return r.string(x, p);
    };
    auto list = [&r](json::value const& x, std::string const& p) {
        return r.strings(x, p);
    };
    auto truth = [&r](json::value const& x, std::string const& p) {
        return r.boolean(x, p);
    };
    auto file = [&r](json::value const& x, std::string const& p) {
        return r.readable_file(x, p);
    };
    // A string `known` accepts; else an error saying what is `expected`.
    auto word = [&r](auto known, std::string expected) {
        return [&r, known, expected = std::move(expected)](json::value const& x, std::string const& p) {
            auto s = r.string(x, p);
            if (s && !known(*s)) {
                r.fail(p, expected);
                s.reset();
            }
            return s;
        };
    };
    auto whole = [&r](std::uint64_t lo, std::uint64_t hi) {
        return [&r, lo, hi](json::value const& x, std::string const& p) {
            return r.whole(x, p, lo, hi);
        };
    };
    auto number = [&r](double lo, double hi) {
        return [&r, lo, hi](json::value const& x, std::string const& p) {
            return r.number(x, p, lo, hi);
        };
    };
    auto url = [&r](json::value const& x, std::string const& p) {
        auto s = r.nonempty_string(x, p);
        if (s)
            if (auto parsed = client::parse_http_url(*s); !parsed) {
                r.fail(p, parsed.error().message);
                s.reset();
            }
        return s;
    };
    auto& http = cli.http;
    auto& fd = cli.front_door;
    r.walk(
        v, "gateway",
        {{"host", into(http.host, {"--host"}, text)},
         {"port", into(http.port, {"--port"}, whole(0, 65535))},
         {"path", into(http.path, {"--path"},
                       [&r](json::value const& x, std::string const& p) {
                           auto s = r.string(x, p);
                           if (s && (!s->starts_with('/') || s->find_first_of("?#") != std::string::npos ||
                                     (s->size() > 1 && s->ends_with('/')))) {
                               r.fail(p, "a path starts with '/', and holds no query and no trailing '/'");
                               s.reset();
                           }
                           return s;
                       })},
         {"metricsPort", into(cli.metrics.port, {"--metrics-port"}, whole(0, 65535))},
         {"metricsHost", into(cli.metrics.host, {"--metrics-host"}, text)},
         {"logFormat", into(cli.logging.format, {"--log-format"},
                            word([](std::string const& s) { return log::parse_format(s).has_value(); },
                                 "\"text\" or \"json\""))},
         {"logLevel", into(cli.logging.level, {"--log-level"},
                           word([](std::string const& s) { return log::parse_level(s).has_value(); },
                                "one of \"debug\", \"info\", \"warning\", \"error\""))},
         {"threads", into(http.io_threads, {"--threads"}, whole(1, 256))},
         {"allowHosts", into(http.allowed_hosts, {"--allow-host"}, list)},
         {"allowOrigins", into(http.allowed_origins, {"--allow-origin"}, list)},
         {"maxConnections", into(http.max_connections, {"--max-connections"}, whole(0, 1 << 24))},
         {"maxSessions", into(http.max_sessions, {"--max-sessions"}, whole(1, 1 << 24))},
         {"sessionRate", into(http.sessions_per_second_per_peer, {"--session-rate"}, number(0, 1e6))},
         {"bearerToken", into(cli.bearer_token, {"--bearer-token", "--bearer-token-file"},
                              [&r](json::value const& x, std::string const& p) {
                                  auto s = r.secret(x, p);
                                  if (s && s->empty()) {
                                      r.fail(p, "is empty");
                                      s.reset();
                                  }
                                  return s;
                              })},
         {"tls",
          [&](json::value const& x, std::string const& p) {
              auto& t = cli.listener_tls;
              auto const before = r.errors.size();
              r.walk(x, p,
                     {{"cert", into(t.cert, {"--tls-cert"}, file)},
                      {"key", into(t.key, {"--tls-key"}, file)},
                      {"clientCa", into(t.client_ca, {"--tls-client-ca"}, file)}});
              // Said here, by its path, rather than as the flags' --tls-cert and --tls-key.
              if (r.errors.size() == before && t.cert.empty() != t.key.empty())
                  r.fail(p, "cert and key go together");
              else if (r.errors.size() == before && t.cert.empty() && !t.client_ca.empty())
                  r.fail(p, "clientCa needs cert and key (mutual TLS is TLS)");
          }},
         {"auth",
          [&](json::value const& x, std::string const& p) {
              r.walk(x, p,
                     {{"issuer", into(fd.issuer, {"--auth-issuer"}, url)},
                      {"audience", into(fd.audience, {"--auth-audience"}, text)},
                      {"jwks", into(fd.jwks, {"--auth-jwks"}, url)},
                      {"introspection", into(fd.introspection, {"--auth-introspection"}, url)},
                      {"clientId", into(fd.client_id, {"--auth-client-id"}, text)},
                      {"clientSecret",
                       into(fd.client_secret, {"--auth-client-secret-file"},
                            [&r](json::value const& y, std::string const& q) { return r.secret(y, q); })},
                      {"scopes", into(fd.scopes, {"--auth-scopes"},
                                      [&r](json::value const& y, std::string const& q) {
                                          if (y.is_array()) {
                                              auto words = r.strings(y, q);
                                              std::optional<std::string> s;
                                              if (words) {
                                                  s.emplace();
                                                  for (auto const& w : *words)
                                                      *s += (s->empty() ? "" : " ") + w;
                                              }
                                              return s;
                                          }
                                          return r.string(y, q);
                                      })},
                      {"caFile", into(fd.ca_file, {"--auth-ca-file"}, file)},
                      {"resourceName", into(fd.resource_name, {"--auth-resource-name"}, any_text)}});
          }},
         {"era", into(cli.era, {"--era"},
                      [&r](json::value const& x, std::string const& p) {
                          return r.choice(x, p, {"auto", "legacy", "modern"});
                      })},
         {"lenientArgs", into(cli.lenient_args, {"--lenient-args"}, truth)},
         {"poolSize", into(cli.pool_size, {"--pool-size"}, whole(1, 1024))},
         {"shareSessions", into(cli.share_sessions, {"--share-sessions"}, truth)},
         {"busyBatching", into(cli.busy_batching, {"--no-busy-batching"}, truth)},
         {"maxUpstreamMessage",
          into(cli.max_upstream_message, {"--max-upstream-message"},
               [&r](json::value const& x, std::string const& p) -> std::optional<std::uint64_t> {
                   constexpr std::uint64_t lo = 1024, hi = std::uint64_t{1} << 32;
                   if (!x.is_string())
                       return r.whole(x, p, lo, hi);
                   // The flag's own reading of "16MiB", "1M", ...
                   std::string s(x.get_string());
                   std::string why;
                   try {
                       why = CLI::AsSizeValue(false)(s);
                   } catch (CLI::ValidationError const& e) {
                       why = e.what();
                   }
                   std::uint64_t n = 0;
                   auto const [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
                   if (!why.empty() || ec != std::errc() || end != s.data() + s.size()) {
                       r.fail(p, "not a size (a number of bytes, or 16MiB, 1M...)" +
                                     (why.empty() ? std::string() : ": " + why));
                       return std::nullopt;
                   }
                   return r.whole(json::value(n), p, lo, hi);
               })},
         {"upstreamTimeoutSeconds",
          into(cli.upstream_timeout_seconds, {"--upstream-timeout"}, number(0.05, 86400))},
         {"maxParkedCalls", into(cli.max_parked_calls, {"--max-parked-calls"}, whole(1, 1 << 20))},
         {"taskAfterSeconds", into(cli.task_after_seconds, {"--task-after"}, number(0, 86400))},
         {"maxUpstreamChildren",
          into(cli.max_upstream_children, {"--max-upstream-children"}, whole(1, 1 << 16))},
         {"overChildren", into(cli.over_children, {"--over-children"},
                               [&r](json::value const& x, std::string const& p) {
                                   return r.choice(x, p, {"share", "refuse"});
                               })},
         {"upstreamEnv", into(cli.upstream_env, {"--upstream-env"},
                              [&r](json::value const& x, std::string const& p) {
                                  auto s = r.strings(x, p);
                                  if (s)
                                      for (std::size_t i = 0; i < s->size(); ++i)
                                          if ((*s)[i].empty() || (*s)[i].front() == '=') {
                                              r.fail(element_path(p, i), "NAME or NAME=VALUE, with a name");
                                              s.reset();
                                              break;
                                          }
                                  return s;
                              })},
         {"store", into(cli.store.url, {"--store"},
                        [&r](json::value const& x, std::string const& p) {
                            auto s = r.nonempty_string(x, p);
                            if (s)
                                if (auto where = store::parse_redis_url(*s); !where) {
                                    r.fail(p, where.error());
                                    s.reset();
                                }
                            return s;
                        })},
         {"storePrefix", into(cli.store.prefix, {"--store-prefix"}, text)},
         {"merge", into(cli.merge, {"--merge"}, truth)},
         {"nameSeparator", into(cli.name_separator, {"--name-separator"},
                                [&r](json::value const& x, std::string const& p) {
                                    auto s = r.string(x, p);
                                    if (s && !valid_name_separator(*s)) {
                                        r.fail(p, "1 to 4 of letters, digits, '_', '-' and '.'");
                                        s.reset();
                                    }
                                    return s;
                                })},
         {"rateLimits", [&](json::value const& x, std::string const& p) {
              r.walk(x, p,
                     {{"perCaller",
                       into(cli.rate_per_caller, {"--rate-limit"},
                            [&r](json::value const& y, std::string const& q) { return read_rate(r, y, q); })},
                      {"perTool", [&](json::value const& y, std::string const& q) {
                           auto const* o = r.object(y, q);
                           if (!o)
                               return;
                           for (auto const& kv : *o)
                               if (auto rate = read_rate(r, kv.value(), member_path(q, kv.key())))
                                   // A --tool-rate-limit for the same tool wins.
                                   cli.rate_per_tool.try_emplace(std::string(kv.key()), *rate);
                       }}});
          }}});
}

// The line and column (from 1) of byte `offset` of `text`.
std::string line_and_column(std::string_view text, std::size_t offset) {
    offset = std::min(offset, text.size());
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < offset; ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) { // a UTF-8 character's first byte
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// Every line of `errors`, each prefixed "FILE: ".
std::string error_text(std::string const& path, std::vector<std::string> const& errors) {
    std::string out;
    for (auto const& e : errors) {
        if (!out.empty())
            out += '\n';
        out += path + ": " + e;
    }
    return out;
}

} // namespace

bool valid_upstream_name(std::string_view name) noexcept {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    });
}

bool valid_name_separator(std::string_view separator) noexcept {
    return !separator.empty() && separator.size() <= 4 && valid_upstream_name(separator);
}

std::optional<gateway::rate> parse_rate(std::string_view text) noexcept {
    auto number = [](std::string_view s) -> std::optional<double> {
        double d = 0;
        auto const [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(d))
            return std::nullopt;
        return d;
    };
    auto const slash = text.find('/');
    auto const per_second = number(text.substr(0, slash));
    if (!per_second || *per_second <= 0 || *per_second > 1e6)
        return std::nullopt;
    gateway::rate r{*per_second, std::max(1.0, *per_second)};
    if (slash != std::string_view::npos) {
        auto const burst = number(text.substr(slash + 1));
        if (!burst || *burst < 1 || *burst > 1e9)
            return std::nullopt;
        r.burst = *burst;
    }
    return r;
}

std::string upstream_path(std::string const& path, std::string const& name) {
    if (name.empty())
        return path;
    return path.ends_with('/') ? path + name : path + "/" + name;
}

boost::system::result<gateway_config, std::string> load_gateway_config(std::string const& path,
                                                                       gateway_cli const& flags) {
    gateway_config config;
    config.cli = flags;
    if (path.empty())
        return config;
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return failed<gateway_config>(path + ": cannot read it (" + std::strerror(errno) + ")");
    std::stringstream read;
    read << in.rdbuf();
    auto const text = std::move(read).str();

    // Comments and trailing commas are taken: some hosts' files have them.
    json::parse_options options;
    options.allow_comments = true;
    options.allow_trailing_commas = true;
    json::stream_parser parser({}, options);
    boost::system::error_code ec;
    auto const consumed = parser.write_some(text.data(), text.size(), ec);
    if (!ec && consumed < text.size())
        ec = json::error::extra_data;
    if (!ec)
        parser.finish(ec);
    if (ec)
        return failed<gateway_config>(path + ": " + line_and_column(text, consumed) +
                                      ": not JSON: " + ec.message());
    auto const root = parser.release();

    reader r(fs::absolute(fs::path(path)).parent_path());
    if (!root.is_object())
        return failed<gateway_config>(path + ": expected a JSON object ({\"mcpServers\": {...}})");
    bool has_servers = false;
    r.walk(root, "",
           {{"mcpServers",
             [&](json::value const& v, std::string const& p) {
                 has_servers = true;
                 auto const* servers = r.object(v, p);
                 if (!servers)
                     return;
                 for (auto const& kv : *servers) {
                     std::string const name(kv.key());
                     auto const sp = member_path(p, name);
                     if (!valid_upstream_name(name)) {
                         r.fail(sp, "not an upstream name (letters, digits, '-', '_' and '.' only)");
                         continue;
                     }
                     bool disabled = false;
                     if (auto u = read_server(r, name, kv.value(), sp, disabled))
                         config.upstreams.push_back(std::move(*u));
                     else if (disabled)
                         config.disabled.push_back(name);
                 }
             }},
            {"gateway",
             [&](json::value const& v, std::string const&) {
                 read_gateway(r, v, config.cli);
             }},
            {"$schema", [&](json::value const& v, std::string const& p) {
                 (void)r.string(v, p);
             }}});
    if (!has_servers)
        r.fail("mcpServers", "missing (the upstreams, as MCP hosts write them: {\"mcpServers\": {\"NAME\": "
                             "{\"command\": ..., \"args\": [...]}}})");
    if (!r.errors.empty())
        return failed<gateway_config>(error_text(path, r.errors));
    return config;
}

} // namespace duet::apps
