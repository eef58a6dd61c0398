// The session core of the client, set up and connected: the impl's construction, the transport it (re)starts,
// and connecting in either era (the legacy handshake, the modern probe, what the session learns of the server
// and its tools). Sending is in client_sending.cpp, receiving in client_receiving.cpp.
#include "client_impl.hpp"

#include <duet/client/negotiation.hpp>
#include <duet/protocol/meta_keys.hpp>
#include <duet/protocol/tasks.hpp>

#include <cstdio>

namespace duet::client {

namespace asio = boost::asio;
namespace json = boost::json;
using asio::awaitable;
using detail::object_at;
using protocol::method_id;

client::impl::impl(asio::any_io_executor ex, server_target target, client_options options)
    : ex_(std::move(ex)), target_(std::move(target)), options_(std::move(options)) {
    if (options_.inputs.elicitation)
        client_caps_["elicitation"] = json::object{};
    if (options_.inputs.sampling)
        client_caps_["sampling"] = json::object{};
    if (options_.inputs.roots)
        client_caps_["roots"] = json::object{};
    if (options_.capabilities)
        client_caps_ = *options_.capabilities;
    // The tasks extension exists only in modern envelopes; a legacy handshake declares the rest.
    modern_caps_ = client_caps_;
    if (options_.tasks && !options_.capabilities) {
        auto& ext = modern_caps_["extensions"];
        if (!ext.is_object())
            ext = json::object{};
        ext.get_object()[protocol::tasks_extension] = json::object{};
    }
}

void client::impl::warn(std::string const& text) const {
    if (options_.on_warning)
        options_.on_warning(text);
    else
        std::fprintf(stderr, "duet client: warning: %s\n", text.c_str());
}

awaitable<result<void>> client::impl::async_start_transport() {
    if (transport_) {
        auto old = std::move(transport_);
        co_await old->async_close();
    }
    closed_ = false;
    closed_error_.reset();
    if (auto const* h = std::get_if<http_target>(&target_)) {
        auto url = parse_http_url(h->url);
        if (!url)
            co_return url.error();
        transport_ = detail::make_http_transport(ex_, *h, options_.max_message_bytes);
    } else {
        transport_ = detail::make_stdio_transport(
            ex_, std::get<stdio_target>(target_),
            detail::stdio_settings{options_.max_message_bytes, options_.on_server_stderr});
    }
    std::weak_ptr<detail::transport_sink> sink = shared_from_this();
    auto started = co_await transport_->async_start(std::move(sink));
    if (!started)
        closed_ = true;
    co_return started;
}

// ---- connecting
// ----------------------------------------------------------------------------------------------

bool client::impl::learn_tool(json::object const& tool) {
    auto const* name = tool.if_contains("name");
    auto const* schema = object_at(tool, "inputSchema");
    if (!name || !name->is_string())
        return false;
    std::vector<protocol::param_header> bindings;
    if (schema) {
        auto collected = protocol::collect_param_headers(*schema);
        if (!collected)
            return false;
        bindings = std::move(*collected);
    }
    tool_headers_[std::string(name->get_string())] = std::move(bindings);
    auto const* execution = object_at(tool, "execution");
    auto const* support = execution ? execution->if_contains("taskSupport") : nullptr;
    if (support && support->is_string() && support->get_string() == "required")
        tasks_required_.insert(std::string(name->get_string()));
    else
        tasks_required_.erase(std::string(name->get_string()));
    return true;
}

bool client::impl::offers_legacy_tasks() const {
    auto const* tasks = object_at(server_caps_, "tasks");
    auto const* requests = tasks ? object_at(*tasks, "requests") : nullptr;
    auto const* tools = requests ? object_at(*requests, "tools") : nullptr;
    return tools && object_at(*tools, "call");
}

bool client::impl::tool_requires_task(std::string_view name) const {
    return tasks_required_.contains(std::string(name));
}

void client::impl::become_modern(protocol::version v) {
    era_ = protocol::era::modern;
    version_ = v;
    if (client_caps_.contains("roots") || client_caps_.contains("sampling"))
        warn("roots and sampling are deprecated in " + std::string(protocol::to_string(v)) +
             " (SEP-2577); this client still declares them because handlers for them are set");
}

void client::impl::adopt_discover(json::object const& discover) {
    handshake_ = discover;
    if (auto const* caps = object_at(discover, "capabilities"))
        server_caps_ = *caps;
    if (auto const* meta = object_at(discover, "_meta"))
        if (auto const* info = object_at(*meta, protocol::meta_key::server_info))
            server_info_ = *info;
    if (server_info_.empty())
        if (auto const* info = object_at(discover, "serverInfo"))
            server_info_ = *info; // pre-release servers put it at the top
    if (auto const* i = discover.if_contains("instructions"); i && i->is_string())
        instructions_ = std::string(i->get_string());
}

awaitable<client::impl::answer> client::impl::async_probe(protocol::version v) {
    era_ = protocol::era::modern;
    version_ = v;
    request_options probe;
    probe.timeout = options_.probe_timeout;
    json::object const no_params;
    auto a = co_await async_round(method_id::server_discover, no_params, probe);
    co_return a;
}

awaitable<result<void>> client::impl::async_initialize(protocol::version offer) {
    era_ = protocol::era::legacy;
    version_ = offer;
    json::object caps = client_caps_;
    json::object params{{"protocolVersion", protocol::to_string(offer)},
                        {"capabilities", std::move(caps)},
                        {"clientInfo", options_.client_info}};
    request_options init;
    auto a = co_await async_round(method_id::initialize, params, init);
    if (!a.value)
        co_return a.value.error();
    auto const accepted = accepted_handshake_version(*a.value);
    if (!accepted)
        co_return accepted.error();
    version_ = *accepted; // a counter-offer is adopted
    handshake_ = *a.value;
    if (auto const* caps_in = object_at(handshake_, "capabilities"))
        server_caps_ = *caps_in;
    if (auto const* info = object_at(handshake_, "serverInfo"))
        server_info_ = *info;
    if (auto const* i = handshake_.if_contains("instructions"); i && i->is_string())
        instructions_ = std::string(i->get_string());
    // Queued in this order, the initialized POST goes before the GET stream opens; both carry the version.
    notify(method_id::notification_initialized, json::object{});
    transport_->begin_legacy_session(version_);
    co_return result<void>{};
}

} // namespace duet::client
