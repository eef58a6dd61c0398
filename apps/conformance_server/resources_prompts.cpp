#include <duet/jsonrpc/json_text.hpp>
#include <duet/server/content.hpp>

#include "fixtures.hpp"

namespace duet::conformance {

namespace json = boost::json;
using namespace duet::server;

namespace {

read_result one(json::object contents) {
    read_result r;
    r.contents.push_back(std::move(contents));
    return r;
}

std::string argument_or(std::map<std::string, std::string> const& args, std::string const& name,
                        std::string fallback) {
    auto it = args.find(name);
    return it == args.end() ? fallback : it->second;
}

} // namespace

void add_resources(server::server& srv) {
    srv.add_resource(
        resource{.uri = "test://static-text",
                 .name = "static-text",
                 .title = "Static text",
                 .description = "A static text resource for testing",
                 .mime_type = "text/plain",
                 .read = [](std::string const& uri, request_context&) -> boost::asio::awaitable<read_result> {
                     co_return one(text_resource_contents(
                         uri, "This is the content of the static text resource.", "text/plain"));
                 }});

    srv.add_resource(
        resource{.uri = "test://static-binary",
                 .name = "static-binary",
                 .title = "Static binary",
                 .description = "A static binary resource (a 1x1 PNG) for testing",
                 .mime_type = "image/png",
                 .read = [](std::string const& uri, request_context&) -> boost::asio::awaitable<read_result> {
                     co_return one(blob_resource_contents(uri, png_base64(), "image/png"));
                 }});

    srv.add_resource(
        resource{.uri = "test://watched-resource",
                 .name = "watched-resource",
                 .title = "Watched resource",
                 .description = "A resource clients may subscribe to",
                 .mime_type = "text/plain",
                 .read = [](std::string const& uri, request_context&) -> boost::asio::awaitable<read_result> {
                     co_return one(text_resource_contents(uri, "Watched resource content", "text/plain"));
                 }});

    srv.add_resource_template(resource_template{
        .uri_template = "test://template/{id}/data",
        .name = "template-data",
        .title = "Data by id",
        .description = "JSON data for any id",
        .mime_type = "application/json",
        .read = [](std::string const& uri, uri_variables const& vars,
                   request_context&) -> boost::asio::awaitable<read_result> {
            auto const& id = vars.at("id");
            json::object data{{"id", id}, {"templateTest", true}, {"data", "Data for ID: " + id}};
            co_return one(text_resource_contents(uri, jsonrpc::to_json_text(data), "application/json"));
        }});
}

prompt simple_prompt() {
    return prompt{
        .name = "test_simple_prompt",
        .description = "A simple prompt without arguments",
        .get = [](prompt_arguments const&, request_context&) -> boost::asio::awaitable<prompt_result> {
            prompt_result r;
            r.add("user", text_content("This is a simple prompt for testing."));
            co_return r;
        }};
}

void add_prompts(server::server& srv) {
    srv.add_prompt(simple_prompt());

    srv.add_prompt(prompt{
        .name = "test_prompt_with_arguments",
        .description = "A prompt with two required arguments",
        .arguments = {{.name = "arg1", .description = "First test argument", .required = true},
                      {.name = "arg2", .description = "Second test argument", .required = true}},
        .get = [](prompt_arguments const& args, request_context&) -> boost::asio::awaitable<prompt_result> {
            prompt_result r;
            r.add("user", text_content("Prompt with arguments: arg1='" + argument_or(args, "arg1", "") +
                                       "', arg2='" + argument_or(args, "arg2", "") + "'"));
            co_return r;
        },
        .complete =
            [](std::string const& argument, std::string const& value, auto const&) {
                std::vector<std::string> out;
                for (std::string candidate : {"paris", "park", "test", "testing", "value"})
                    if (argument.starts_with("arg") && candidate.starts_with(value))
                        out.push_back(candidate);
                return out;
            }});

    srv.add_prompt(prompt{
        .name = "test_prompt_with_embedded_resource",
        .description = "A prompt that embeds a resource",
        .arguments = {{.name = "resourceUri", .description = "The resource to embed", .required = true}},
        .get = [](prompt_arguments const& args, request_context&) -> boost::asio::awaitable<prompt_result> {
            prompt_result r;
            r.add("user", embedded_resource(text_resource_contents(
                              argument_or(args, "resourceUri", "test://example-resource"),
                              "Embedded resource content for testing.", "text/plain")));
            r.add("user", text_content("Please process the embedded resource above."));
            co_return r;
        }});

    srv.add_prompt(
        prompt{.name = "test_prompt_with_image",
               .description = "A prompt with an image",
               .get = [](prompt_arguments const&, request_context&) -> boost::asio::awaitable<prompt_result> {
                   prompt_result r;
                   r.add("user", image_content(png_base64(), "image/png"));
                   r.add("user", text_content("Please analyze the image above."));
                   co_return r;
               }});
}

} // namespace duet::conformance
