/// @file duet/store/task_store.hpp
///
/// Tasks (io.modelcontextprotocol/tasks, and 2025-11-25's core tasks) as a store keeps them, so that every
/// process serving one endpoint finds each task wherever it runs: its owner, its expiry, whether it is
/// terminal, and a body the server writes (status, timestamps, outcome, outstanding input requests), opaque
/// here. A record expires at `expires` and is then gone, as if it never existed; one owner holds at most a
/// given number of live records; a terminal record never changes again, so a cancellation is sticky.
///
/// Every operation answers through a callback, at once in memory, on the store's own thread when it is
/// shared (Redis): the caller hands off anything slow. The process running a task hears what others change
/// in it through the event bus (event_bus.hpp), not through the store.
///
/// @par Thread safety
/// Every member may be called from any thread.
#pragma once

#include <boost/system/result.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace duet::store {

struct task_record {
    std::string id;
    std::string owner;
    std::string body;
    bool terminal = false;
    /// When the record is gone; max(): never.
    std::chrono::system_clock::time_point expires = std::chrono::system_clock::time_point::max();
    /// Read, never written: the record is not terminal, and the process that made it (the one running its
    /// task) has ended, so nothing will ever finish it. Only a shared store can tell; the caller decides
    /// what the task becomes.
    bool orphaned = false;
};

class task_store {
public:
    using clock = std::chrono::system_clock;
    /// Why an operation could not be carried out (a shared store's server away), in words.
    using failure = std::string;

    virtual ~task_store() = default;

    enum class created { ok, owner_full, taken };
    /// Keeps `r` unless its owner holds `max_per_owner` live records already, or one by that id exists.
    virtual void create(task_record r, std::size_t max_per_owner,
                        std::function<void(boost::system::result<created, failure>)> done) = 0;

    /// The record `id` names (whoever owns it: the caller checks), or nullopt when there is none or it
    /// expired.
    virtual void
    find(std::string id,
         std::function<void(boost::system::result<std::optional<task_record>, failure>)> done) = 0;

    /// Reads the live, non-terminal record `id` names and replaces its body and terminal flag with what
    /// `change` returns (nothing: leaves it as it is), atomically with respect to every other update in every
    /// process sharing the store: a record changed meanwhile is read again and `change` called again, so
    /// `change` must do nothing but compute. `done` gets the record as changed, or nullopt when there was
    /// nothing to change (gone, terminal, or `change` declined).
    using change = std::function<std::optional<task_record>(task_record const& current)>;
    virtual void
    update(std::string id, change c,
           std::function<void(boost::system::result<std::optional<task_record>, failure>)> done) = 0;

    /// `owner`'s live records in id order after `after` (empty: from the first), at most `limit` (at least
    /// one), and whether more follow.
    struct page {
        std::vector<task_record> records;
        bool more = false;
    };
    virtual void list(std::string owner, std::string after, std::size_t limit,
                      std::function<void(boost::system::result<page, failure>)> done) = 0;

    /// Whether other processes share it: a task's changes must then be announced to them.
    [[nodiscard]] virtual bool shared() const noexcept { return false; }
};

/// 32 lowercase hex digits from OpenSSL's generator: unguessable, as a task id must be (SEP-2663 §Security).
[[nodiscard]] std::string new_task_id();

} // namespace duet::store
