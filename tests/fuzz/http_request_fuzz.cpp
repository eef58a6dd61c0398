// Fuzz target over the server's reading of one HTTP request (src/transport/http/request.hpp) and its routing:
// the guards (request_guards.hpp), then the routes protocol decides from the body and the session named
// (protocol/http_routing.hpp) and admission with the request's headers, as request_router.cpp follows them.
// The first byte picks the size of the reads and the server's settings; the rest is what a client sent. The
// laws:
// - the request reads exactly as through Beast's own parser (method, target, version, keep-alive, body, the
//   fields of each name in order, and the error) when the reads cut it alike (Beast's own error may depend
//   on the cuts: a head it cannot read yet is a partial message at the end of the stream);
// - a target over the server's bound fails the read, and only then;
// - every answer the head or the body earns is a response that Beast reads back with its status and body,
//   and whose body, when it has one, is valid JSON;
// - on a protected server (bearer_guard.hpp) a request passes only with the one good token in its
//   Authorization header and none in its query, and every challenge is a single Bearer field of visible
//   ASCII, whatever the verifier's words (which here echo the token).
#include <duet/jsonrpc/codec.hpp>
#include <duet/protocol/admission.hpp>
#include <duet/protocol/http_routing.hpp>

#include "support/beast_feed.hpp"
#include "transport/http/bearer_guard.hpp"
#include "transport/http/head_fields.hpp"
#include "transport/http/reply.hpp"
#include "transport/http/request.hpp"
#include "transport/http/request_guards.hpp"
#include "transport/http/response_head.hpp"

#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

namespace {

namespace bhttp = boost::beast::http;
using namespace duet;
using namespace duet::transport::http;
using duet::test::feed;

constexpr std::uint32_t max_header_bytes = 16 * 1024; // http_options' defaults
constexpr std::uint64_t max_body_bytes = 4 * 1024 * 1024;

using field_row = std::tuple<bhttp::field, std::string, std::string>;

struct reading {
    boost::system::error_code ec;
    bhttp::verb method = bhttp::verb::unknown;
    std::string target;
    unsigned version = 0;
    bool keep_alive = false;
    std::string body;
    std::vector<field_row> fields;
    bool operator==(reading const&) const = default;
};

std::string lower(std::string s) {
    for (auto& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// Beast's fields list a repeated name's values together after the first; the request keeps arrival order.
// Grouped by name (in the order each name first came), each group in its own order, the two agree.
void group_by_name(std::vector<field_row>& fields) {
    std::vector<std::string> first_seen;
    for (auto const& f : fields)
        if (std::find(first_seen.begin(), first_seen.end(), lower(std::get<1>(f))) == first_seen.end())
            first_seen.push_back(lower(std::get<1>(f)));
    std::stable_sort(fields.begin(), fields.end(), [&](field_row const& a, field_row const& b) {
        auto rank = [&](field_row const& f) {
            return std::find(first_seen.begin(), first_seen.end(), lower(std::get<1>(f))) -
                   first_seen.begin();
        };
        return rank(a) < rank(b);
    });
}

template<class Message>
void read_into(reading& r, Message const& m) {
    r.method = m.method();
    r.target = std::string(m.target());
    r.version = m.version();
    r.keep_alive = m.keep_alive();
    r.body = std::string(m.body());
    for (auto const& f : m)
        r.fields.emplace_back(f.name(), std::string(f.name_string()), std::string(f.value()));
    group_by_name(r.fields);
}

test::parse_limits const limits{.header = max_header_bytes, .body = max_body_bytes};

reading through_beast(std::string_view raw, std::size_t step) {
    bhttp::request_parser<bhttp::string_body> parser;
    reading r;
    r.ec = feed(parser, raw, step, limits);
    if (!r.ec)
        read_into(r, parser.get());
    return r;
}

// An answer as the server writes it (reply_writer), read back by Beast's client parser.
void check_answer(reply const& r, unsigned version, bool keep_alive) {
    if (!r.body.empty()) {
        boost::system::error_code ec;
        (void)boost::json::parse(r.body, ec);
        if (ec)
            std::abort();
    }
    std::string wire;
    append_response_head(wire, {.version = version,
                                .status = static_cast<unsigned>(r.status),
                                .content_type = r.content_type,
                                .fields = r.headers,
                                .body_size = r.body.size(),
                                .keep_alive = keep_alive});
    wire += r.body;
    bhttp::response_parser<bhttp::string_body> back;
    if (feed(back, wire, wire.size() + 1, {.body = std::nullopt}))
        std::abort();
    if (back.get().result() != r.status || back.get().body() != r.body ||
        back.get().keep_alive() != keep_alive)
        std::abort();
}

// The one token this harness's verifier takes; its refusals quote what they were given, bytes and all.
class harness_verifier final : public auth::token_verifier {
public:
    std::optional<auth::token_verdict> verify_now(std::string_view token) override {
        if (token == "s3cret")
            return std::make_shared<protocol::verified_token const>(
                protocol::verified_token{.subject = "fuzz", .scopes = {"mcp"}});
        if (token.starts_with("later"))
            return std::nullopt;
        return auth::token_rejection{"not \"" + std::string(token) + "\"\r\nX-Injected: 1"};
    }
    boost::asio::awaitable<auth::token_verdict> async_verify(std::string token) override {
        co_return *verify_now(token);
    }
};

transport::protected_resource const protection{.verifier = std::make_shared<harness_verifier>(),
                                               .resource = "https://mcp.example/mcp",
                                               .authorization_servers = {"https://as.example"},
                                               .required_scopes = {"mcp"},
                                               .scopes_supported = {"mcp", "tools:write"}};

// What a protected server answers before routing: the metadata, or the token's verdict.
bool passes_bearer_guard(request const& req, std::string_view path) {
    static bearer_guard const guard(protection, {"/mcp", "/mcp/search"}, {});
    if (auto const metadata = guard.metadata(req, path)) {
        check_answer(*metadata, req.version(), req.keep_alive());
        return false;
    }
    remembered_token last; // a new connection's: nothing remembered
    auto const checked = guard.check_now(req, last);
    if (auto const* refusal = std::get_if<reply>(&checked)) {
        check_answer(*refusal, req.version(), req.keep_alive());
        std::size_t challenges = 0;
        for (auto const& [name, value] : refusal->headers)
            if (name == "WWW-Authenticate") {
                ++challenges;
                if (!value.starts_with("Bearer ") ||
                    std::any_of(value.begin(), value.end(),
                                [](unsigned char c) { return c < 0x20 || c > 0x7E; }))
                    std::abort();
            }
        if (refusal->status != bhttp::status::service_unavailable && challenges != 1)
            std::abort();
        return false;
    }
    if (std::holds_alternative<bearer_guard::pending>(checked))
        return false;
    // Passed: the good token, in the header, none in the query.
    auto const target = req.target();
    auto const auth = header(req, bhttp::field::authorization);
    if (!auth || auth->find("s3cret") == std::string_view::npos ||
        target.find("access_token") != std::string_view::npos)
        std::abort();
    return true;
}

protocol::server_capabilities const capabilities = [] {
    protocol::server_capabilities c;
    c.tools = c.resources = c.prompts = c.logging = true;
    return c;
}();

// What request_router does with a request that passed the guards, up to the answer of a refusal.
void route(request const& req, std::uint8_t settings) {
    bool const keep_alive = req.keep_alive();
    auto const sid = header(req, "Mcp-Session-Id");
    auto const lookup =
        !sid ? protocol::session_lookup::none
             : (settings & 0x40 ? protocol::session_lookup::live : protocol::session_lookup::unknown);
    if (req.method() != bhttp::verb::post) {
        if (protocol::route_session_request(lookup) == protocol::session_request_route::unknown_session)
            check_answer(rejection_reply(protocol::unknown_session_rejection()), req.version(), keep_alive);
        return;
    }
    auto const frame = jsonrpc::parse_frame(req.body(), {.max_bytes = max_body_bytes});
    if (frame.is_batch()) {
        auto const negotiated =
            settings & 0x80 ? std::optional(protocol::version::v2025_03_26) : std::nullopt;
        switch (protocol::route_batch(lookup, negotiated)) {
        case protocol::batch_route::in_session:
            break;
        case protocol::batch_route::unknown_session:
            check_answer(rejection_reply(protocol::unknown_session_rejection()), req.version(), keep_alive);
            break;
        case protocol::batch_route::not_allowed:
            check_answer(
                reply{bhttp::status::bad_request, error_body(std::nullopt, protocol::batch_not_allowed())},
                req.version(), keep_alive);
            break;
        }
        return;
    }
    auto const& one = std::get<jsonrpc::parsed>(frame.content);
    if (!one) {
        reply r{bhttp::status::bad_request, {}};
        if (one.error().reply)
            r.body = jsonrpc::serialize(*one.error().reply);
        check_answer(r, req.version(), keep_alive);
        return;
    }
    auto const* r = std::get_if<jsonrpc::request>(&*one);
    if (!r) {
        if (protocol::route_post_message(lookup) == protocol::message_route::unknown_session)
            check_answer(rejection_reply(protocol::unknown_session_rejection()), req.version(), keep_alive);
        return;
    }
    auto const facts = facts_of(req, nullptr);
    protocol::admission_context ctx;
    ctx.capabilities = &capabilities;
    ctx.eras = static_cast<protocol::era_support>((settings >> 4) % 3);
    ctx.http = &facts;
    auto const claim = protocol::read_version_claim(r->params).what;
    switch (protocol::route_post(claim, r->method, lookup, ctx.eras)) {
    case protocol::post_route::unknown_session:
        check_answer(rejection_reply(protocol::unknown_session_rejection(), r->id), req.version(),
                     keep_alive);
        return;
    case protocol::post_route::in_session:
        ctx.session.legacy = protocol::version::v2025_06_18;
        break;
    default:
        break;
    }
    if (auto const admitted = protocol::admit(*r, ctx); !admitted)
        check_answer(rejection_reply(admitted.error(), r->id), req.version(), keep_alive);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    if (size < 1)
        return 0;
    std::uint8_t const settings = data[0];
    std::size_t const step = 1 + settings % 16;
    std::string_view const raw(reinterpret_cast<char const*>(data + 1), size - 1);

    // Read as Beast reads it.
    request_parser parser;
    reading ours;
    ours.ec = feed(parser, raw, step, limits);
    if (!ours.ec) {
        request const req = parser.release();
        read_into(ours, req);
    }
    if (!(ours == through_beast(raw, step)))
        std::abort();

    // Read as the server reads it: with its bound on the target.
    std::size_t const max_target_bytes = settings & 0x04 ? 8 : 8 * 1024;
    request_parser bounded(nullptr, max_target_bytes);
    auto const ec = feed(bounded, raw, step, limits);
    if (bounded.target_too_long() && ec != bhttp::error::bad_target)
        std::abort();
    if (!ours.ec && (ec ? !bounded.target_too_long() || ours.target.size() <= max_target_bytes
                        : ours.target.size() > max_target_bytes))
        std::abort();
    if (ec)
        return 0;
    request const req = bounded.release();

    static std::vector<transport::http_route> const routes{{"/mcp", nullptr}, {"/mcp/search", nullptr}};
    static transport::http_options const options;
    bool const is_protected = settings & 0x08;
    auto const target = req.target();
    if (is_protected && target.starts_with("/.well-known/")) {
        (void)passes_bearer_guard(req, target.substr(0, target.find('?')));
        return 0;
    }
    request_guards const guards(routes, options);
    auto const verdict = guards.check(req);
    if (auto const* refusal = std::get_if<reply>(&verdict)) {
        check_answer(*refusal, req.version(), req.keep_alive());
        return 0;
    }
    if (is_protected && !passes_bearer_guard(req, target.substr(0, target.find('?'))))
        return 0;
    route(req, settings);
    return 0;
}
