// An allocator over the frame pool, for what lives for one request: its header text, its fields and its
// body. The heap would take a call of its own for each; the pool (server::frame_storage(), per-thread free
// lists) recycles them, as it does for the body's parsed JSON.
#pragma once

#include <duet/server/frame_storage.hpp>

#include <cstddef>

namespace duet::transport::http {

template<class T>
struct frame_allocator {
    using value_type = T;
    frame_allocator() noexcept = default;
    template<class U>
    frame_allocator(frame_allocator<U> const&) noexcept {}
    T* allocate(std::size_t n) {
        return static_cast<T*>(server::frame_storage()->allocate(n * sizeof(T), alignof(T)));
    }
    void deallocate(T* p, std::size_t n) noexcept {
        server::frame_storage()->deallocate(p, n * sizeof(T), alignof(T));
    }
    friend bool operator==(frame_allocator const&, frame_allocator const&) noexcept { return true; }
};

} // namespace duet::transport::http
