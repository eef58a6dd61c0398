// The requests a connection sent its client (a legacy session's elicitation, sampling, roots, ping) that
// await their answers: each wakes the coroutine that sent it when its answer comes, its deadline passes, or
// the connection ends. Lives on its connection's strand.
#pragma once

#include <duet/jsonrpc/message.hpp>
#include <duet/server/request_context.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace duet::server::detail {

class client_requests {
public:
    /// A request registered, not sent yet: its id, and the timer its sender awaits (cancelled by an answer).
    struct opened {
        jsonrpc::request_id id;
        std::shared_ptr<boost::asio::steady_timer> wake;
    };

    /// Registers the next request to the client, due within `timeout`; its timer runs on `strand`. Its id is
    /// a number, or "PREFIX-number" with a prefix.
    [[nodiscard]] opened open(boost::asio::any_io_executor const& strand, std::chrono::milliseconds timeout,
                              std::string const& prefix = {}) {
        auto const n = next_id_++;
        jsonrpc::request_id id =
            prefix.empty() ? jsonrpc::request_id{n} : jsonrpc::request_id{prefix + '-' + std::to_string(n)};
        auto timer = std::make_shared<boost::asio::steady_timer>(strand, timeout);
        pending_[id] = pending{timer, std::nullopt};
        return opened{std::move(id), std::move(timer)};
    }

    /// What became of request `id` once its timer woke its sender: empty when no answer came in time.
    [[nodiscard]] std::optional<peer_result> close(jsonrpc::request_id const& id) {
        auto node = pending_.extract(id);
        if (node.empty() || !node.mapped().outcome)
            return std::nullopt;
        return std::move(*node.mapped().outcome);
    }

    /// The client's answer to one of them (a late or unknown one is ignored).
    void on_answer(jsonrpc::request_id const& id, peer_result outcome) {
        auto it = pending_.find(id);
        if (it == pending_.end())
            return; // late (timed out) or never ours
        it->second.outcome = std::move(outcome);
        it->second.wake->cancel();
    }

    /// The connection ended: every request still waiting fails with connection_closed.
    void fail_all() {
        for (auto& [id, p] : pending_) {
            p.outcome = peer_failure{make_error_code(peer_errc::connection_closed), std::nullopt};
            p.wake->cancel();
        }
    }

private:
    struct pending {
        std::shared_ptr<boost::asio::steady_timer> wake;
        std::optional<peer_result> outcome;
    };

    std::map<jsonrpc::request_id, pending> pending_;
    std::int64_t next_id_ = 1;
};

} // namespace duet::server::detail
