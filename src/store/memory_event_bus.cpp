#include "memory_event_bus.hpp"

#include <vector>

namespace duet::store {

std::uint64_t memory_event_bus::subscribe(std::string topic, handler h) {
    auto s = std::make_shared<subscription const>(subscription{std::move(topic), std::move(h)});
    std::lock_guard lock(mutex_);
    auto const token = next_token_++;
    subscriptions_.emplace(token, std::move(s));
    return token;
}

void memory_event_bus::unsubscribe(std::uint64_t token) {
    std::lock_guard lock(mutex_);
    subscriptions_.erase(token);
}

void memory_event_bus::publish(std::string_view topic, std::string_view payload) {
    // Copied under the lock, called outside it: a handler may subscribe or publish in turn.
    std::vector<std::shared_ptr<subscription const>> to;
    {
        std::lock_guard lock(mutex_);
        for (auto const& entry : subscriptions_)
            if (entry.second->topic == topic)
                to.push_back(entry.second);
    }
    for (auto const& s : to)
        s->h(payload);
}

std::shared_ptr<event_bus> make_memory_event_bus() {
    return std::make_shared<memory_event_bus>();
}

} // namespace duet::store
