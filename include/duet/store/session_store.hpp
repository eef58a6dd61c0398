/// @file duet/store/session_store.hpp
///
/// Legacy Streamable HTTP sessions as a store keeps them: the id the client echoes, whether the session is
/// alive (touched by its traffic, ended by DELETE, expiry or a drain), and its resumable streams
/// (event_log.hpp): the standalone one that GET delivers, and one per POST answered with SSE.
///
/// A session also has a live half that cannot leave the process serving it: the transport's
/// server::connection (handlers, pending server-to-client requests, a strand). The store does not share it;
/// it keeps the `session_local` the transport gave at create() beside the record, untouched, so a lookup
/// finds both at once. A shared store (Redis) keeps it in the process that gave it: a process that finds a
/// session another opened gives it a live half of its own (adopt()), built from the state the first one saved
/// (save_state()). The live halves of one session hear each other through broadcast(): a client's answer to a
/// request, or its cancellation, reaches the process running that request wherever the client sent it.
///
/// @par Thread safety
/// Every member may be called from any thread.
#pragma once

#include <duet/store/event_log.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace duet::store {

/// What only the process serving a session holds (see above); the transport derives its own.
class session_local {
public:
    virtual ~session_local() = default;
    /// A payload some process broadcast to the session's live halves (session::broadcast), this one's
    /// included.
    virtual void on_broadcast(std::string_view payload) { (void)payload; }
    /// Another process saved the session's state (session::save_state).
    virtual void on_state(std::string_view state) { (void)state; }
    /// Whether this process now delivers the session's server events (session::claim_events).
    virtual void on_events_here(bool here) { (void)here; }
    /// Another process ended the session (DELETE), or the store let it expire: the live half ends too.
    virtual void on_ended() {}
};

class session {
public:
    virtual ~session() = default;

    [[nodiscard]] virtual std::string const& id() const noexcept = 0;
    /// The session's traffic keeps it from expiring.
    virtual void touch() = 0;
    /// Ends the session: wakes the standalone stream's reader so it closes.
    virtual void end() = 0;
    [[nodiscard]] virtual bool ended() const = 0;

    /// The standalone stream (number 0): session-level messages (server requests and notifications), which
    /// the GET stream delivers.
    [[nodiscard]] virtual std::shared_ptr<event_log> const& standalone() const noexcept = 0;
    /// A new stream for one POST's messages. Beyond the store's bound of kept ones, the oldest without a
    /// reader is forgotten (it can no longer be resumed). `on_loss` is the final event a shared store writes
    /// to it should the process serving it end before completing it (killed, crashed): the request's error
    /// response, so that a client resuming it on another process is told; a store of one process ignores it.
    [[nodiscard]] virtual std::shared_ptr<event_log> open_stream(std::string on_loss) = 0;
    [[nodiscard]] std::shared_ptr<event_log> open_stream() { return open_stream(std::string()); }
    /// The stream `number` names (0: the standalone one); null when unknown or forgotten.
    [[nodiscard]] virtual std::shared_ptr<event_log> find_stream(std::uint64_t number) const = 0;
    /// A POST stream whose every event reached the client: nothing is left to resume.
    virtual void forget_stream(std::uint64_t number) = 0;

    /// The session's shareable state, as its live half last saved it: opaque to the store, empty before.
    [[nodiscard]] virtual std::string state() const = 0;
    /// Keeps `state` for every process serving the session (the others' live halves hear it: on_state).
    virtual void save_state(std::string state) = 0;
    /// Hands `payload` to the live half of every process serving the session, this one's included; in
    /// order from one sender.
    virtual void broadcast(std::string payload) = 0;
    /// This process delivers the session's server events from now on, and no other does (one delivers
    /// them, or the session would hear each once per process). A store of one process always does.
    virtual void claim_events() {}
    [[nodiscard]] virtual bool events_here() const { return true; }

    /// The live half in this process: given at create(), or adopted; null until then.
    [[nodiscard]] session_local* local() const noexcept { return local_.load(std::memory_order_acquire); }
    /// Gives the session a live half in this process, unless it has one: the first given stays, and is
    /// returned.
    session_local* adopt(std::shared_ptr<session_local> l) {
        std::lock_guard lock(adopt_mutex_);
        if (!owner_) {
            owner_ = std::move(l);
            local_.store(owner_.get(), std::memory_order_release);
        }
        return owner_.get();
    }

    /// Lets go of the live half (its transport is going away; a store that outlives it keeps the record).
    void drop_local() {
        std::shared_ptr<session_local> gone;
        std::lock_guard lock(adopt_mutex_);
        local_.store(nullptr, std::memory_order_release);
        gone = std::move(owner_);
    }

protected:
    explicit session(std::shared_ptr<session_local> local) : owner_(std::move(local)), local_(owner_.get()) {}

private:
    std::mutex adopt_mutex_;
    std::shared_ptr<session_local> owner_;
    std::atomic<session_local*> local_;
};

class session_store {
public:
    virtual ~session_store() = default;

    /// A new session under a freshly minted id (128 random bits as 32 lowercase hex digits: visible ASCII per
    /// the spec), holding `local`. Null when the store is full.
    [[nodiscard]] virtual std::shared_ptr<session> create(std::shared_ptr<session_local> local) = 0;
    /// The session `id` names; null when unknown, removed or ended.
    [[nodiscard]] virtual std::shared_ptr<session> find(std::string_view id) = 0;
    /// Takes the session out of the store (it is not ended: the caller ends it).
    virtual std::shared_ptr<session> remove(std::string_view id) = 0;
    /// Sessions not touched for longer than `idle`, removed from the store (the caller ends them).
    virtual std::vector<std::shared_ptr<session>> expire(std::chrono::milliseconds idle) = 0;
    /// Every session in the store (e.g. to end them at a drain).
    [[nodiscard]] virtual std::vector<std::shared_ptr<session>> all() = 0;
    [[nodiscard]] virtual std::size_t size() const = 0;

    // ---- several processes sharing the store --------------------------------------------------------------

    /// Whether other processes share it: a session's traffic may then come to a process that holds no live
    /// half of it yet.
    [[nodiscard]] virtual bool shared() const noexcept { return false; }
    /// Whether the store can be reached now (a shared store's server may be away: legacy requests then get
    /// 503 until it is back).
    [[nodiscard]] virtual bool available() const noexcept { return true; }
    /// This process's mark among those sharing the store (empty when not shared): the ids of its requests to
    /// clients carry it, so that no two processes send one id.
    [[nodiscard]] virtual std::string process_tag() const { return {}; }
    /// find() for a session this process may not know yet: `done` gets it (null when unknown or ended), on a
    /// thread of the store's.
    virtual void find_async(std::string id, std::function<void(std::shared_ptr<session>)> done) {
        done(find(id));
    }
    /// `done` runs once everything written so far reached the store, so that another process finds it (a new
    /// session's state before its id goes to the client).
    virtual void flush(std::function<void()> done) { done(); }
};

} // namespace duet::store
