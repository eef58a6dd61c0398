#include "task_store.hpp"

#include "support/hex.hpp"

#include <openssl/rand.h>

#include <array>
#include <stdexcept>

namespace duet::server::detail {

std::string new_task_id() {
    std::array<unsigned char, 16> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1)
        throw std::runtime_error("OpenSSL could not generate a task id");
    return support::to_hex(std::string_view(reinterpret_cast<char const*>(bytes.data()), bytes.size()));
}

boost::system::result<task_entry, jsonrpc::error_object>
task_store::create(std::string owner, protocol::era era, protocol::version version,
                   std::optional<std::chrono::milliseconds> ttl, std::chrono::milliseconds poll_interval,
                   clock::time_point now) {
    task_entry e;
    e.view.id = new_task_id();
    e.view.status = protocol::task_status::working;
    e.view.created = now;
    e.view.updated = now;
    if (ttl) {
        e.view.ttl_ms = ttl->count();
        e.expires = now + *ttl;
    }
    e.view.poll_interval_ms = poll_interval.count();
    e.owner = std::move(owner);
    e.era = era;
    e.version = version;
    std::lock_guard lock(mutex_);
    auto& held = per_owner_[e.owner];
    if (held >= limits_.max_per_owner) {
        if (held == 0)
            per_owner_.erase(e.owner);
        return protocol::make_error(protocol::errc::internal_error,
                                    "Internal error: this caller already holds " + std::to_string(held) +
                                        " tasks, the most it may; wait for some to expire or cancel them");
    }
    ++held;
    tasks_.emplace(e.view.id, e);
    return e;
}

std::optional<task_entry> task_store::find(std::string_view id, std::string_view owner,
                                           clock::time_point now) {
    std::lock_guard lock(mutex_);
    auto it = tasks_.find(id);
    if (it == tasks_.end() || it->second.owner != owner || expired(it->second, now))
        return std::nullopt;
    return it->second;
}

std::optional<task_entry> task_store::update(std::string_view id, clock::time_point now,
                                             std::function<bool(task_entry&)> const& change) {
    std::lock_guard lock(mutex_);
    auto it = tasks_.find(id);
    if (it == tasks_.end() || expired(it->second, now) || protocol::is_terminal(it->second.view.status))
        return std::nullopt;
    auto next = it->second;
    if (!change(next))
        return std::nullopt;
    next.view.updated = std::max(now, it->second.view.updated);
    it->second = next;
    return next;
}

std::optional<task_entry> task_store::move(std::string_view id, protocol::task_status to,
                                           clock::time_point now) {
    return update(id, now, [to](task_entry& e) {
        if (!protocol::may_move(e.view.status, to))
            return false;
        e.view.status = to;
        if (to != protocol::task_status::input_required)
            e.input_requests.clear();
        return true;
    });
}

std::pair<std::vector<task_entry>, bool> task_store::list(std::string_view owner, std::string_view after,
                                                          std::size_t limit, clock::time_point now) {
    limit = std::max<std::size_t>(limit, 1); // a page always shows something, so paging ends
    std::lock_guard lock(mutex_);
    std::vector<task_entry> out;
    auto it = after.empty() ? tasks_.begin() : tasks_.upper_bound(after);
    for (; it != tasks_.end(); ++it) {
        if (it->second.owner != owner || expired(it->second, now))
            continue;
        if (out.size() == limit)
            return {std::move(out), true};
        out.push_back(it->second);
    }
    return {std::move(out), false};
}

std::vector<std::string> task_store::sweep(clock::time_point now) {
    std::lock_guard lock(mutex_);
    std::vector<std::string> gone;
    for (auto it = tasks_.begin(); it != tasks_.end();) {
        if (!expired(it->second, now)) {
            ++it;
            continue;
        }
        if (auto held = per_owner_.find(it->second.owner); held != per_owner_.end() && --held->second == 0)
            per_owner_.erase(held);
        gone.push_back(it->first);
        it = tasks_.erase(it);
    }
    return gone;
}

std::size_t task_store::size() const {
    std::lock_guard lock(mutex_);
    return tasks_.size();
}

} // namespace duet::server::detail
