// The in-memory event_log: one stream's kept events in a deque, its reader's wake-up a plain callback.
#pragma once

#include <duet/store/event_log.hpp>

#include <deque>
#include <mutex>

namespace duet::store {

class memory_event_log final : public event_log {
public:
    memory_event_log(std::uint64_t number, std::size_t replay_limit)
        : number_(number), limit_(replay_limit) {}

    [[nodiscard]] std::uint64_t number() const noexcept override { return number_; }
    void publish(std::string data) override;
    void complete(std::optional<std::string> last) override;
    [[nodiscard]] bool is_complete() const override;
    [[nodiscard]] std::vector<event> events_after(std::uint64_t seq) const override;
    [[nodiscard]] std::vector<event> take_events() override;
    [[nodiscard]] std::uint64_t last_seq() const override;
    [[nodiscard]] std::uint64_t attach(std::function<void()> wake, bool take_over) override;
    void detach(std::uint64_t token) override;
    [[nodiscard]] bool attached(std::uint64_t token) const override;
    [[nodiscard]] bool has_reader() const override;
    void wake() const override;
    void request_close() override;
    [[nodiscard]] bool take_close_request() override;

private:
    void append(std::string data); ///< `mutex_` held

    std::uint64_t const number_;
    std::size_t const limit_;
    mutable std::mutex mutex_;
    std::deque<event> log_;
    std::uint64_t last_seq_ = 0;
    bool complete_ = false;
    bool close_requested_ = false;
    std::function<void()> wake_;
    std::uint64_t reader_ = 0; ///< the attached reader's token; 0: none
    std::uint64_t next_reader_ = 1;
};

} // namespace duet::store
