#include <duet/jsonrpc/json_text.hpp>
#include <duet/server/content.hpp>
#include <duet/server/frame_storage.hpp>

namespace duet::server {

boost::json::object text_content(std::string_view text) {
    // Built member by member: the initializer-list form goes through value_ref and costs about twice as much
    // for the block every text result carries. In the server's per-request pool, as the result it goes into.
    boost::json::object o(frame_storage());
    o.reserve(2);
    o.emplace("type", "text");
    o.emplace("text", text);
    return o;
}

boost::json::object image_content(std::string_view base64_data, std::string_view mime_type) {
    return {{"type", "image"}, {"data", base64_data}, {"mimeType", mime_type}};
}

boost::json::object audio_content(std::string_view base64_data, std::string_view mime_type) {
    return {{"type", "audio"}, {"data", base64_data}, {"mimeType", mime_type}};
}

boost::json::object resource_link(std::string_view uri, std::string_view name) {
    return {{"type", "resource_link"}, {"uri", uri}, {"name", name}};
}

boost::json::object embedded_resource(boost::json::object contents) {
    return {{"type", "resource"}, {"resource", std::move(contents)}};
}

boost::json::object text_resource_contents(std::string_view uri, std::string_view text,
                                           std::string_view mime_type) {
    return {{"uri", uri}, {"mimeType", mime_type}, {"text", text}};
}

boost::json::object blob_resource_contents(std::string_view uri, std::string_view base64_blob,
                                           std::string_view mime_type) {
    return {{"uri", uri}, {"mimeType", mime_type}, {"blob", base64_blob}};
}

tool_result tool_result::text(std::string_view text) {
    tool_result r{.content = boost::json::array(frame_storage())}; // constructed there: assigning would copy
    r.content.push_back(text_content(text));
    return r;
}

tool_result tool_result::error(std::string_view message) {
    tool_result r = text(message);
    r.is_error = true;
    return r;
}

tool_result tool_result::structured_value(boost::json::value value) {
    tool_result r = text(jsonrpc::to_json_text(value));
    r.structured = std::move(value);
    return r;
}

boost::json::object tool_result::to_json() const& {
    return tool_result(*this).to_json();
}

boost::json::object tool_result::to_json() && {
    // In the content's storage, so moving the content in is a move, not a copy (the per-request pool for
    // the results tool_result::text builds).
    boost::json::object o(content.storage());
    // Room for what shaping adds to a modern result (resultType, _meta) too: the object grows once at most.
    o.reserve(5);
    o.emplace("content", std::move(content));
    if (!structured.is_null())
        o.emplace("structuredContent", std::move(structured));
    if (is_error)
        o.emplace("isError", true);
    return o;
}

prompt_result& prompt_result::add(std::string_view role, boost::json::object content) {
    messages.push_back(boost::json::object{{"role", role}, {"content", std::move(content)}});
    return *this;
}

boost::json::object prompt_result::to_json() const& {
    return prompt_result(*this).to_json();
}

boost::json::object prompt_result::to_json() && {
    boost::json::object o;
    if (!description.empty())
        o["description"] = description;
    o["messages"] = std::move(messages);
    return o;
}

boost::json::object read_result::to_json() const& {
    return read_result(*this).to_json();
}

boost::json::object read_result::to_json() && {
    boost::json::object o;
    o.emplace("contents", std::move(contents));
    return o;
}

} // namespace duet::server
