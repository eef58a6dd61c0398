// File: duet/store/session_store.hpp
//
// Legacy Streamable HTTP sessions as a store keeps them: the id the client echoes, whether the session is
// alive (touched by its traffic, ended by DELETE, expiry or a drain), and its resumable streams
// (event_log.hpp): the standalone one that GET delivers, and one per POST answered with SSE.
//
// A session also has a live half that cannot leave the process serving it: the transport's
// server::connection (handlers, pending server-to-client requests, a strand). The store does not share it;
// it keeps the `session_local` the transport gave at create() beside the record, untouched, so a lookup finds
// both at once. A shared store (Redis) keeps it in the creating process only: elsewhere local() is null.
//
// @par Thread safety
// Every member may be called from any thread.
#pragma once

#include <duet/store/event_log.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace duet::store {

/// What only the process serving a session holds (see above); the transport derives its own.
class session_local {
public:
    virtual ~session_local() = default;
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
    /// reader is forgotten (it can no longer be resumed).
    [[nodiscard]] virtual std::shared_ptr<event_log> open_stream() = 0;
    /// The stream `number` names (0: the standalone one); null when unknown or forgotten.
    [[nodiscard]] virtual std::shared_ptr<event_log> find_stream(std::uint64_t number) const = 0;
    /// A POST stream whose every event reached the client: nothing is left to resume.
    virtual void forget_stream(std::uint64_t number) = 0;

    /// The live half given at create(); null in a process that did not create the session.
    [[nodiscard]] session_local* local() const noexcept { return local_.get(); }

protected:
    explicit session(std::shared_ptr<session_local> local) : local_(std::move(local)) {}

private:
    std::shared_ptr<session_local> const local_;
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
};

} // namespace duet::store
