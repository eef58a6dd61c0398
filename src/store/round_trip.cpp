// store::await_round_trip (duet/store/event_bus.hpp), over any bus.
#include <duet/store/event_bus.hpp>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <string>

namespace duet::store {

bool await_round_trip(event_bus& bus, std::chrono::milliseconds timeout) {
    struct marker {
        std::mutex mutex;
        std::condition_variable came;
        bool back = false;
    };
    auto m = std::make_shared<marker>();
    // Its own topic: no other process's marker, nor another call's, is taken for it.
    std::random_device entropy;
    auto const topic = "duet/round-trip/" + std::to_string(entropy()) + '-' + std::to_string(entropy());
    auto const token = bus.subscribe(topic, [m](std::string_view) {
        std::lock_guard lock(m->mutex);
        m->back = true;
        m->came.notify_all();
    });
    bus.publish(topic, "");
    bool back = false;
    {
        std::unique_lock lock(m->mutex);
        back = m->came.wait_for(lock, timeout, [&] { return m->back; });
    }
    bus.unsubscribe(token);
    return back;
}

} // namespace duet::store
