#include <duet/jsonrpc/json_text.hpp>
#include <duet/protocol/base64.hpp>
#include <duet/server/content.hpp>

#include "fixtures.hpp"

#include <cstdint>

namespace duet::conformance {

namespace json = boost::json;
using namespace duet::server;

namespace {

void put_le(std::string& out, std::uint32_t v, int bytes) {
    for (int i = 0; i < bytes; ++i)
        out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

// A short, silent 8 kHz mono 16-bit PCM WAV file, built rather than embedded so its layout is plain.
std::string const& wav_base64() {
    static std::string const encoded = [] {
        constexpr std::uint32_t rate = 8000;
        constexpr std::uint32_t samples = 800; // 100 ms
        constexpr std::uint32_t data_bytes = samples * 2;
        std::string wav = "RIFF";
        put_le(wav, 36 + data_bytes, 4);
        wav += "WAVEfmt ";
        put_le(wav, 16, 4);       // fmt chunk size
        put_le(wav, 1, 2);        // PCM
        put_le(wav, 1, 2);        // mono
        put_le(wav, rate, 4);     // sample rate
        put_le(wav, rate * 2, 4); // byte rate
        put_le(wav, 2, 2);        // block align
        put_le(wav, 16, 2);       // bits per sample
        wav += "data";
        put_le(wav, data_bytes, 4);
        wav.append(data_bytes, '\0');
        return protocol::base64_encode(wav);
    }();
    return encoded;
}

json::object json_schema_2020_12() {
    return {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
            {"type", "object"},
            {"$defs",
             {{"address",
               {{"$anchor", "addressDef"},
                {"type", "object"},
                {"properties", {{"street", {{"type", "string"}}}, {"city", {{"type", "string"}}}}}}}}},
            {"properties",
             {{"name", {{"type", "string"}}},
              {"address", {{"$ref", "#/$defs/address"}}},
              {"contactMethod", {{"type", "string"}, {"enum", json::array{"phone", "email"}}}},
              {"phone", {{"type", "string"}}},
              {"email", {{"type", "string"}}}}},
            {"allOf", json::array{json::object{
                          {"anyOf", json::array{json::object{{"required", json::array{"phone"}}},
                                                json::object{{"required", json::array{"email"}}}}}}}},
            {"if",
             {{"properties", {{"contactMethod", {{"const", "phone"}}}}},
              {"required", json::array{"contactMethod"}}}},
            {"then", {{"required", json::array{"phone"}}}},
            {"else", {{"required", json::array{"email"}}}},
            {"additionalProperties", false}};
}

} // namespace

json::object no_arguments() {
    return {{"type", "object"}, {"properties", json::object{}}};
}

std::string const& png_base64() {
    static std::string const encoded =
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    return encoded;
}

tool simple_text_tool() {
    return tool{.name = "test_simple_text",
                .description = "Returns a simple text response",
                .input_schema = no_arguments(),
                .handler = [](json::object const&, request_context&) -> boost::asio::awaitable<tool_result> {
                    co_return tool_result::text("This is a simple text response for testing.");
                }};
}

void add_content_tools(server::server& srv) {
    srv.add_tool(simple_text_tool());

    srv.add_tool(tool{.name = "test_image_content",
                      .description = "Returns an image (a 1x1 PNG)",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context&) {
                     tool_result r;
                     r.content.push_back(image_content(png_base64(), "image/png"));
                     return r;
                 });

    srv.add_tool(tool{.name = "test_audio_content",
                      .description = "Returns audio (100 ms of silence, WAV)",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context&) {
                     tool_result r;
                     r.content.push_back(audio_content(wav_base64(), "audio/wav"));
                     return r;
                 });

    srv.add_tool(tool{.name = "test_embedded_resource",
                      .description = "Returns an embedded text resource",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context&) {
                     tool_result r;
                     r.content.push_back(embedded_resource(text_resource_contents(
                         "test://embedded-resource", "This is an embedded resource content.", "text/plain")));
                     return r;
                 });

    srv.add_tool(
        tool{.name = "test_multiple_content_types",
             .description = "Returns text, an image and an embedded resource",
             .input_schema = no_arguments()},
        [](json::object const&, request_context&) {
            tool_result r = tool_result::text("Multiple content types test:");
            r.content.push_back(image_content(png_base64(), "image/png"));
            r.content.push_back(embedded_resource(text_resource_contents(
                "test://mixed-content-resource", R"({"test":"data","value":123})", "application/json")));
            return r;
        });

    srv.add_tool(tool{.name = "test_error_handling",
                      .description = "Always fails, as a tool result with isError",
                      .input_schema = no_arguments()},
                 [](json::object const&, request_context&) {
                     return tool_result::error("This tool intentionally returns an error for testing");
                 });

    srv.add_tool(tool{.name = "json_schema_2020_12_tool",
                      .description = "Its inputSchema uses JSON Schema 2020-12 keywords, kept verbatim",
                      .input_schema = json_schema_2020_12()},
                 [](json::object const& args, request_context&) {
                     return tool_result::text("Received: " + jsonrpc::to_json_text(args));
                 });

    srv.add_tool(
        tool{.name = "test_x_mcp_header",
             .description = "Its region argument is mirrored in the Mcp-Param-Region header",
             .input_schema =
                 {{"type", "object"},
                  {"properties",
                   {{"region",
                     {{"type", "string"}, {"description", "Where to run"}, {"x-mcp-header", "Region"}}}}},
                  {"required", json::array{"region"}}}},
        [](json::object const& args, request_context&) {
            auto const* region = args.if_contains("region");
            if (!region || !region->is_string())
                return tool_result::error("region must be a string");
            return tool_result::text("Region: " + std::string(region->get_string()));
        });
}

std::string describe_answer(json::value const& answer) {
    return jsonrpc::to_json_text(answer);
}

} // namespace duet::conformance
