// File: tests/unit/protocol/admission_support.hpp
//
// What the admission tables share, with and without HTTP: params written compactly ("@M" for the valid modern
// envelope), a server that offers everything, and the outcome a row expects (admitted how, or refused with
// which code and HTTP status) with a readable failure message.
//
//     EXPECT_TRUE(matches(admit(request_with(params_of("{@M}")), ctx), modern_serve));
#pragma once

#include <duet/protocol/admission.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <variant>

namespace duet::test::admission_rows {

using namespace duet::protocol;
namespace json = boost::json;
using action = admission::action;
using admit_result = boost::system::result<admission, rejection>;

// In a params string, "@M" stands for the valid modern envelope (version 2026-07-28, no client capabilities),
// "@P" for the key "io.modelcontextprotocol/protocolVersion" and "@C" for
// "io.modelcontextprotocol/clientCapabilities".
constexpr std::string_view modern_meta = R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                                         R"("io.modelcontextprotocol/clientCapabilities":{}})";

inline json::value params_of(std::string_view text) {
    std::string s(text);
    auto expand = [&](std::string_view token, std::string_view by) {
        for (auto at = s.find(token); at != std::string::npos; at = s.find(token))
            s.replace(at, token.size(), by);
    };
    expand("@M", modern_meta);
    expand("@P", R"("io.modelcontextprotocol/protocolVersion")");
    expand("@C", R"("io.modelcontextprotocol/clientCapabilities")");
    return json::parse(s);
}

inline server_capabilities const& full_server() {
    static server_capabilities const caps = [] {
        server_capabilities c;
        c.tools = c.resources = c.resources_subscribe = c.prompts = c.completions = c.logging = c.tasks =
            true;
        return c;
    }();
    return caps;
}

struct admitted {
    action what;
    era e;
    version v; // ignored for answer_ping, which has no version
};
struct refused {
    errc code;
    unsigned status;
};
using outcome = std::variant<admitted, refused>;

constexpr admitted modern_serve{action::serve, era::modern, version::v2026_07_28};
constexpr admitted ping_answer{action::answer_ping, era::legacy, version::v2025_11_25};
constexpr admitted legacy_serve(version v) {
    return {action::serve, era::legacy, v};
}
constexpr admitted handshake(version v) {
    return {action::handshake, era::legacy, v};
}

constexpr refused not_found_404{errc::method_not_found, 404};
constexpr refused unsupported_400{errc::unsupported_protocol_version, 400};

constexpr auto v2025_03 = version::v2025_03_26;
constexpr auto v2025_06 = version::v2025_06_18;
constexpr auto v2025_11 = version::v2025_11_25;

inline duet::jsonrpc::request make_request(std::string_view method, std::string_view params = "null") {
    return {duet::jsonrpc::request_id{1}, std::string(method), params_of(params)};
}

inline std::string describe(admit_result const& r) {
    if (!r)
        return "refused " + std::to_string(r.error().error.code) + " (HTTP " +
               std::to_string(r.error().http_status) + "): " + r.error().error.message +
               " data=" + json::serialize(r.error().error.data);
    return "admitted action=" + std::to_string(static_cast<int>(r->what)) +
           " era=" + std::string(to_string(r->era)) + " version=" + std::string(to_string(r->version));
}

inline ::testing::AssertionResult matches(admit_result const& r, outcome const& want) {
    if (auto const* ok = std::get_if<admitted>(&want)) {
        if (r && r->what == ok->what && r->era == ok->e &&
            (ok->what == action::answer_ping || r->version == ok->v))
            return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure()
               << "want admitted action=" << static_cast<int>(ok->what) << " era=" << to_string(ok->e)
               << " version=" << to_string(ok->v) << "; got " << describe(r);
    }
    auto const& no = std::get<refused>(want);
    if (!r && r.error().error.code == static_cast<int>(no.code) && r.error().http_status == no.status)
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "want refused " << static_cast<int>(no.code) << " (HTTP "
                                         << no.status << "); got " << describe(r);
}

} // namespace duet::test::admission_rows
