// Fuzz target over the header value codec (duet/protocol/header_codec.hpp, base64.hpp) and admission's
// reading of arbitrary header values (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*). The input is
// up to six fields separated by 0x1E: a header value to decode, a value to encode (also a tool argument), and
// the values of the version, name, Mcp-Param-Region and Mcp-Param-Count headers. The laws:
// - a decoded header value encodes to a header that decodes to it again, and the base64 of a decoded sentinel
//   is the canonical encoding of its bytes (one spelling per value); base64 text that decodes is canonical;
// - an encoded value is safe in a header (visible ASCII, no edge blanks) and decodes to the value;
// - the headers a client computes for a request (modern_request_headers) pass admission of that request;
// - whatever the header values, a refusal is valid JSON (no header byte is echoed raw).
#include <duet/jsonrpc/codec.hpp>
#include <duet/protocol/admission.hpp>
#include <duet/protocol/base64.hpp>
#include <duet/protocol/header_codec.hpp>
#include <duet/protocol/request_headers.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace duet;
using namespace duet::protocol;

void check_decoded(std::string_view header) {
    auto const decoded = decode_header_value(header);
    if (!decoded)
        return;
    auto const again = decode_header_value(encode_header_value(*decoded));
    if (!again || *again != *decoded)
        std::abort();
    constexpr std::string_view prefix = "=?base64?", suffix = "?=";
    if (header.size() >= prefix.size() + suffix.size() && header.starts_with(prefix) &&
        header.ends_with(suffix) &&
        base64_encode(*decoded) !=
            header.substr(prefix.size(), header.size() - prefix.size() - suffix.size()))
        std::abort();
}

void check_base64(std::string_view text) {
    if (auto const bytes = base64_decode(text); bytes && base64_encode(*bytes) != text)
        std::abort();
}

void check_encoded(std::string_view value) {
    auto const header = encode_header_value(value);
    for (unsigned char c : header)
        if (c < 0x20 || c >= 0x7F)
            std::abort();
    if (!header.empty() && (header.front() == ' ' || header.back() == ' '))
        std::abort();
    auto const back = decode_header_value(header);
    if (!back || *back != value)
        std::abort();
}

// Whether `s` can be a JSON string as a server reads one (valid UTF-8).
bool json_text(std::string_view s) {
    boost::system::error_code ec;
    (void)boost::json::parse(boost::json::serialize(boost::json::value(s)), ec);
    return !ec;
}

std::vector<param_header> const bindings{{"Region", {"region"}, param_type::string},
                                         {"Count", {"count"}, param_type::integer},
                                         {"Verbose", {"opts", "verbose"}, param_type::boolean}};
param_header_lookup const lookup = [](std::string_view) {
    return std::span<param_header const>(bindings);
};

jsonrpc::request forecast(std::string_view name, std::string_view region, std::int64_t count, bool verbose,
                          bool modern) {
    boost::json::object params{
        {"name", name},
        {"arguments", {{"region", region}, {"count", count}, {"opts", {{"verbose", verbose}}}}}};
    if (modern)
        params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                           {"io.modelcontextprotocol/clientCapabilities", boost::json::object{}}};
    return jsonrpc::request{jsonrpc::request_id(std::int64_t{1}), "tools/call", std::move(params)};
}

boost::system::result<admission, rejection> admit_with(jsonrpc::request const& req, http_facts const& http,
                                                       bool legacy_session) {
    static server_capabilities const caps = [] {
        server_capabilities c;
        c.tools = true;
        return c;
    }();
    admission_context ctx;
    ctx.capabilities = &caps;
    ctx.http = &http;
    ctx.param_headers = &lookup;
    if (legacy_session)
        ctx.session.legacy = version::v2025_11_25;
    return admit(req, ctx);
}

void check_refusal_is_json(boost::system::result<admission, rejection> const& r) {
    if (r)
        return;
    auto const text = jsonrpc::serialize(jsonrpc::error_response{std::nullopt, r.error().error});
    boost::system::error_code ec;
    (void)boost::json::parse(text, ec);
    if (ec)
        std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    std::string_view rest(reinterpret_cast<char const*>(data), size);
    std::vector<std::string_view> f;
    while (f.size() < 5) {
        auto const sep = rest.find('\x1e');
        if (sep == std::string_view::npos)
            break;
        f.push_back(rest.substr(0, sep));
        rest.remove_prefix(sep + 1);
    }
    f.push_back(rest);
    f.resize(6);

    check_decoded(f[0]);
    check_base64(f[0]);
    check_encoded(f[1]);

    std::int64_t count = 0;
    std::memcpy(&count, f[0].data(), std::min(f[0].size(), sizeof count));
    bool const verbose = size % 2;
    auto const name = f[3].empty() ? std::string_view("forecast") : f[3];
    if (!json_text(f[1]) || !json_text(name))
        return 0; // a server only reads bodies that are valid JSON text

    // What a client sends for a request is what admission accepts of it.
    auto const modern = forecast(name, f[1], count, verbose, true);
    http_facts mirrored;
    auto const bound = lookup(name);
    for (auto& h : modern_request_headers(modern, bound))
        mirrored.headers.push_back(std::move(h));
    auto const admitted = admit_with(modern, mirrored, false);
    if (!admitted || admitted->era != era::modern)
        std::abort();

    // Arbitrary header values: refused or not, never an answer that is not JSON.
    http_facts given;
    given.headers.push_back({"MCP-Protocol-Version", std::string(f[2])});
    given.headers.push_back({"Mcp-Method", "tools/call"});
    given.headers.push_back({"Mcp-Name", std::string(f[3])});
    given.headers.push_back({"Mcp-Param-Region", std::string(f[4])});
    given.headers.push_back({"mcp-param-count", std::string(f[5])});
    check_refusal_is_json(admit_with(modern, given, false));
    check_refusal_is_json(admit_with(forecast(name, f[1], count, verbose, false), given, true));
    return 0;
}
