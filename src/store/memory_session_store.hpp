// The in-memory session_store: one process's sessions in a map under a mutex, each with its event logs.
#pragma once

#include <duet/store/memory.hpp>
#include <duet/store/session_store.hpp>

#include <atomic>
#include <functional>
#include <map>
#include <mutex>

namespace duet::store {

class memory_session final : public session {
public:
    memory_session(std::string id, std::shared_ptr<session_local> local, memory_limits const& limits);

    [[nodiscard]] std::string const& id() const noexcept override { return id_; }
    void touch() override { last_seen_ = std::chrono::steady_clock::now(); }
    void end() override;
    [[nodiscard]] bool ended() const override { return ended_; }
    [[nodiscard]] std::shared_ptr<event_log> const& standalone() const noexcept override {
        return standalone_;
    }
    [[nodiscard]] std::shared_ptr<event_log> open_stream(std::string on_loss) override;
    [[nodiscard]] std::shared_ptr<event_log> find_stream(std::uint64_t number) const override;
    void forget_stream(std::uint64_t number) override;
    [[nodiscard]] std::string state() const override;
    void save_state(std::string state) override;
    void broadcast(std::string payload) override;

    [[nodiscard]] std::chrono::steady_clock::time_point last_seen() const { return last_seen_; }

private:
    std::string const id_;
    std::size_t const replay_limit_;
    std::size_t const max_streams_;
    std::shared_ptr<event_log> const standalone_;
    mutable std::mutex mutex_;
    std::map<std::uint64_t, std::shared_ptr<event_log>> streams_; ///< POST streams, oldest first
    std::uint64_t next_stream_ = 1;
    std::string state_;
    std::atomic<bool> ended_{false};
    std::atomic<std::chrono::steady_clock::time_point> last_seen_{std::chrono::steady_clock::now()};
};

class memory_session_store final : public session_store {
public:
    explicit memory_session_store(memory_limits limits) : limits_(limits) {}

    [[nodiscard]] std::shared_ptr<session> create(std::shared_ptr<session_local> local) override;
    [[nodiscard]] std::shared_ptr<session> find(std::string_view id) override;
    std::shared_ptr<session> remove(std::string_view id) override;
    std::vector<std::shared_ptr<session>> expire(std::chrono::milliseconds idle) override;
    [[nodiscard]] std::vector<std::shared_ptr<session>> all() override;
    [[nodiscard]] std::size_t size() const override;

private:
    memory_limits const limits_;
    mutable std::mutex mutex_;
    // Transparent comparison: a lookup by the request header's view allocates nothing.
    std::map<std::string, std::shared_ptr<memory_session>, std::less<>> sessions_;
};

} // namespace duet::store
