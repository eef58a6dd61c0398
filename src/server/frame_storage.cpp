#include <duet/server/frame_storage.hpp>

#include <boost/json/memory_resource.hpp>

#include <array>
#include <bit>
#include <cstdint>
#include <new>

namespace duet::server {

namespace {

// Sizes 16, 32, ..., 2048 bytes: every key, string and object table of an ordinary frame. Larger blocks, and
// alignments beyond what operator new gives, go straight to the heap.
constexpr std::size_t min_shift = 4;
constexpr std::size_t classes = 8;
constexpr std::size_t max_block = std::size_t{1} << (min_shift + classes - 1);

constexpr std::size_t class_of(std::size_t n) noexcept {
    return n <= (std::size_t{1} << min_shift) ? 0 : std::bit_width(n - 1) - min_shift;
}
constexpr std::size_t class_size(std::size_t c) noexcept {
    return std::size_t{1} << (c + min_shift);
}

struct free_block {
    free_block* next;
};

// One thread's lists. Trivially destructible, so reaching it costs no initialization check; `drain` (below)
// empties it when the thread ends.
struct thread_cache {
    std::array<free_block*, classes> head;
    std::array<std::uint32_t, classes> count;
    bool registered;
    bool gone; ///< the thread is ending: blocks go straight back to the heap
};

thread_local thread_cache cache{};

struct drain {
    ~drain() {
        for (std::size_t c = 0; c < classes; ++c) {
            while (auto* b = cache.head[c]) {
                cache.head[c] = b->next;
                ::operator delete(b);
            }
            cache.count[c] = 0;
        }
        cache.gone = true;
    }
};

thread_local drain drain_at_exit;

// The first use of `drain_at_exit` on a thread registers its destructor; the volatile keeps the use.
void arm_drain() noexcept {
    cache.registered = true;
    [[maybe_unused]] drain* volatile armed = &drain_at_exit;
}

class frame_pool final : public boost::json::memory_resource {
    void* do_allocate(std::size_t n, std::size_t align) override {
        if (n > max_block || align > __STDCPP_DEFAULT_NEW_ALIGNMENT__)
            return ::operator new(n, std::align_val_t(align));
        auto const c = class_of(n);
        if (auto* b = cache.head[c]) {
            cache.head[c] = b->next;
            --cache.count[c];
            return b;
        }
        if (!cache.registered && !cache.gone)
            arm_drain();
        return ::operator new(class_size(c));
    }

    void do_deallocate(void* p, std::size_t n, std::size_t align) override {
        if (n > max_block || align > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
            ::operator delete(p, std::align_val_t(align));
            return;
        }
        auto const c = class_of(n);
        if (cache.count[c] >= detail::frame_storage_per_size_bound || cache.gone || !cache.registered) {
            ::operator delete(p);
            return;
        }
        auto* b = static_cast<free_block*>(p);
        b->next = cache.head[c];
        cache.head[c] = b;
        ++cache.count[c];
    }

    bool do_is_equal(boost::json::memory_resource const& other) const noexcept override {
        return this == &other;
    }
};

} // namespace

boost::json::storage_ptr frame_storage() noexcept {
    // Never destroyed: values parsed into it may outlive every static (a copy a handler keeps).
    static auto* const pool = new frame_pool;
    return boost::json::storage_ptr(pool);
}

std::size_t detail::frame_storage_cached_blocks() noexcept {
    std::size_t n = 0;
    for (auto const c : cache.count)
        n += c;
    return n;
}

} // namespace duet::server
