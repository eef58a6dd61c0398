/// @file duet/gateway/merged_backend.hpp
///
/// One endpoint over one or more upstreams (each an upstream_backend): what `duet gateway` serves at a path.
/// Several upstreams make one virtual server: their tools, prompts, resources and templates in one list, tool
/// and prompt names shown as NAME + separator + name, resource URIs kept (a read, a watch and a completion go
/// to the upstream that listed them), capabilities the union, instructions joined under a heading per
/// upstream, and a list_changed of any upstream announced to the endpoint's clients.
///
/// Per upstream, whether merged or alone:
///  - an exposure policy (duet/gateway/exposure.hpp): what is hidden is not listed, and a call to it is
///    "Unknown tool", never forwarded;
///  - at most max_concurrent_calls calls at once; one more waits for a slot up to slot_wait, then fails;
///  - a circuit breaker (duet/gateway/limits.hpp): an upstream that failed `failures` times in a row (gone,
///    timed out, broke the protocol; its own errors are answers, not failures) is marked down, and its calls
///    answer an error saying so until the backoff lets a probe through.
///
///     auto merged = merged_backend::create(std::move(members), {.separator = "__"});
///     server::server srv(merged->describe());
///     merged->attach(srv);                  // before srv serves; detach() before srv goes
///     co_await merged->async_load();        // learns which upstream offers which resources
///
/// @par Threads
/// Callable from any thread; each member's backend keeps to its own executor.
#pragma once

#include <duet/gateway/exposure.hpp>
#include <duet/gateway/limits.hpp>
#include <duet/gateway/upstream_backend.hpp>
#include <duet/server/server.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace duet::gateway {

struct merged_member {
    std::string name; ///< the prefix of its names when several are merged; in logs and errors
    std::shared_ptr<upstream_backend> backend;
    exposure_policy exposure;
    /// Calls forwarded to it at once, at most; 0: no bound.
    std::size_t max_concurrent_calls = 0;
    /// How long a call waits for one of those slots.
    std::chrono::milliseconds slot_wait = std::chrono::seconds(60);
    breaker_options breaker;
    /// Counted by ready(): the endpoint is not ready while a required member is marked down.
    bool required = true;
};

struct merged_options {
    /// Show tools and prompts as NAME + separator + name (a merged endpoint, even with one member left);
    /// false: as they are (an endpoint of one upstream; it must then have exactly one member).
    bool prefix_names = true;
    /// Between a member's name and its tools' and prompts' names.
    std::string separator = "__";
    /// The time the breakers decide by; tests set their own.
    std::function<limit_clock::time_point()> clock;
    /// Where what the endpoint has to say goes (a resource two members offer, say), a line without prefix;
    /// default: the process's log (duet/log/log.hpp), as a warning of "duet gateway".
    std::function<void(std::string const&)> log;
};

class merged_backend final : public server::backend, public std::enable_shared_from_this<merged_backend> {
public:
    /// `members` must not be empty; names must differ. Throws std::invalid_argument otherwise.
    [[nodiscard]] static std::shared_ptr<merged_backend> create(std::vector<merged_member> members,
                                                                merged_options options = {});
    ~merged_backend() override;

    /// Unprefixed (one upstream): its own description. Else a description of the whole ("duet-gateway", the
    /// members' instructions under a heading each).
    [[nodiscard]] server::server_options describe() const;
    /// Serves `srv` from the members from now on, relaying their announcements; detach() before srv goes.
    void attach(server::server& srv);
    void detach();
    /// Replaces the members (a configuration reloaded). A member whose name and backend stay keeps its
    /// breaker and its sessions' data, with the new policy and limits; a member gone is detached (its owner
    /// closes its backend once its calls are done), a new one attached. Requests in flight finish with the
    /// members they began with; clients hear list_changed. Throws std::invalid_argument as create() does.
    void set_members(std::vector<merged_member> members);
    /// Lists every member's resources and templates once, so that reads route without asking around, and
    /// reports a URI two members offer (the first one listed serves it). Nothing to do for a lone member.
    [[nodiscard]] boost::asio::awaitable<void> async_load();

    struct member_health {
        std::string name;
        bool required = true;
        circuit_breaker::state state = circuit_breaker::state::closed;
        std::size_t failures_in_a_row = 0;
    };
    [[nodiscard]] std::vector<member_health> health() const;
    /// No required member is marked down.
    [[nodiscard]] bool ready() const;

    // ---- server::backend ---------------------------------------------------------------------------------
    [[nodiscard]] std::optional<server::tool_task_policy> task_policy(std::string_view tool) const override;
    [[nodiscard]] protocol::server_capabilities capabilities() const override;
    [[nodiscard]] boost::asio::awaitable<server::answer_result>
    async_answer(protocol::method_id method, boost::json::object const& params,
                 server::request_context& ctx) override;
    void on_watch(std::string const& uri, bool watched) override;
    [[nodiscard]] server::session_admission on_session(protocol::version version,
                                                       boost::json::object const& client_capabilities,
                                                       boost::json::object const& client_info) override;

    class impl;

private:
    explicit merged_backend(std::shared_ptr<impl> p) : impl_(std::move(p)) {}
    std::shared_ptr<impl> impl_;
};

} // namespace duet::gateway
