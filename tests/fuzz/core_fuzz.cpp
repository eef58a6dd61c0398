// Fuzz target over the pure core: bytes -> parse_frame -> admit (under a context chosen by the input) ->
// shape, plus the codec's round-trip law serialize(parse(serialize(m))) == serialize(m). Any crash, leak,
// sanitizer report or broken law is a finding.
#include <duet/jsonrpc/codec.hpp>
#include <duet/protocol/admission.hpp>
#include <duet/protocol/shaping.hpp>

#include <boost/json/parse.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

using namespace duet;

// Equal JSON, where two doubles count as equal within a relative 1e-15: Boost.JSON 1.81 reads decimal text
// fast rather than correctly rounded, so a double can move by an ulp each time it is parsed.
bool same_json(boost::json::value const& a, boost::json::value const& b) {
    if (a.is_double() && b.is_double()) {
        double const x = a.get_double(), y = b.get_double();
        return x == y || std::fabs(x - y) <= 1e-15 * std::max(std::fabs(x), std::fabs(y));
    }
    if (a.kind() != b.kind())
        return false;
    if (auto const* oa = a.if_object()) {
        auto const& ob = b.get_object();
        if (oa->size() != ob.size())
            return false;
        for (auto ia = oa->begin(), ib = ob.begin(); ia != oa->end(); ++ia, ++ib)
            if (ia->key() != ib->key() || !same_json(ia->value(), ib->value()))
                return false;
        return true;
    }
    if (auto const* aa = a.if_array()) {
        auto const& ab = b.get_array();
        if (aa->size() != ab.size())
            return false;
        for (std::size_t i = 0; i < aa->size(); ++i)
            if (!same_json((*aa)[i], ab[i]))
                return false;
        return true;
    }
    return a == b;
}

// The codec's law: serialize(parse(serialize(m))) == serialize(m), byte for byte except for the last bits of
// doubles (see same_json).
void check_round_trip(jsonrpc::message const& m) {
    auto const once = jsonrpc::serialize(m);
    auto const again = jsonrpc::parse_frame(once);
    auto const* p = std::get_if<jsonrpc::parsed>(&again.content);
    if (!p || !p->has_value())
        std::abort();
    auto const twice = jsonrpc::serialize(**p);
    if (twice != once && !same_json(boost::json::parse(once), boost::json::parse(twice)))
        std::abort();
}

protocol::server_capabilities capabilities_from(std::uint8_t bits) {
    protocol::server_capabilities c;
    c.tools = bits & 1;
    c.resources = bits & 2;
    c.resources_subscribe = bits & 4;
    c.prompts = bits & 8;
    c.completions = bits & 16;
    c.logging = bits & 32;
    return c;
}

void exercise(jsonrpc::request const& req, std::uint8_t selector) {
    auto const caps = capabilities_from(selector);
    protocol::admission_context ctx;
    ctx.capabilities = &caps;
    ctx.eras = static_cast<protocol::era_support>(selector % 3);
    if ((selector >> 2) % 4 == 1)
        ctx.session.legacy = protocol::version_registry[selector % 4].id;

    // Headers mirrored from the body, the way a careful client sends them, sometimes with a wrong value.
    protocol::http_facts http;
    if (selector & 64) {
        auto claim = protocol::read_version_claim(req.params);
        if (claim.what == protocol::version_claim::kind::text)
            http.headers.push_back({"MCP-Protocol-Version", std::string(claim.text)});
        http.headers.push_back({"mcp-method", selector & 128 ? req.method : "x"});
        http.headers.push_back({"Mcp-Name", "=?base64?aMOpbGxv?="});
        http.headers.push_back({"Mcp-Param-Region", "eu"});
        ctx.http = &http;
    }
    static std::vector<protocol::param_header> const bindings{
        {"Region", {"region"}, protocol::param_type::string},
        {"Count", {"n"}, protocol::param_type::integer}};
    protocol::param_header_lookup const lookup = [](std::string_view) {
        return std::span<protocol::param_header const>(bindings);
    };
    ctx.param_headers = &lookup;

    auto const admitted = protocol::admit(req, ctx);
    if (!admitted) {
        check_round_trip(jsonrpc::error_response{req.id, admitted.error().error});
        return;
    }
    // Shape the request's own params as if they were the result: arbitrary objects in every era and method.
    if (auto const* params = req.params.if_object()) {
        boost::json::object result = *params;
        boost::json::object const info{{"name", "fuzz"}, {"version", "1"}, {"title", "t"}};
        protocol::shape_context sc;
        sc.era = admitted->era;
        sc.version = admitted->version;
        sc.method = admitted->method ? admitted->method->id : protocol::method_id::ping;
        sc.server_info = &info;
        protocol::shape_result(result, sc);
        check_round_trip(jsonrpc::response{req.id, std::move(result)});
    }
}

void handle(jsonrpc::parsed const& p, std::uint8_t selector) {
    if (!p) {
        if (p.error().reply)
            check_round_trip(*p.error().reply);
        return;
    }
    check_round_trip(*p);
    if (auto const* req = std::get_if<jsonrpc::request>(&*p))
        exercise(*req, selector);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    std::string_view const bytes(reinterpret_cast<char const*>(data), size);
    std::uint8_t const selector = size ? data[size - 1] : 0;
    // The limits the server parses with (jsonrpc::parse_limits' defaults: 4 MiB, depth 64, batches of 1024).
    auto const f = jsonrpc::parse_frame(bytes, jsonrpc::parse_limits{});
    if (auto const* one = std::get_if<jsonrpc::parsed>(&f.content)) {
        handle(*one, selector);
    } else {
        for (auto const& element : std::get<jsonrpc::batch>(f.content).elements)
            handle(element, selector);
    }
    return 0;
}
