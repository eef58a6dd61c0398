// Legacy Streamable HTTP sessions: one server::connection each, the id the client echoes, and the resumable
// SSE streams (event_stream.hpp) of its messages: the standalone one that GET delivers, and one per POST
// answered with SSE, so a broken or server-closed stream resumes from `Last-Event-ID` within a bounded replay
// window.
#pragma once

#include <duet/server/connection.hpp>

#include "event_stream.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace duet::transport::http {

/// 128 bits from the OS CSPRNG (OpenSSL RAND_bytes), as 32 lowercase hex digits: visible ASCII per the spec.
[[nodiscard]] std::string mint_session_id();

class legacy_session {
public:
    legacy_session(std::string id, std::size_t replay_limit, std::size_t max_streams)
        : id_(std::move(id)), replay_limit_(replay_limit), max_streams_(max_streams),
          standalone_(std::make_shared<event_stream>(0, replay_limit)) {}

    [[nodiscard]] std::string const& id() const noexcept { return id_; }

    std::shared_ptr<server::connection> conn;
    /// The server of the endpoint the session was opened at (an http_server may serve several).
    server::server const* owner = nullptr;

    /// The standalone stream (number 0): session-level messages (server requests and notifications), which
    /// the GET stream delivers.
    [[nodiscard]] std::shared_ptr<event_stream> const& standalone() const noexcept { return standalone_; }
    /// Appends a session-level message to the standalone stream.
    void publish(std::string line) { standalone_->publish(std::move(line)); }

    /// A new stream for one POST's messages. Beyond `max_streams` kept ones, the oldest without a reader is
    /// forgotten (it can no longer be resumed).
    [[nodiscard]] std::shared_ptr<event_stream> open_stream();
    /// The stream `number` names (0: the standalone one); null when unknown or forgotten.
    [[nodiscard]] std::shared_ptr<event_stream> find_stream(std::uint64_t number) const;
    /// A POST stream whose every event reached the client: nothing is left to resume.
    void forget_stream(std::uint64_t number);

    /// Ends the session: wakes the standalone stream's reader so it closes.
    void end();
    [[nodiscard]] bool ended() const;

    void touch() { last_seen_ = std::chrono::steady_clock::now(); }
    [[nodiscard]] std::chrono::steady_clock::time_point last_seen() const { return last_seen_; }

private:
    std::string id_;
    std::size_t replay_limit_;
    std::size_t max_streams_;
    std::shared_ptr<event_stream> standalone_;
    mutable std::mutex mutex_;
    std::map<std::uint64_t, std::shared_ptr<event_stream>> streams_; ///< POST streams, oldest first
    std::uint64_t next_stream_ = 1;
    std::atomic<bool> ended_{false};
    std::atomic<std::chrono::steady_clock::time_point> last_seen_{std::chrono::steady_clock::now()};
};

class session_store {
public:
    explicit session_store(std::size_t max_sessions) : max_(max_sessions) {}

    /// Null when the store is full.
    [[nodiscard]] std::shared_ptr<legacy_session> create(std::size_t replay_limit, std::size_t max_streams);
    [[nodiscard]] std::shared_ptr<legacy_session> find(std::string const& id);
    std::shared_ptr<legacy_session> remove(std::string const& id);
    /// Sessions idle longer than `expiry`, removed from the store.
    std::vector<std::shared_ptr<legacy_session>> expire(std::chrono::milliseconds expiry);
    std::vector<std::shared_ptr<legacy_session>> all();
    [[nodiscard]] std::size_t size() const;

private:
    std::size_t max_;
    mutable std::mutex mutex_;
    std::map<std::string, std::shared_ptr<legacy_session>> sessions_;
};

} // namespace duet::transport::http
