// File: src/gateway/upstream_profile.hpp (private)
//
// What every part of the upstream backend knows of the upstream: how to reach it (the gateway's options) and
// what the control connection found when it first met it. Filled in once, before the backend serves, and
// read-only from then on.
#pragma once

#include <duet/client/client.hpp>
#include <duet/gateway/upstream_backend.hpp>
#include <duet/protocol/capabilities.hpp>
#include <duet/version.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace duet::gateway::detail {

struct upstream_profile {
    gateway_options options;
    /// How logs and errors name the upstream: "NAME=target", or the target alone.
    std::string name;
    protocol::era era = protocol::era::legacy;
    protocol::version version = protocol::latest_handshake_version;
    protocol::server_capabilities caps;
    bool upstream_tasks = false; ///< the upstream itself offers tasks (caps.tasks may be the gateway's)
    boost::json::object server_info;
    std::string instructions;
    /// Where a stdio child's stderr lines go (the gateway's log), set before any child starts.
    std::function<void(std::string_view line)> on_stderr;
    /// upstream_backend::stats' counters, kept by whichever part meets each event.
    struct counters {
        std::atomic<std::uint64_t> reconnects{0};
        std::atomic<std::uint64_t> pool_waits{0};
        std::atomic<std::uint64_t> pool_timeouts{0};
        std::atomic<std::uint64_t> parked_rounds{0};
        /// Forwarded requests by how they ended: ok, error, cancelled, input_required.
        std::atomic<std::uint64_t> forwarded[4] = {};
    };
    mutable counters counted; // the profile is shared const; these only count

    explicit upstream_profile(gateway_options o)
        : options(std::move(o)),
          name((options.name.empty() ? "" : options.name + "=") + client::describe(options.upstream)) {
        // A child gets what it is given, never the gateway's whole environment (its secrets with it).
        if (auto* stdio = std::get_if<client::stdio_target>(&options.upstream); stdio && !stdio->env)
            stdio->env = client::child_environment().value();
    }

    [[nodiscard]] bool stdio() const noexcept {
        return !std::holds_alternative<client::http_target>(options.upstream);
    }
    /// The mode that reaches the upstream in the era it turned out to speak.
    [[nodiscard]] client::connect_mode known_mode() const noexcept {
        return era == protocol::era::modern ? client::connect_mode::modern : client::connect_mode::legacy;
    }
    /// What every upstream connection of the gateway has in common: it names the gateway, keeps no cache
    /// and no verdicts, and leaves deprecation warnings to the downstream client.
    [[nodiscard]] client::client_options client_options() const {
        client::client_options o;
        o.client_info = boost::json::object{{"name", "duet-gateway"}, {"version", duet::version}};
        o.request_timeout = options.request_timeout;
        o.request_time_limit = options.request_time_limit;
        o.max_message_bytes = options.max_message_bytes;
        o.on_server_stderr = on_stderr;
        o.verdicts = nullptr;
        o.use_cache = false;
        o.on_warning = [](std::string const&) {
        };
        return o;
    }

    /// The upstream's 2025-11-25 `execution.taskSupport` of each tool that runs as a task (true: required),
    /// read off every tool list the gateway sees: the control connection's, and the clients'.
    void learn_task_support(boost::json::array const& tools) const {
        std::lock_guard lock(tasks_mutex_);
        for (auto const& t : tools) {
            auto const* tool = t.if_object();
            auto const* name = tool ? tool->if_contains("name") : nullptr;
            if (!name || !name->is_string())
                continue;
            auto const* execution = tool->if_contains("execution");
            auto const* support = execution && execution->is_object()
                                      ? execution->get_object().if_contains("taskSupport")
                                      : nullptr;
            std::string_view const said = support && support->is_string()
                                              ? std::string_view(support->get_string())
                                              : std::string_view();
            if (said == "required" || said == "optional")
                task_support_[std::string(name->get_string())] = said == "required";
            else
                task_support_.erase(std::string(name->get_string()));
        }
    }
    /// Empty: the tool runs as no task (as far as the lists said); else whether it requires one.
    [[nodiscard]] std::optional<bool> task_support_of(std::string_view tool) const {
        std::lock_guard lock(tasks_mutex_);
        auto it = task_support_.find(tool);
        return it == task_support_.end() ? std::nullopt : std::optional<bool>(it->second);
    }

private:
    mutable std::mutex tasks_mutex_;
    mutable std::map<std::string, bool, std::less<>> task_support_;
};

} // namespace duet::gateway::detail
