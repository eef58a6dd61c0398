// The upstream tools' task support, as the gateway keeps it: which tools a 2025-11-25 upstream asks to run
// as tasks, what the downstream clients are told of it (in tools/list and the backend's task policy). Apart
// from the forwarding, which only asks it (upstream_handler.cpp).
#include <duet/protocol/tasks.hpp>

#include "upstream_impl.hpp"

#include <chrono>

namespace duet::gateway {

// A listed tool's task support: an upstream tool that requires a task is asked as one (2025-11-25);
// where downstream clients may get tasks, a 2025-11-25 client is told it may ask (modern ones are not
// told: the extension has no per-tool flag).
void upstream_backend::impl::learn_tools(json::object& list) {
    auto* tools = list.if_contains("tools");
    if (!tools || !tools->is_array())
        return;
    profile_->learn_task_support(tools->get_array());
    if (!profile_->caps.tasks)
        return;
    for (auto& t : tools->get_array())
        if (auto* tool = t.if_object())
            (*tool)["execution"] = json::object{{"taskSupport", "optional"}};
}

bool upstream_backend::impl::upstream_task_wanted(json::object const& params, bool downstream_follows) const {
    if (profile_->era != protocol::era::legacy || profile_->version != protocol::version::v2025_11_25)
        return false;
    auto const* name = params.if_contains("name");
    if (!name || !name->is_string())
        return false;
    auto const required = profile_->task_support_of(name->get_string());
    return required && (*required || downstream_follows);
}

bool upstream_backend::impl::upstream_requires_task(std::string_view tool) const {
    return profile_->task_support_of(tool).value_or(false);
}

std::optional<server::tool_task_policy> upstream_backend::task_policy(std::string_view tool) const {
    auto const& profile = *impl_->profile_;
    if (!profile.caps.tasks)
        return std::nullopt;
    // Without task_after, a call becomes a task only when the upstream answers with one (become_task). A
    // 2025-11-25 upstream tool that requires a task keeps that contract downstream.
    constexpr auto only_when_the_upstream_says = std::chrono::hours(24 * 365);
    return server::tool_task_policy{std::string(tool),
                                    impl_->upstream_requires_task(tool) ? protocol::task_support::required
                                                                        : protocol::task_support::optional,
                                    profile.options.task_after.value_or(only_when_the_upstream_says)};
}

} // namespace duet::gateway
