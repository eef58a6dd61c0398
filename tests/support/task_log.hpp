// File: tests/support/task_log.hpp
//
// What client::request_options::on_task reported while a client followed a task, in order, for the tests of
// the client, the CLI and the gateway.
#pragma once

#include <duet/client/client.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::test {

/// What on_task reported, in order.
struct task_log {
    std::vector<client::task_info> seen;

    std::function<void(client::task_info const&)> recorder() {
        return [this](client::task_info const& t) {
            seen.push_back(t);
        };
    }
    // The statuses with repeats collapsed: {"working", "completed"} for a task that just ran.
    [[nodiscard]] std::vector<std::string> statuses() const {
        std::vector<std::string> out;
        for (auto const& t : seen)
            if (out.empty() || out.back() != t.status)
                out.push_back(t.status);
        return out;
    }
    [[nodiscard]] bool saw(std::string_view status) const {
        for (auto const& t : seen)
            if (t.status == status)
                return true;
        return false;
    }
    // Every report names one task; its id.
    [[nodiscard]] std::string one_id() const {
        if (seen.empty())
            return {};
        for (auto const& t : seen)
            if (t.id != seen.front().id)
                return {};
        return seen.front().id;
    }
};

} // namespace duet::test
