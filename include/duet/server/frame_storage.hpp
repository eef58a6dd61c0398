#pragma once

/// @file duet/server/frame_storage.hpp
///
/// Where a connection keeps the JSON of the frames it parses.
///
/// Every frame's tree (the envelope, its keys, the params a handler reads) is a dozen or more small
/// allocations that live for one request; through the general-purpose heap they cost about a fifth of a
/// stdio message. This resource keeps blocks of a few sizes on per-thread free lists instead.
///
/// It lives as long as the process and its `storage_ptr` is uncounted, so a handler's copy of a piece of
/// params (which shares the storage) can never dangle and costs no atomic reference count. Any thread may
/// free a block (values die on the blocking pool too): a block goes to the freeing thread's list, or back to
/// the heap beyond a small bound per size, so no thread hoards memory.

#include <boost/json/storage_ptr.hpp>

#include <cstddef>

namespace duet::server {

/// The process-lifetime pool for parsed frames (see above).
[[nodiscard]] boost::json::storage_ptr frame_storage() noexcept;

namespace detail {
/// How many free blocks the calling thread's lists hold (all sizes), for tests of the bound and the drain.
[[nodiscard]] std::size_t frame_storage_cached_blocks() noexcept;
/// The most blocks of one size a thread keeps.
inline constexpr std::size_t frame_storage_per_size_bound = 256;
} // namespace detail

} // namespace duet::server
