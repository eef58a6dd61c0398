/// @file duet/server/content.hpp
///
/// What handlers return: tool results, prompt results and resource contents, with helpers for the content
/// blocks MCP defines. Results are written once, in the newest shape; protocol::shape_result() trims them for
/// older legacy versions.
///
///     return tool_result::text("42");
///     return tool_result::error("state must be a two-letter code");     // isError: true, not a protocol
///     error tool_result r; r.content.push_back(image_content(png_b64, "image/png"));
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <string_view>

namespace duet::server {

[[nodiscard]] boost::json::object text_content(std::string_view text);
[[nodiscard]] boost::json::object image_content(std::string_view base64_data, std::string_view mime_type);
[[nodiscard]] boost::json::object audio_content(std::string_view base64_data, std::string_view mime_type);
[[nodiscard]] boost::json::object resource_link(std::string_view uri, std::string_view name);
/// A resource embedded in a message or tool result; `contents` from text_ or blob_resource_contents().
[[nodiscard]] boost::json::object embedded_resource(boost::json::object contents);
[[nodiscard]] boost::json::object text_resource_contents(std::string_view uri, std::string_view text,
                                                         std::string_view mime_type = "text/plain");
[[nodiscard]] boost::json::object blob_resource_contents(std::string_view uri, std::string_view base64_blob,
                                                         std::string_view mime_type);

/// The result of tools/call. A failure of the tool itself is a result with `is_error`, never a protocol
/// error.
struct tool_result {
    boost::json::array content;
    boost::json::value structured; ///< `structuredContent`; null when absent
    bool is_error = false;

    [[nodiscard]] static tool_result text(std::string_view text);
    [[nodiscard]] static tool_result error(std::string_view message);
    /// Structured output plus its JSON text as content (older clients read the text).
    [[nodiscard]] static tool_result structured_value(boost::json::value value);

    [[nodiscard]] boost::json::object to_json() const&;
    /// The same, its content and structured value moved rather than copied.
    [[nodiscard]] boost::json::object to_json() &&;
};

/// The result of prompts/get.
struct prompt_result {
    std::string description;
    boost::json::array messages; ///< [{role, content}]

    prompt_result& add(std::string_view role, boost::json::object content);
    [[nodiscard]] boost::json::object to_json() const&;
    /// The same, its messages moved rather than copied.
    [[nodiscard]] boost::json::object to_json() &&;
};

/// The result of resources/read: one or more contents (text or blob).
struct read_result {
    boost::json::array contents;
    [[nodiscard]] boost::json::object to_json() const&;
    /// The same, its contents moved rather than copied.
    [[nodiscard]] boost::json::object to_json() &&;
};

} // namespace duet::server
