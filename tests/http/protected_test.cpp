// The HTTP server as an OAuth 2.1 resource server (http_options::authorization, protected_resource.hpp), in
// both eras: a modern POST (`_meta` 2026-07-28), and a legacy session's initialize, POSTs, GET stream and
// DELETE. Tokens are JWTs signed at test time (unit/auth/jose_minting.hpp) and checked against a JWK Set a
// scripted loopback server publishes (unit/auth/scripted_server.hpp), or opaque tokens the same server
// introspects (RFC 7662). Pinned: the 401 challenge and its parameters (RFC 6750 §3, RFC 9728 §5.1), every
// kind of bad token, key rotation, tokens in the query (400), scope step-up (403 insufficient_scope) for
// tools, prompts and resources, lists left to what the caller may use, the Protected Resource Metadata, and
// 503 when the authorization server cannot be reached.
#include <duet/auth/verifiers.hpp>
#include <duet/server/content.hpp>
#include <duet/server/server.hpp>
#include <duet/transport/http_server.hpp>

#include "http/mcp_http.hpp"
#include "http/raw_socket.hpp"
#include "http/servers.hpp"
#include "stdio/messages.hpp"
#include "unit/auth/jose_minting.hpp"
#include "unit/auth/scripted_server.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <openssl/bio.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {
namespace protected_suite {

namespace json = boost::json;
namespace asio = boost::asio;
namespace auth = duet::auth;
namespace dserver = duet::server;
namespace transport = duet::transport;
using namespace duet::test;
using namespace duet::test::http;
using namespace std::chrono_literals;

constexpr char const* pr_issuer = "https://as.example";
constexpr char const* pr_resource = "https://mcp.example/mcp";
constexpr char const* pr_metadata_url = "https://mcp.example/.well-known/oauth-protected-resource/mcp";
constexpr char const* pr_legacy_version = "2025-11-25";

// ---- the server under test --------------------------------------------------------------------------------

// The io_context the verifiers fetch keys and introspect on, run by a thread of its own.
class pr_verifier_thread {
public:
    pr_verifier_thread() : guard_(asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {}
    ~pr_verifier_thread() {
        guard_.reset();
        io_.stop();
        thread_.join();
    }
    pr_verifier_thread(pr_verifier_thread const&) = delete;
    pr_verifier_thread& operator=(pr_verifier_thread const&) = delete;

    [[nodiscard]] asio::any_io_executor executor() { return io_.get_executor(); }

private:
    asio::io_context io_;
    asio::executor_work_guard<asio::io_context::executor_type> guard_;
    std::thread thread_;
};

struct pr_server_options {
    std::vector<std::string> required_scopes{"mcp"};
    bool list_permitted_only = false;
};

std::string pr_describe_caller(dserver::request_context& ctx) {
    auto const* caller = ctx.caller();
    if (!caller || !caller->token)
        return "anonymous";
    auto const& t = *caller->token;
    std::string scopes;
    for (auto const& s : t.scopes)
        scopes += (scopes.empty() ? "" : " ") + s;
    return "subject=" + t.subject + ";client=" + t.client_id + ";scopes=" + scopes;
}

// A server with a tool telling who calls it, and a tool, a prompt and a resource that each need a scope of
// their own, protected by `verifier`; served on port 0 from a background thread.
class pr_guarded_server {
public:
    pr_guarded_server(std::shared_ptr<auth::token_verifier> verifier, pr_server_options o = {}) {
        dserver::server_options so;
        so.info = {.name = "protected-tests", .version = "1.0"};
        so.list_permitted_only = o.list_permitted_only;
        srv_ = std::make_unique<dserver::server>(std::move(so));
        srv_->add_tool(dserver::tool{.name = "whoami", .run_plain = dserver::plain_run::inline_on_io},
                       [](json::object const&, dserver::request_context& ctx) {
                           return dserver::tool_result::text(pr_describe_caller(ctx));
                       });
        srv_->add_tool(dserver::tool{.name = "write",
                                     .run_plain = dserver::plain_run::inline_on_io,
                                     .required_scopes = {"tools:write"}},
                       [](json::object const&, dserver::request_context&) {
                           return dserver::tool_result::text("written");
                       });
        srv_->add_prompt(dserver::prompt{.name = "plan",
                                         .run_plain = dserver::plain_run::inline_on_io,
                                         .required_scopes = {"prompts:read"}},
                         [](dserver::prompt_arguments const&, dserver::request_context&) {
                             dserver::prompt_result r;
                             r.add("user", {{"type", "text"}, {"text", "the plan"}});
                             return r;
                         });
        srv_->add_resource(dserver::resource{.uri = "file:///secret.txt",
                                             .name = "secret",
                                             .mime_type = "text/plain",
                                             .run_plain = dserver::plain_run::inline_on_io,
                                             .required_scopes = {"resources:read"}},
                           [](std::string const& uri, dserver::request_context&) {
                               dserver::read_result r;
                               r.contents.emplace_back(json::object{
                                   {"uri", uri}, {"mimeType", "text/plain"}, {"text", "classified"}});
                               return r;
                           });
        srv_->add_resource_template(
            dserver::resource_template{.uri_template = "file:///vault/{name}",
                                       .name = "vault",
                                       .mime_type = "text/plain",
                                       .run_plain = dserver::plain_run::inline_on_io,
                                       .required_scopes = {"vault:read"}},
            [](std::string const& uri, dserver::uri_variables const& vars, dserver::request_context&) {
                dserver::read_result r;
                r.contents.emplace_back(json::object{
                    {"uri", uri}, {"mimeType", "text/plain"}, {"text", "vault item " + vars.at("name")}});
                return r;
            });

        transport::http_options opts;
        opts.port = 0;
        opts.io_threads = 1;
        opts.drain_deadline = 2s;
        opts.authorization = transport::protected_resource{.verifier = std::move(verifier),
                                                           .resource = pr_resource,
                                                           .authorization_servers = {pr_issuer},
                                                           .required_scopes = o.required_scopes};
        http_ = std::make_unique<transport::http_server>(*srv_, std::move(opts));
        if (auto ec = http_->listen()) {
            ADD_FAILURE() << "listen: " << ec.message();
            return;
        }
        ep_ = endpoint::parse(http_->url());
        thread_ = std::thread([this] { http_->run(); });
    }
    ~pr_guarded_server() {
        if (thread_.joinable()) {
            http_->stop();
            thread_.join();
        }
    }
    pr_guarded_server(pr_guarded_server const&) = delete;
    pr_guarded_server& operator=(pr_guarded_server const&) = delete;

    [[nodiscard]] endpoint const& ep() const noexcept { return ep_; }

private:
    std::unique_ptr<dserver::server> srv_;
    std::unique_ptr<transport::http_server> http_;
    std::thread thread_;
    endpoint ep_;
};

// Everything one test runs: the verifiers' thread, the authorization server's scripted endpoint (JWKS or
// introspection), the verifier, the protected server. Declared in the order they must outlive each other.
struct pr_stack {
    explicit pr_stack(std::string upstream_path) : upstream(std::move(upstream_path)) {}

    void serve(std::shared_ptr<auth::token_verifier> v, pr_server_options o = {}) {
        verifier = std::move(v);
        http = std::make_unique<pr_guarded_server>(verifier, std::move(o));
    }
    [[nodiscard]] endpoint const& ep() const { return http->ep(); }

    pr_verifier_thread io;
    auth_test_support::scripted_server upstream;
    std::shared_ptr<auth::token_verifier> verifier;
    std::unique_ptr<pr_guarded_server> http;
};

auth::token_rules pr_rules() {
    return auth::token_rules{.issuer = pr_issuer, .audience = pr_resource};
}

auth::jwks_options pr_jwks_options() {
    auth::jwks_options o;
    o.request_timeout = 2s;
    o.refetch_interval = 100ms;
    return o;
}

std::string pr_jwks_text(std::vector<json::object> keys) {
    return json::serialize(jose_minting::jwks_of(std::move(keys)));
}

// A protected server checking JWTs against the JWK Set {k1: the test RSA key}.
std::unique_ptr<pr_stack> pr_jwt_stack(pr_server_options o = {}, auth::jwks_options jo = pr_jwks_options()) {
    auto s = std::make_unique<pr_stack>("/jwks.json");
    s->upstream.answer(pr_jwks_text({jose_minting::public_jwk(jose_minting::rsa_key(), "k1", "RS256")}), 200,
                       "Cache-Control: max-age=300\r\n");
    auto v = auth::make_jwt_verifier(s->io.executor(), s->upstream.url(), pr_rules(), std::move(jo));
    EXPECT_TRUE(v) << v.error().message;
    s->serve(v.value(), std::move(o));
    return s;
}

// ---- tokens -----------------------------------------------------------------------------------------------

std::int64_t pr_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

json::object pr_claims(std::string const& scope) {
    auto const now = pr_now();
    return json::object{{"iss", pr_issuer},        {"aud", pr_resource}, {"sub", "alice"},
                        {"client_id", "client-1"}, {"scope", scope},     {"iat", now},
                        {"exp", now + 600}};
}

json::object pr_header(std::string const& kid = "k1", std::string const& alg = "RS256") {
    return json::object{{"alg", alg}, {"kid", kid}, {"typ", "at+jwt"}};
}

std::string pr_jwt(json::object const& claims, std::string const& kid = "k1",
                   EVP_PKEY* key = jose_minting::rsa_key()) {
    return jose_minting::sign_token(key, pr_header(kid), claims);
}

std::string pr_jwt(std::string const& scope = "mcp") {
    return pr_jwt(pr_claims(scope));
}

header_field pr_bearer(std::string const& token) {
    return {"Authorization", "Bearer " + token};
}

// The public key's PEM text: what a verifier trusting the token's `alg` would take as an HMAC secret.
std::string pr_public_pem(EVP_PKEY* key) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
    PEM_write_bio_PUBKEY(bio.get(), key);
    char* data = nullptr;
    auto const size = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(size));
}

// ---- reading answers --------------------------------------------------------------------------------------

// The auth-params of a `WWW-Authenticate: Bearer k="v", ...` challenge; "scheme" holds the scheme.
std::map<std::string, std::string> pr_challenge(reply const& r) {
    std::map<std::string, std::string> out;
    auto const field = r.header("WWW-Authenticate");
    if (!field)
        return out;
    std::string_view s = *field;
    auto const sp = s.find(' ');
    out["scheme"] = std::string(s.substr(0, sp));
    if (sp == std::string_view::npos)
        return out;
    s.remove_prefix(sp + 1);
    while (!s.empty()) {
        while (!s.empty() && (s.front() == ' ' || s.front() == ','))
            s.remove_prefix(1);
        auto const eq = s.find('=');
        if (eq == std::string_view::npos)
            break;
        auto const name = std::string(s.substr(0, eq));
        s.remove_prefix(eq + 1);
        std::string value;
        if (!s.empty() && s.front() == '"') {
            auto const close = s.find('"', 1);
            value = std::string(s.substr(1, close - 1));
            s.remove_prefix(close == std::string_view::npos ? s.size() : close + 1);
        } else {
            auto const comma = s.find(',');
            value = std::string(s.substr(0, comma));
            s.remove_prefix(comma == std::string_view::npos ? s.size() : comma);
        }
        out[name] = value;
    }
    return out;
}

// A 401 challenge with error="invalid_token", a description, and the metadata's URL.
void pr_expect_invalid_token(reply const& r) {
    EXPECT_EQ(r.status, 401u) << r.body;
    auto p = pr_challenge(r);
    EXPECT_EQ(p["scheme"], "Bearer") << r.header("WWW-Authenticate").value_or("(none)");
    EXPECT_EQ(p["error"], "invalid_token") << r.header("WWW-Authenticate").value_or("(none)");
    EXPECT_FALSE(p["error_description"].empty()) << r.header("WWW-Authenticate").value_or("(none)");
    EXPECT_EQ(p["resource_metadata"], pr_metadata_url);
    EXPECT_EQ(p["scope"], "mcp");
}

// A 401 challenge naming no error: no token was offered.
void pr_expect_bare_challenge(reply const& r) {
    EXPECT_EQ(r.status, 401u) << r.body;
    auto p = pr_challenge(r);
    EXPECT_EQ(p["scheme"], "Bearer") << r.header("WWW-Authenticate").value_or("(none)");
    EXPECT_FALSE(p.contains("error")) << r.header("WWW-Authenticate").value_or("(none)");
    EXPECT_FALSE(p.contains("error_description")) << r.header("WWW-Authenticate").value_or("(none)");
    EXPECT_EQ(p["resource_metadata"], pr_metadata_url);
    EXPECT_EQ(p["scope"], "mcp");
}

// A 403 insufficient_scope challenge whose scope lists `scopes`.
void pr_expect_insufficient(reply const& r, std::string const& scopes) {
    EXPECT_EQ(r.status, 403u) << r.body;
    auto p = pr_challenge(r);
    EXPECT_EQ(p["scheme"], "Bearer") << r.header("WWW-Authenticate").value_or("(none)");
    EXPECT_EQ(p["error"], "insufficient_scope") << r.header("WWW-Authenticate").value_or("(none)");
    EXPECT_EQ(p["scope"], scopes) << r.header("WWW-Authenticate").value_or("(none)");
    EXPECT_EQ(p["resource_metadata"], pr_metadata_url);
}

// The response's result (the last message answering a request), or null.
json::value pr_result(reply const& r) {
    for (auto const& m : r.messages())
        if (auto const* o = m.if_object(); o && o->contains("result"))
            return o->at("result");
    return nullptr;
}

// The first text content of a tools/call result.
std::string pr_tool_text(reply const& r) {
    auto const result = pr_result(r);
    auto const* content = result.is_object() ? result.get_object().if_contains("content") : nullptr;
    if (!content || !content->is_array() || content->get_array().empty())
        return {};
    auto const& first = content->get_array().front();
    auto const* text = first.is_object() ? first.get_object().if_contains("text") : nullptr;
    return text && text->is_string() ? std::string(text->get_string()) : std::string();
}

std::vector<std::string> pr_tool_names(reply const& r) {
    std::vector<std::string> out;
    auto const result = pr_result(r);
    auto const* tools = result.is_object() ? result.get_object().if_contains("tools") : nullptr;
    if (tools && tools->is_array())
        for (auto const& t : tools->get_array())
            out.emplace_back(t.at("name").as_string());
    return out;
}

bool pr_lists(std::vector<std::string> const& names, std::string const& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

json::object pr_whoami(json::value id) {
    return modern_request(std::move(id), "tools/call", call_params("whoami"));
}

request_spec pr_delete_spec(mcp_http const& c, std::vector<header_field> const& extra = {}) {
    request_spec spec;
    spec.method = "DELETE";
    spec.headers = c.session_headers();
    for (auto const& h : extra)
        set_header(spec, h.name, h.value);
    return spec;
}

// A modern request carrying `authorization` as the Authorization header's value.
reply pr_post_with(endpoint const& ep, std::string const& authorization) {
    mcp_http c(ep);
    return c.post(pr_whoami(1), {{"Authorization", authorization}});
}

// ---- no token, a good token -------------------------------------------------------------------------------

TEST(ProtectedResource, AModernRequestWithoutATokenIsChallengedWithTheMetadataUrlAndScope) {
    auto s = pr_jwt_stack();
    mcp_http c(s->ep());
    pr_expect_bare_challenge(c.post(modern_request(1, "tools/list")));
    pr_expect_bare_challenge(c.post(pr_whoami(2)));
}

TEST(ProtectedResource, EveryLegacyRequestWithoutATokenIsChallenged) {
    auto s = pr_jwt_stack();
    mcp_http anonymous(s->ep());
    pr_expect_bare_challenge(anonymous.post(initialize_request("init", pr_legacy_version)));

    // A session opened with a token: each of its requests needs one again.
    mcp_http c(s->ep());
    c.set_default_headers({pr_bearer(pr_jwt())});
    c.initialize(pr_legacy_version);
    ASSERT_TRUE(c.session_id());
    pr_expect_bare_challenge(c.post(legacy_request(2, "tools/list"), {{"Authorization", ""}}));
    auto get = stream_spec(c);
    pr_expect_bare_challenge(exchange(s->ep(), get, 10s));
    pr_expect_bare_challenge(exchange(s->ep(), pr_delete_spec(c), 10s));
    // The session outlived the refusals: the token still reaches it.
    auto const listed = c.post(legacy_request(3, "tools/list"));
    EXPECT_EQ(listed.status, 200u) << listed.body;
    EXPECT_TRUE(pr_lists(pr_tool_names(listed), "whoami")) << listed.body;
}

TEST(ProtectedResource, AValidTokenReachesAModernHandlerAsTheCaller) {
    auto s = pr_jwt_stack();
    mcp_http c(s->ep());
    auto const r = c.post(pr_whoami(1), {pr_bearer(pr_jwt("mcp tools:write"))});
    EXPECT_EQ(r.status, 200u) << r.body;
    EXPECT_EQ(pr_tool_text(r), "subject=alice;client=client-1;scopes=mcp tools:write") << r.body;
    // The key set is held: the next token costs no fetch.
    auto const again = c.post(pr_whoami(2), {pr_bearer(pr_jwt("mcp tools:write"))});
    EXPECT_EQ(again.status, 200u) << again.body;
    EXPECT_EQ(s->upstream.requests(), 1);
    c.expect_schema_valid();
}

TEST(ProtectedResource, AValidTokenServesALegacySessionPostsStreamAndDelete) {
    auto s = pr_jwt_stack();
    auto const token = pr_jwt();
    mcp_http c(s->ep());
    c.set_default_headers({pr_bearer(token)});
    auto const init = c.initialize(pr_legacy_version);
    EXPECT_EQ(init.status, 200u) << init.body;
    ASSERT_TRUE(c.session_id());

    auto const call = c.post(legacy_request(2, "tools/call", call_params("whoami")));
    EXPECT_EQ(call.status, 200u) << call.body;
    EXPECT_EQ(pr_tool_text(call), "subject=alice;client=client-1;scopes=mcp") << call.body;

    auto stream = c.open_spec(stream_spec(c, {pr_bearer(token)}));
    EXPECT_EQ(stream->status(), 200u);
    EXPECT_EQ(stream->header("Content-Type").value_or(""), "text/event-stream");
    stream->close();

    auto const del = exchange(s->ep(), pr_delete_spec(c, {pr_bearer(token)}), 10s);
    EXPECT_GE(del.status, 200u) << del.body;
    EXPECT_LT(del.status, 300u) << del.body;
    c.expect_schema_valid();
}

// ---- bad tokens -------------------------------------------------------------------------------------------

TEST(ProtectedResource, AnExpiredTokenIsRefusedWithInvalidToken) {
    auto s = pr_jwt_stack();
    auto claims = pr_claims("mcp");
    claims["iat"] = pr_now() - 7200;
    claims["exp"] = pr_now() - 3600;
    auto const r = pr_post_with(s->ep(), "Bearer " + pr_jwt(claims));
    pr_expect_invalid_token(r);
    EXPECT_NE(pr_challenge(r)["error_description"].find("expired"), std::string::npos)
        << pr_challenge(r)["error_description"];
}

TEST(ProtectedResource, ATokenNotYetValidIsRefusedWithInvalidToken) {
    auto s = pr_jwt_stack();
    auto claims = pr_claims("mcp");
    claims["nbf"] = pr_now() + 3600;
    pr_expect_invalid_token(pr_post_with(s->ep(), "Bearer " + pr_jwt(claims)));
}

TEST(ProtectedResource, ATokenFromAnotherIssuerIsRefusedWithInvalidToken) {
    auto s = pr_jwt_stack();
    auto claims = pr_claims("mcp");
    claims["iss"] = "https://evil.example";
    pr_expect_invalid_token(pr_post_with(s->ep(), "Bearer " + pr_jwt(claims)));
}

TEST(ProtectedResource, ATokenForAnotherAudienceIsRefusedWithInvalidToken) {
    auto s = pr_jwt_stack();
    auto claims = pr_claims("mcp");
    claims["aud"] = "https://other.example/mcp";
    pr_expect_invalid_token(pr_post_with(s->ep(), "Bearer " + pr_jwt(claims)));
}

TEST(ProtectedResource, AnUnsignedAlgNoneTokenIsRefusedWithInvalidToken) {
    auto s = pr_jwt_stack();
    auto const header = json::object{{"alg", "none"}, {"kid", "k1"}, {"typ", "at+jwt"}};
    auto const token = auth::base64url(json::serialize(header)) + "." +
                       auth::base64url(json::serialize(pr_claims("mcp"))) + ".";
    pr_expect_invalid_token(pr_post_with(s->ep(), "Bearer " + token));
    // And with a made-up signature.
    pr_expect_invalid_token(pr_post_with(s->ep(), "Bearer " + token + "c2ln"));
}

TEST(ProtectedResource, AnHs256TokenKeyedWithThePublicKeyIsRefusedWithInvalidToken) {
    auto s = pr_jwt_stack();
    auto const input = auth::base64url(json::serialize(pr_header("k1", "HS256"))) + "." +
                       auth::base64url(json::serialize(pr_claims("mcp")));
    auto const secret = pr_public_pem(jose_minting::rsa_key());
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_size = 0;
    ASSERT_NE(HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
                   reinterpret_cast<unsigned char const*>(input.data()), input.size(), mac, &mac_size),
              nullptr);
    auto const token =
        input + "." + auth::base64url(std::string_view(reinterpret_cast<char const*>(mac), mac_size));
    pr_expect_invalid_token(pr_post_with(s->ep(), "Bearer " + token));
}

TEST(ProtectedResource, ATamperedTokenIsRefusedWithInvalidToken) {
    auto s = pr_jwt_stack();
    auto token = pr_jwt();
    // A signature byte changed.
    auto bad_signature = token;
    auto& c = bad_signature[bad_signature.size() - 10];
    c = c == 'A' ? 'B' : 'A';
    pr_expect_invalid_token(pr_post_with(s->ep(), "Bearer " + bad_signature));
    // Claims changed under the original signature (more scopes).
    auto const first_dot = token.find('.');
    auto const second_dot = token.find('.', first_dot + 1);
    auto const forged = token.substr(0, first_dot + 1) +
                        auth::base64url(json::serialize(pr_claims("mcp tools:write admin"))) +
                        token.substr(second_dot);
    pr_expect_invalid_token(pr_post_with(s->ep(), "Bearer " + forged));
}

TEST(ProtectedResource, ATruncatedTokenIsRefusedWithInvalidToken) {
    auto s = pr_jwt_stack();
    auto const token = pr_jwt();
    pr_expect_invalid_token(pr_post_with(s->ep(), "Bearer " + token.substr(0, token.size() - 20)));
    pr_expect_invalid_token(pr_post_with(s->ep(), "Bearer " + token.substr(0, token.rfind('.'))));
    pr_expect_invalid_token(pr_post_with(s->ep(), "Bearer " + token.substr(0, token.find('.'))));
}

TEST(ProtectedResource, ATokenSignedByAnotherKeyUnderAKnownKidIsRefusedWithInvalidToken) {
    auto s = pr_jwt_stack();
    pr_expect_invalid_token(
        pr_post_with(s->ep(), "Bearer " + pr_jwt(pr_claims("mcp"), "k1", jose_minting::other_rsa_key())));
}

TEST(ProtectedResource, AnUnknownKidIsAcceptedOnceTheJwksRotatesToHoldIt) {
    auto s = pr_jwt_stack();
    // The set is fetched and held.
    EXPECT_EQ(pr_post_with(s->ep(), "Bearer " + pr_jwt()).status, 200u);
    EXPECT_EQ(s->upstream.requests(), 1);

    auto const rotated = pr_jwt(pr_claims("mcp"), "k2", jose_minting::other_rsa_key());
    // k2 is not published yet: refetched (the interval has passed), still unknown.
    std::this_thread::sleep_for(150ms);
    pr_expect_invalid_token(pr_post_with(s->ep(), "Bearer " + rotated));
    EXPECT_EQ(s->upstream.requests(), 2);

    // The authorization server rotates: k2 joins the set.
    s->upstream.answer(pr_jwks_text({jose_minting::public_jwk(jose_minting::rsa_key(), "k1", "RS256"),
                                     jose_minting::public_jwk(jose_minting::other_rsa_key(), "k2", "RS256")}),
                       200, "Cache-Control: max-age=300\r\n");
    std::this_thread::sleep_for(150ms);
    mcp_http c(s->ep());
    auto const r = c.post(pr_whoami(1), {pr_bearer(rotated)});
    EXPECT_EQ(r.status, 200u) << r.body;
    EXPECT_EQ(pr_tool_text(r), "subject=alice;client=client-1;scopes=mcp") << r.body;
    EXPECT_EQ(s->upstream.requests(), 3);
}

TEST(ProtectedResource, UnknownKidsDoNotRefetchTheJwksFasterThanTheRefetchInterval) {
    auto opts = pr_jwks_options();
    opts.refetch_interval = 60s;
    auto s = pr_jwt_stack({}, opts);
    EXPECT_EQ(pr_post_with(s->ep(), "Bearer " + pr_jwt()).status, 200u);
    for (int i = 0; i < 5; ++i)
        pr_expect_invalid_token(
            pr_post_with(s->ep(), "Bearer " + pr_jwt(pr_claims("mcp"), "unknown-" + std::to_string(i),
                                                     jose_minting::other_rsa_key())));
    EXPECT_EQ(s->upstream.requests(), 1);
}

TEST(ProtectedResource, ATokenOverTheVerifierSizeLimitIsRefusedWithInvalidToken) {
    auto s = pr_jwt_stack();
    // 10 KiB: under the server's header limit (16 KiB), over token_rules::max_bytes (8 KiB).
    pr_expect_invalid_token(pr_post_with(s->ep(), "Bearer " + std::string(10 * 1024, 'a')));
    EXPECT_EQ(s->upstream.requests(), 0);
}

TEST(ProtectedResource, A64KibTokenIsRefusedByTheHeaderLimit) {
    auto s = pr_jwt_stack();
    // By hand: the suite's client (Beast) cannot hold a field this long.
    mcp_http c(s->ep());
    auto spec = c.spec_for(pr_whoami(1));
    set_header(spec, "Authorization", "Bearer " + std::string(64 * 1024, 'a'));
    raw_socket raw(s->ep().port);
    ASSERT_TRUE(raw.connected());
    raw.send(raw_request(s->ep(), spec));
    auto const answer = raw.read_response(10s);
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 431 ")) << answer.substr(0, 200);
    EXPECT_EQ(s->upstream.requests(), 0);
}

// ---- how the token is presented ---------------------------------------------------------------------------

TEST(ProtectedResource, ATokenInTheQueryIsRefusedWithInvalidRequest) {
    auto s = pr_jwt_stack();
    auto const token = pr_jwt();
    mcp_http c(s->ep());
    for (bool with_header : {false, true}) {
        auto spec = c.spec_for(pr_whoami(1));
        spec.target = s->ep().path + "?access_token=" + token;
        if (with_header)
            set_header(spec, "Authorization", "Bearer " + token);
        auto const r = exchange(s->ep(), spec, 10s);
        EXPECT_EQ(r.status, 400u) << r.body;
        auto p = pr_challenge(r);
        EXPECT_EQ(p["error"], "invalid_request") << r.header("WWW-Authenticate").value_or("(none)");
        EXPECT_FALSE(p["error_description"].empty());
    }
    // Among other parameters too.
    auto spec = c.spec_for(pr_whoami(2));
    spec.target = s->ep().path + "?x=1&access_token=" + token;
    set_header(spec, "Authorization", "Bearer " + token);
    EXPECT_EQ(exchange(s->ep(), spec, 10s).status, 400u);
}

TEST(ProtectedResource, AMalformedBearerCredentialIsRefusedWithInvalidToken) {
    auto s = pr_jwt_stack();
    auto const token = pr_jwt();
    for (std::string const& authorization :
         {std::string("Bearer"), std::string("Bearer "), std::string("Bearer a b"), "Bearer " + token + " x",
          std::string("Bearer to,ken"), std::string("Bearer tok\"en"), std::string("Bearer ===")}) {
        SCOPED_TRACE(authorization.substr(0, 40));
        pr_expect_invalid_token(pr_post_with(s->ep(), authorization));
    }
    // The scheme is case-insensitive (RFC 9110 §11.1).
    EXPECT_EQ(pr_post_with(s->ep(), "bearer " + token).status, 200u);
}

TEST(ProtectedResource, AnotherSchemeIsChallengedWithoutAnError) {
    auto s = pr_jwt_stack();
    pr_expect_bare_challenge(pr_post_with(s->ep(), "Basic " + base64("alice:secret")));
    pr_expect_bare_challenge(pr_post_with(s->ep(), "Bearertoken"));
}

// ---- scopes -----------------------------------------------------------------------------------------------

TEST(ProtectedScopes, AToolNeedingAScopeTheTokenLacksIsRefusedWithInsufficientScope) {
    auto s = pr_jwt_stack();
    mcp_http c(s->ep());
    auto const lacking = c.post(modern_request(1, "tools/call", call_params("write")), {pr_bearer(pr_jwt())});
    pr_expect_insufficient(lacking, "mcp tools:write");
    auto const holding =
        c.post(modern_request(2, "tools/call", call_params("write")), {pr_bearer(pr_jwt("mcp tools:write"))});
    EXPECT_EQ(holding.status, 200u) << holding.body;
    EXPECT_EQ(pr_tool_text(holding), "written") << holding.body;
    // Tools that need nothing more are served with the server-wide scope alone.
    EXPECT_EQ(c.post(pr_whoami(3), {pr_bearer(pr_jwt())}).status, 200u);
}

TEST(ProtectedScopes, APromptNeedingAScopeTheTokenLacksIsRefusedWithInsufficientScope) {
    auto s = pr_jwt_stack();
    mcp_http c(s->ep());
    auto const get = [](int id) {
        return modern_request(id, "prompts/get", {{"name", "plan"}});
    };
    pr_expect_insufficient(c.post(get(1), {pr_bearer(pr_jwt("mcp tools:write"))}), "mcp prompts:read");
    auto const holding = c.post(get(2), {pr_bearer(pr_jwt("mcp prompts:read"))});
    EXPECT_EQ(holding.status, 200u) << holding.body;
    EXPECT_NE(holding.body.find("the plan"), std::string::npos) << holding.body;
}

TEST(ProtectedScopes, AResourceNeedingAScopeTheTokenLacksIsRefusedWithInsufficientScope) {
    auto s = pr_jwt_stack();
    mcp_http c(s->ep());
    auto const read = [](int id) {
        return modern_request(id, "resources/read", {{"uri", "file:///secret.txt"}});
    };
    pr_expect_insufficient(c.post(read(1), {pr_bearer(pr_jwt())}), "mcp resources:read");
    auto const holding = c.post(read(2), {pr_bearer(pr_jwt("mcp resources:read"))});
    EXPECT_EQ(holding.status, 200u) << holding.body;
    EXPECT_NE(holding.body.find("classified"), std::string::npos) << holding.body;
}

TEST(ProtectedScopes, ATemplatedResourceNeedingAScopeTheTokenLacksIsRefusedWithInsufficientScope) {
    auto s = pr_jwt_stack();
    mcp_http c(s->ep());
    auto const read = [](int id) {
        return modern_request(id, "resources/read", {{"uri", "file:///vault/key"}});
    };
    // The resource's own scope is not the template's.
    pr_expect_insufficient(c.post(read(1), {pr_bearer(pr_jwt("mcp resources:read"))}), "mcp vault:read");
    auto const holding = c.post(read(2), {pr_bearer(pr_jwt("mcp vault:read"))});
    EXPECT_EQ(holding.status, 200u) << holding.body;
    EXPECT_NE(holding.body.find("vault item key"), std::string::npos) << holding.body;
}

TEST(ProtectedScopes, ALegacySessionCallNeedingAScopeTheTokenLacksIsRefusedWithInsufficientScope) {
    auto s = pr_jwt_stack();
    mcp_http c(s->ep());
    c.set_default_headers({pr_bearer(pr_jwt())});
    c.initialize(pr_legacy_version);
    ASSERT_TRUE(c.session_id());
    pr_expect_insufficient(c.post(legacy_request(2, "tools/call", call_params("write"))), "mcp tools:write");
    auto const stepped_up =
        c.post(legacy_request(3, "tools/call", call_params("write")), {pr_bearer(pr_jwt("mcp tools:write"))});
    EXPECT_EQ(stepped_up.status, 200u) << stepped_up.body;
    EXPECT_EQ(pr_tool_text(stepped_up), "written") << stepped_up.body;
    // In a batch too (2025-03-26 sessions take batches).
    mcp_http old(s->ep());
    old.set_default_headers({pr_bearer(pr_jwt())});
    old.initialize("2025-03-26");
    ASSERT_TRUE(old.session_id());
    json::array batch{legacy_request(4, "tools/list"), legacy_request(5, "tools/call", call_params("write"))};
    pr_expect_insufficient(old.post(batch), "mcp tools:write");
}

// What tells of a resource or prompt without reading it needs its scope too: a subscription (legacy
// resources/subscribe, a modern listen's resourceSubscriptions) and completion of its arguments.
TEST(ProtectedScopes, SubscribingListeningAndCompletingNeedTheItemsScopes) {
    auto s = pr_jwt_stack();
    mcp_http c(s->ep());
    c.set_default_headers({pr_bearer(pr_jwt())});
    c.initialize(pr_legacy_version);
    ASSERT_TRUE(c.session_id());
    pr_expect_insufficient(c.post(legacy_request(2, "resources/subscribe", {{"uri", "file:///secret.txt"}})),
                           "mcp resources:read");
    auto const subscribed = c.post(legacy_request(3, "resources/subscribe", {{"uri", "file:///secret.txt"}}),
                                   {pr_bearer(pr_jwt("mcp resources:read"))});
    EXPECT_NE(subscribed.status, 403u) << subscribed.body;

    mcp_http m(s->ep());
    json::object filter{{"resourceSubscriptions", json::array{"file:///vault/key"}}};
    pr_expect_insufficient(
        m.post(modern_request(4, "subscriptions/listen", {{"notifications", filter}}), {pr_bearer(pr_jwt())}),
        "mcp vault:read");

    json::object prompt_ref{{"ref", {{"type", "ref/prompt"}, {"name", "plan"}}},
                            {"argument", {{"name", "topic"}, {"value", "a"}}}};
    pr_expect_insufficient(
        m.post(modern_request(5, "completion/complete", prompt_ref), {pr_bearer(pr_jwt())}),
        "mcp prompts:read");
    json::object template_ref{{"ref", {{"type", "ref/resource"}, {"uri", "file:///vault/{name}"}}},
                              {"argument", {{"name", "name"}, {"value", "k"}}}};
    pr_expect_insufficient(
        m.post(modern_request(6, "completion/complete", template_ref), {pr_bearer(pr_jwt())}),
        "mcp vault:read");
    auto const completed =
        m.post(modern_request(7, "completion/complete", template_ref), {pr_bearer(pr_jwt("mcp vault:read"))});
    // Past the token check (this server completes nothing, so the method itself is not found).
    EXPECT_NE(completed.status, 403u) << completed.body;
    EXPECT_NE(completed.status, 401u) << completed.body;
}

TEST(ProtectedScopes, TheServerWideScopeIsNeededByEveryMethodInBothEras) {
    auto s = pr_jwt_stack();
    auto const without = pr_jwt("tools:write prompts:read");
    mcp_http modern(s->ep());
    pr_expect_insufficient(modern.post(modern_request(1, "tools/list"), {pr_bearer(without)}), "mcp");
    pr_expect_insufficient(modern.post(modern_request(2, "server/discover"), {pr_bearer(without)}), "mcp");

    mcp_http anon(s->ep());
    pr_expect_insufficient(anon.post(initialize_request("init", pr_legacy_version), {pr_bearer(without)}),
                           "mcp");

    auto const with = pr_jwt("mcp");
    mcp_http c(s->ep());
    c.set_default_headers({pr_bearer(with)});
    c.initialize(pr_legacy_version);
    ASSERT_TRUE(c.session_id());
    pr_expect_insufficient(c.post(legacy_request(2, "tools/list"), {pr_bearer(without)}), "mcp");
    pr_expect_insufficient(exchange(s->ep(), stream_spec(c, {pr_bearer(without)}), 10s), "mcp");
    pr_expect_insufficient(exchange(s->ep(), pr_delete_spec(c, {pr_bearer(without)}), 10s), "mcp");
    // None of them ended the session.
    EXPECT_EQ(c.post(legacy_request(3, "tools/list")).status, 200u);
    auto const del = exchange(s->ep(), pr_delete_spec(c, {pr_bearer(with)}), 10s);
    EXPECT_GE(del.status, 200u) << del.body;
    EXPECT_LT(del.status, 300u) << del.body;
}

TEST(ProtectedScopes, ListPermittedOnlyLeavesOutWhatTheTokenMayNotUse) {
    auto s = pr_jwt_stack({.list_permitted_only = true});
    mcp_http c(s->ep());
    auto const narrow = c.post(modern_request(1, "tools/list"), {pr_bearer(pr_jwt())});
    EXPECT_EQ(narrow.status, 200u) << narrow.body;
    auto names = pr_tool_names(narrow);
    EXPECT_TRUE(pr_lists(names, "whoami")) << narrow.body;
    EXPECT_FALSE(pr_lists(names, "write")) << narrow.body;

    auto const wide = c.post(modern_request(2, "tools/list"), {pr_bearer(pr_jwt("mcp tools:write"))});
    EXPECT_EQ(wide.status, 200u) << wide.body;
    names = pr_tool_names(wide);
    EXPECT_TRUE(pr_lists(names, "whoami")) << wide.body;
    EXPECT_TRUE(pr_lists(names, "write")) << wide.body;

    // Prompts, resources and templates alike.
    auto const names_in = [](reply const& r, char const* key, char const* field) {
        std::vector<std::string> out;
        auto const result = pr_result(r);
        auto const* items = result.is_object() ? result.get_object().if_contains(key) : nullptr;
        if (items && items->is_array())
            for (auto const& item : items->get_array())
                out.emplace_back(item.at(field).as_string());
        return out;
    };
    auto const prompts = c.post(modern_request(3, "prompts/list"), {pr_bearer(pr_jwt())});
    EXPECT_FALSE(pr_lists(names_in(prompts, "prompts", "name"), "plan")) << prompts.body;
    auto const resources = c.post(modern_request(4, "resources/list"), {pr_bearer(pr_jwt())});
    EXPECT_EQ(resources.status, 200u) << resources.body;
    EXPECT_FALSE(pr_lists(names_in(resources, "resources", "uri"), "file:///secret.txt")) << resources.body;
    auto const templates = c.post(modern_request(5, "resources/templates/list"), {pr_bearer(pr_jwt())});
    EXPECT_EQ(templates.status, 200u) << templates.body;
    EXPECT_FALSE(pr_lists(names_in(templates, "resourceTemplates", "uriTemplate"), "file:///vault/{name}"))
        << templates.body;
    auto const all = pr_jwt("mcp prompts:read resources:read vault:read");
    EXPECT_TRUE(pr_lists(
        names_in(c.post(modern_request(6, "prompts/list"), {pr_bearer(all)}), "prompts", "name"), "plan"));
    EXPECT_TRUE(
        pr_lists(names_in(c.post(modern_request(7, "resources/list"), {pr_bearer(all)}), "resources", "uri"),
                 "file:///secret.txt"));
    EXPECT_TRUE(pr_lists(names_in(c.post(modern_request(8, "resources/templates/list"), {pr_bearer(all)}),
                                  "resourceTemplates", "uriTemplate"),
                         "file:///vault/{name}"));

    // The same inside a legacy session.
    mcp_http l(s->ep());
    l.set_default_headers({pr_bearer(pr_jwt())});
    l.initialize(pr_legacy_version);
    auto const legacy = l.post(legacy_request(2, "tools/list"));
    EXPECT_EQ(legacy.status, 200u) << legacy.body;
    EXPECT_FALSE(pr_lists(pr_tool_names(legacy), "write")) << legacy.body;
    EXPECT_TRUE(pr_lists(pr_tool_names(legacy), "whoami")) << legacy.body;
}

TEST(ProtectedScopes, WithoutListPermittedOnlyTheListShowsEverything) {
    auto s = pr_jwt_stack();
    mcp_http c(s->ep());
    auto const r = c.post(modern_request(1, "tools/list"), {pr_bearer(pr_jwt())});
    EXPECT_EQ(r.status, 200u) << r.body;
    EXPECT_TRUE(pr_lists(pr_tool_names(r), "write")) << r.body;
}

// ---- Protected Resource Metadata (RFC 9728) ---------------------------------------------------------------

request_spec pr_metadata_spec(std::string method, std::string target) {
    request_spec spec;
    spec.method = std::move(method);
    spec.target = std::move(target);
    return spec;
}

void pr_expect_metadata(reply const& r) {
    EXPECT_EQ(r.status, 200u) << r.body;
    EXPECT_EQ(r.header("Content-Type").value_or(""), "application/json");
    EXPECT_EQ(r.header("Access-Control-Allow-Origin").value_or(""), "*");
    EXPECT_NE(r.header("Cache-Control").value_or("").find("max-age=3600"), std::string::npos)
        << r.header("Cache-Control").value_or("(none)");
    auto const doc = r.json();
    ASSERT_TRUE(doc.is_object()) << r.body;
    auto const& o = doc.get_object();
    EXPECT_EQ(o.at("resource"), pr_resource);
    EXPECT_EQ(o.at("authorization_servers"), (json::array{pr_issuer}));
    EXPECT_EQ(o.at("bearer_methods_supported"), (json::array{"header"}));
    // The required scope first, then each one a tool, prompt, resource or template needs, once.
    std::vector<std::string> scopes;
    for (auto const& v : o.at("scopes_supported").as_array())
        scopes.emplace_back(v.as_string());
    ASSERT_FALSE(scopes.empty()) << r.body;
    EXPECT_EQ(scopes.front(), "mcp");
    std::sort(scopes.begin() + 1, scopes.end());
    EXPECT_EQ(scopes, (std::vector<std::string>{"mcp", "prompts:read", "resources:read", "tools:write",
                                                "vault:read"}))
        << r.body;
}

TEST(ProtectedMetadata, IsServedWithoutATokenAtThePathAndTheRoot) {
    auto s = pr_jwt_stack();
    pr_expect_metadata(
        exchange(s->ep(), pr_metadata_spec("GET", "/.well-known/oauth-protected-resource/mcp")));
    pr_expect_metadata(exchange(s->ep(), pr_metadata_spec("GET", "/.well-known/oauth-protected-resource")));
    // A bad token does not stand in the way either.
    auto spec = pr_metadata_spec("GET", "/.well-known/oauth-protected-resource/mcp");
    spec.headers.push_back({"Authorization", "Bearer nonsense"});
    pr_expect_metadata(exchange(s->ep(), spec));
    // Another well-known path is not it.
    auto const other =
        exchange(s->ep(), pr_metadata_spec("GET", "/.well-known/oauth-protected-resource/other"));
    EXPECT_NE(other.status, 200u) << other.body;
    EXPECT_EQ(s->upstream.requests(), 0);
}

TEST(ProtectedMetadata, AnswersAPreflightAndRefusesOtherMethods) {
    auto s = pr_jwt_stack();
    auto preflight = pr_metadata_spec("OPTIONS", "/.well-known/oauth-protected-resource/mcp");
    preflight.headers = {{"Origin", "https://app.example"}, {"Access-Control-Request-Method", "GET"}};
    auto const options = exchange(s->ep(), preflight);
    EXPECT_EQ(options.status, 204u) << options.body;
    EXPECT_EQ(options.header("Access-Control-Allow-Origin").value_or(""), "*");
    EXPECT_NE(options.header("Access-Control-Allow-Methods").value_or("").find("GET"), std::string::npos);

    auto const post =
        exchange(s->ep(), pr_metadata_spec("POST", "/.well-known/oauth-protected-resource/mcp"));
    EXPECT_EQ(post.status, 405u) << post.body;
    EXPECT_NE(post.header("Allow").value_or("").find("GET"), std::string::npos);
}

TEST(ProtectedMetadata, AGetFromAForeignOriginIsServed) {
    auto s = pr_jwt_stack();
    auto spec = pr_metadata_spec("GET", "/.well-known/oauth-protected-resource/mcp");
    spec.headers.push_back({"Origin", "https://app.example"});
    pr_expect_metadata(exchange(s->ep(), spec));
}

// ---- the authorization server unreachable, introspection, a static token ----------------------------------

TEST(ProtectedVerifiers, AJwksServerDownFromTheStartAnswers503WithRetryAfter) {
    auto s = std::make_unique<pr_stack>("/jwks.json");
    s->upstream.stop();
    auto v = auth::make_jwt_verifier(s->io.executor(), s->upstream.url(), pr_rules(), pr_jwks_options());
    ASSERT_TRUE(v);
    s->serve(std::move(*v));
    // Twice: the second within the refetch interval, with no set ever held.
    for (int attempt = 0; attempt < 2; ++attempt) {
        SCOPED_TRACE(attempt);
        auto const r = pr_post_with(s->ep(), "Bearer " + pr_jwt());
        EXPECT_EQ(r.status, 503u) << r.body;
        EXPECT_TRUE(r.has_header("Retry-After"));
        EXPECT_FALSE(r.has_header("WWW-Authenticate")) << r.header("WWW-Authenticate").value_or("");
    }
    // A token refused without asking the keys is still 401 (malformed).
    pr_expect_invalid_token(pr_post_with(s->ep(), "Bearer a b"));
}

json::object pr_introspection_answer(bool active, std::string const& scope = "mcp") {
    if (!active)
        return json::object{{"active", false}};
    return json::object{{"active", true},       {"iss", pr_issuer}, {"aud", pr_resource},   {"sub", "bob"},
                        {"client_id", "cli-2"}, {"scope", scope},   {"exp", pr_now() + 600}};
}

std::unique_ptr<pr_stack> pr_introspection_stack() {
    auto s = std::make_unique<pr_stack>("/introspect");
    auth::introspection_options o;
    o.client_id = "mcp-server";
    o.client_secret = "server-secret";
    o.request_timeout = 2s;
    auto v = auth::make_introspection_token_verifier(s->io.executor(), s->upstream.url(), pr_rules(), o);
    EXPECT_TRUE(v) << v.error().message;
    s->serve(v.value());
    return s;
}

TEST(ProtectedVerifiers, AnActiveIntrospectedTokenReachesTheHandler) {
    auto s = pr_introspection_stack();
    s->upstream.answer(json::serialize(pr_introspection_answer(true, "mcp tools:write")));
    mcp_http c(s->ep());
    auto const r = c.post(pr_whoami(1), {pr_bearer("opaque-token-1")});
    EXPECT_EQ(r.status, 200u) << r.body;
    EXPECT_EQ(pr_tool_text(r), "subject=bob;client=cli-2;scopes=mcp tools:write") << r.body;
    ASSERT_EQ(s->upstream.requests(), 1);
    auto const seen = s->upstream.seen().front();
    EXPECT_NE(seen.find("token=opaque-token-1"), std::string::npos) << seen;
    // Cached: the next request asks no one.
    EXPECT_EQ(c.post(pr_whoami(2), {pr_bearer("opaque-token-1")}).status, 200u);
    EXPECT_EQ(s->upstream.requests(), 1);
    // Scopes from the answer are enforced as a JWT's are.
    pr_expect_insufficient(
        c.post(modern_request(3, "prompts/get", {{"name", "plan"}}), {pr_bearer("opaque-token-1")}),
        "mcp prompts:read");
}

TEST(ProtectedVerifiers, AnInactiveIntrospectedTokenIsRefusedWithInvalidToken) {
    auto s = pr_introspection_stack();
    s->upstream.answer(json::serialize(pr_introspection_answer(false)));
    pr_expect_invalid_token(pr_post_with(s->ep(), "Bearer opaque-token-2"));
    // An active answer for another audience is refused too.
    auto other = pr_introspection_answer(true);
    other["aud"] = "https://other.example/mcp";
    s->upstream.answer(json::serialize(other));
    pr_expect_invalid_token(pr_post_with(s->ep(), "Bearer opaque-token-3"));
}

TEST(ProtectedVerifiers, AnIntrospectionEndpointDownAnswers503) {
    auto s = pr_introspection_stack();
    s->upstream.answer("{\"error\":\"server_error\"}", 500);
    auto const failing = pr_post_with(s->ep(), "Bearer opaque-token-4");
    EXPECT_EQ(failing.status, 503u) << failing.body;
    EXPECT_TRUE(failing.has_header("Retry-After"));
    s->upstream.stop();
    auto const down = pr_post_with(s->ep(), "Bearer opaque-token-5");
    EXPECT_EQ(down.status, 503u) << down.body;
    EXPECT_TRUE(down.has_header("Retry-After"));
}

TEST(ProtectedVerifiers, AStaticTokenWithCharactersABearerTokenCannotHoldIsRefusedAtConstruction) {
    dserver::server srv(dserver::server_options{});
    for (std::string const bad : {"two words", "quote\"d", "comma,", "", "tab\tbed", "=abc"}) {
        SCOPED_TRACE(bad);
        transport::http_options opts;
        opts.port = 0;
        opts.bearer_token = bad;
        EXPECT_THROW((transport::http_server{srv, opts}), std::invalid_argument);
    }
    transport::http_options good;
    good.port = 0;
    good.bearer_token = "abc-._~+/==";
    EXPECT_NO_THROW((transport::http_server{srv, good}));
}

TEST(ProtectedVerifiers, AStaticTokenStandsForTheStaticTokenCallerAndPublishesNoMetadata) {
    transport::http_options opts;
    opts.bearer_token = "s3cret-token";
    inproc_server s(opts);
    mcp_http c(s.ep());
    auto const r =
        c.post(modern_request(1, "tools/call", call_params("whoami")), {pr_bearer("s3cret-token")});
    EXPECT_EQ(r.status, 200u) << r.body;
    EXPECT_NE(pr_tool_text(r).find("static-token"), std::string::npos) << r.body;
    auto const missing = c.post(modern_request(2, "tools/list"));
    EXPECT_EQ(missing.status, 401u);
    EXPECT_EQ(pr_challenge(missing).count("resource_metadata"), 0u)
        << missing.header("WWW-Authenticate").value_or("");
    EXPECT_NE(exchange(s.ep(), pr_metadata_spec("GET", "/.well-known/oauth-protected-resource")).status,
              200u);
}

} // namespace protected_suite
} // namespace
