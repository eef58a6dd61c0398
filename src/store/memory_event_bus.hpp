// The in-memory event_bus: subscribers in a map under a mutex, called on the publishing thread.
#pragma once

#include <duet/store/event_bus.hpp>

#include <map>
#include <memory>
#include <mutex>

namespace duet::store {

class memory_event_bus final : public event_bus {
public:
    [[nodiscard]] std::uint64_t subscribe(std::string topic, handler h) override;
    void unsubscribe(std::uint64_t token) override;
    void publish(std::string_view topic, std::string_view payload) override;

private:
    struct subscription {
        std::string topic;
        handler h;
    };
    std::mutex mutex_;
    std::map<std::uint64_t, std::shared_ptr<subscription const>> subscriptions_;
    std::uint64_t next_token_ = 1;
};

} // namespace duet::store
