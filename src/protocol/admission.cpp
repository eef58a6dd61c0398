#include <duet/protocol/admission.hpp>
#include <duet/protocol/header_codec.hpp>

#include <charconv>

namespace duet::protocol {

namespace {

using result_t = boost::system::result<admission, rejection>;

constexpr std::string_view version_header = "MCP-Protocol-Version";
constexpr std::string_view method_header = "Mcp-Method";
constexpr std::string_view name_header = "Mcp-Name";
constexpr std::string_view param_header_prefix = "Mcp-Param-";

rejection reject(error_object e, unsigned status) {
    return rejection{std::move(e), status};
}

rejection reject_modern(error_object e) {
    auto const status = modern_http_status(static_cast<errc>(e.code));
    return rejection{std::move(e), status};
}

// ---- modern header checks (ERA-POLICY step 3) -------------------------------------------------------------

std::optional<rejection> mismatch(std::string detail) {
    return reject(header_mismatch(std::move(detail)), 400);
}

// A header that must mirror `body` (a string from the body, or nothing when the body lacks it).
std::optional<rejection> check_mirror(http_facts const& http, std::string_view header,
                                      std::optional<std::string_view> body, bool required_when_body_has_it) {
    auto const raw = http.find(header);
    if (!raw) {
        if (body && required_when_body_has_it)
            return mismatch(std::string(header) + " header is required");
        return std::nullopt;
    }
    auto const decoded = decode_header_value(*raw);
    if (!decoded)
        return mismatch(std::string(header) + " header holds invalid characters or malformed base64");
    if (!body)
        return mismatch(std::string(header) + " header has no counterpart in the body");
    if (*decoded != *body)
        return mismatch(std::string(header) + " header does not match the body");
    return std::nullopt;
}

boost::json::value const* argument_at(boost::json::value const& params,
                                      std::vector<std::string> const& path) {
    auto const* p = params.if_object();
    if (!p)
        return nullptr;
    auto const* cur = p->if_contains("arguments");
    for (auto const& key : path) {
        auto const* o = cur ? cur->if_object() : nullptr;
        cur = o ? o->if_contains(key) : nullptr;
    }
    return cur;
}

bool header_equals_value(std::string_view header, boost::json::value const& v) {
    if (v.is_string())
        return header == std::string_view(v.get_string());
    if (v.is_bool())
        return header == (v.get_bool() ? "true" : "false");
    if (v.is_int64() || v.is_uint64()) {
        // Integers compare numerically ("007" mirrors 7), over the whole range the body can hold: a negative
        // header is read as int64, any other as uint64 (2^64-1 mirrors 18446744073709551615).
        auto const* first = header.data();
        auto const* last = first + header.size();
        if (first != last && *first == '+')
            ++first;
        if (first == last)
            return false;
        if (*first == '-') {
            std::int64_t n = 0;
            auto const [ptr, ec] = std::from_chars(first, last, n);
            return ec == std::errc{} && ptr == last && v.is_int64() && n == v.get_int64();
        }
        std::uint64_t n = 0;
        auto const [ptr, ec] = std::from_chars(first, last, n);
        if (ec != std::errc{} || ptr != last)
            return false;
        return v.is_uint64() ? n == v.get_uint64() : v.get_int64() >= 0 && n == std::uint64_t(v.get_int64());
    }
    return false;
}

std::optional<rejection> check_param_headers(http_facts const& http, boost::json::value const& params,
                                             std::span<param_header const> bindings) {
    for (auto const& b : bindings) {
        std::string const header = std::string(param_header_prefix) + b.header;
        auto const raw = http.find(header);
        auto const* value = argument_at(params, b.path);
        bool const present = value && !value->is_null();
        if (!raw) {
            if (present)
                return mismatch(header + " header is required (the argument is marked x-mcp-header)");
            continue;
        }
        auto const decoded = decode_header_value(*raw);
        if (!decoded)
            return mismatch(header + " header holds invalid characters or malformed base64");
        if (!present)
            return mismatch(header + " header is present but the argument is absent");
        if (!value->is_string() && !value->is_bool() && !value->is_int64() && !value->is_uint64())
            continue; // not a mirrorable type; the tool's own argument validation reports it
        if (!header_equals_value(*decoded, *value))
            return mismatch(header + " header does not match the argument");
    }
    return std::nullopt;
}

std::optional<std::string_view> string_param(boost::json::value const& params, std::string_view key) {
    auto const* p = params.if_object();
    if (!p)
        return std::nullopt;
    auto const* v = p->if_contains(key);
    if (!v || !v->is_string())
        return std::nullopt;
    return std::string_view(v->get_string());
}

std::optional<rejection> check_modern_headers(jsonrpc::request const& req, std::string_view body_version,
                                              admission_context const& ctx) {
    auto const& http = *ctx.http;
    // The version header must be present and equal the body's version (compared as sent: "v999" vs "v999").
    if (auto r = check_mirror(http, version_header, body_version, true))
        return r;
    if (auto r = check_mirror(http, method_header, std::string_view(req.method), true))
        return r;
    auto const* row = find_method(req.method);
    if (row && row->mcp_name != name_source::none) {
        auto const body = string_param(req.params, name_param(row->mcp_name));
        if (auto r = check_mirror(http, name_header, body, true))
            return r;
    }
    if (row && row->id == method_id::tools_call && ctx.param_headers && *ctx.param_headers) {
        if (auto const tool = string_param(req.params, "name")) {
            if (auto r = check_param_headers(http, req.params, (*ctx.param_headers)(*tool)))
                return r;
        }
    }
    return std::nullopt;
}

// ---- method checks per era --------------------------------------------------------------------------------

std::optional<error_object> check_method(method_info const* row, std::string_view method, version v,
                                         server_capabilities const& caps) {
    if (!row)
        return method_not_found(method, "unknown method");
    if (row->kind != message_kind::request || !row->client_sends())
        return method_not_found(method, "not a request a client may send");
    if (!row->available_in(v)) {
        std::string reason;
        if (is_modern_version(v))
            reason = "removed in protocol version " + std::string(to_string(v));
        else if (row->modern && !row->legacy_since)
            reason = "only available to modern requests (params._meta carries the protocol version)";
        else
            reason = "not defined in protocol version " + std::string(to_string(v));
        return method_not_found(method, reason);
    }
    if (!caps.advertises(row->gate))
        return method_not_found(method, "the server does not advertise the capability this method needs");
    return std::nullopt;
}

result_t admit_modern(jsonrpc::request const& req, version_claim const& claim, admission_context const& ctx) {
    if (claim.what == version_claim::kind::not_string)
        return reject(
            invalid_params("Invalid params: params._meta[\"io.modelcontextprotocol/protocolVersion\"] "
                           "must be a string",
                           boost::json::object{{"key", "io.modelcontextprotocol/protocolVersion"}}),
            400);
    if (ctx.http)
        if (auto r = check_modern_headers(req, claim.text, ctx))
            return *r;
    auto const v = parse_version(claim.text);
    if (!v || !is_modern_version(*v))
        return reject(unsupported_protocol_version(claim.text), 400);
    auto env = read_envelope(req.params, *v);
    if (!env)
        return reject(env.error(), 400);
    auto const* row = find_method(req.method);
    if (auto e = check_method(row, req.method, *v, *ctx.capabilities))
        return reject_modern(std::move(*e));
    // The tasks extension's methods serve only requests that declare it (SEP-2663 §Protocol Errors).
    if (row->gate == capability::tasks && !declares(env->client_capabilities, client_capability::tasks))
        return reject(missing_required_client_capability(requirement(client_capability::tasks)), 400);
    admission a;
    a.what = admission::action::serve;
    a.era = era::modern;
    a.version = *v;
    a.method = row;
    a.envelope = std::move(*env);
    return a;
}

std::optional<error_object> check_initialize_params(boost::json::value const& params) {
    auto const* p = params.if_object();
    if (!p)
        return invalid_params(
            "Invalid params: initialize needs params {protocolVersion, capabilities, clientInfo}");
    auto const* pv = p->if_contains("protocolVersion");
    if (!pv || !pv->is_string())
        return invalid_params("Invalid params: initialize needs a string protocolVersion");
    auto const* caps = p->if_contains("capabilities");
    if (!caps || !caps->is_object())
        return invalid_params("Invalid params: initialize needs a capabilities object");
    auto const* info = p->if_contains("clientInfo");
    auto const* io = info ? info->if_object() : nullptr;
    if (!io || !io->contains("name") || !io->at("name").is_string() || !io->contains("version") ||
        !io->at("version").is_string())
        return invalid_params("Invalid params: initialize needs clientInfo with string name and version");
    return std::nullopt;
}

result_t admit_legacy_session(jsonrpc::request const& req, version v, admission_context const& ctx) {
    if (ctx.http) {
        // After a counter-offer a client may still send its own (even modern) version in the header; the
        // session decides (ERA-POLICY "HTTP routing"). A header naming no version at all is a bad request.
        // Named in its header form: raw bytes beyond ASCII would make the answer invalid JSON text.
        if (auto const h = ctx.http->find(version_header); h && !parse_version(*h))
            return reject(invalid_request("Invalid Request: unsupported MCP-Protocol-Version header \"" +
                                          encode_header_value(*h) + "\""),
                          400);
    }
    auto const* row = find_method(req.method);
    if (auto e = check_method(row, req.method, v, *ctx.capabilities))
        return reject(std::move(*e), 200);
    admission a;
    a.what = admission::action::serve;
    a.era = era::legacy;
    a.version = v;
    a.method = row;
    return a;
}

} // namespace

std::optional<std::string_view> http_facts::find(std::string_view name) const noexcept {
    for (auto const& h : headers)
        if (iequals(h.name, name))
            return std::string_view(h.value);
    return std::nullopt;
}

version negotiate_legacy(boost::json::value const& initialize_params) noexcept {
    if (auto const requested = string_param(initialize_params, "protocolVersion"))
        if (auto const v = parse_version(*requested); v && is_handshake_version(*v))
            return *v;
    return latest_handshake_version;
}

boost::system::result<admission, rejection> admit(jsonrpc::request const& req, admission_context const& ctx) {
    bool const modern_enabled = ctx.eras != era_support::legacy_only;
    bool const legacy_enabled = ctx.eras != era_support::modern_only;

    // Steps 1-5: a version claim in `_meta` makes the request modern, whatever session it arrived in.
    auto const claim = read_version_claim(req.params);
    if (claim.what != version_claim::kind::absent && modern_enabled)
        return admit_modern(req, claim, ctx);

    auto const missing = [&] {
        return reject(missing_protocol_version(modern_enabled, legacy_enabled), 400);
    };
    if (!legacy_enabled)
        return missing();

    // Step 6: initialize opens (or renegotiates) a legacy session.
    if (req.method == "initialize") {
        if (auto e = check_initialize_params(req.params))
            return reject(std::move(*e), 400);
        admission a;
        a.what = admission::action::handshake;
        a.era = era::legacy;
        a.version = negotiate_legacy(req.params);
        a.method = find_method(req.method);
        return a;
    }
    // Step 8: the session (stdio: the connection) decides.
    if (ctx.session.legacy)
        return admit_legacy_session(req, *ctx.session.legacy, ctx);
    // Step 7: the legacy lifecycle allows ping before initialize.
    if (req.method == "ping") {
        admission a;
        a.what = admission::action::answer_ping;
        a.era = era::legacy;
        a.method = find_method(req.method);
        return a;
    }
    // Step 9.
    return missing();
}

} // namespace duet::protocol
