// The fixture of the official MCP conformance suite (../shared/conformance/SUITE.md §5): the tools,
// resources, templates and prompts its server scenarios call, by their exact names, built on Duet's public
// API alone. Each file adds one family.
#pragma once

#include <duet/server/server.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>

namespace duet::conformance {

/// test_simple_text, test_image_content, test_audio_content, test_embedded_resource,
/// test_multiple_content_types, test_error_handling, json_schema_2020_12_tool, test_x_mcp_header.
void add_content_tools(server::server& srv);

/// Tools that talk back while they run: logging, progress, sampling, elicitation, stream reconnection, and
/// the 2026 diagnostics of the server-stateless scenario.
void add_interaction_tools(server::server& srv);

/// The test_input_required_result_* tools and test_input_required_result_prompt: multi round-trip requests
/// (SEP-2322).
void add_input_required_fixtures(server::server& srv);

/// greet, slow_compute, failing_job, protocol_error_job, confirm_delete, multi_input, test_tool_with_task:
/// the tasks extension's scenarios (SEP-2663), which Duet also serves to 2025-11-25 clients that ask.
void add_task_fixtures(server::server& srv);

/// test://static-text, test://static-binary, test://watched-resource, test://template/{id}/data.
void add_resources(server::server& srv);

/// test_simple_prompt, test_prompt_with_arguments (with completion), test_prompt_with_embedded_resource,
/// test_prompt_with_image.
void add_prompts(server::server& srv);

/// test_simple_text and test_simple_prompt, complete: re-registering them announces list_changed.
[[nodiscard]] server::tool simple_text_tool();
[[nodiscard]] server::prompt simple_prompt();

/// The inputSchema of a tool that takes no arguments.
[[nodiscard]] boost::json::object no_arguments();

/// A 1x1 PNG, base64.
[[nodiscard]] std::string const& png_base64();

/// The text of an elicitation or sampling answer, for echoing back in a tool result.
[[nodiscard]] std::string describe_answer(boost::json::value const& answer);

} // namespace duet::conformance
