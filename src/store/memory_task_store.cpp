// One process's tasks (duet/store/task_store.hpp): a map under one lock, answered before each call returns.
// Expired records are forgotten lazily: a lookup skips them, and a create sweeps at most once a second.
#include <duet/store/memory.hpp>

#include "session_id.hpp"

#include <map>
#include <mutex>

namespace duet::store {

std::string new_task_id() {
    return mint_session_id();
}

namespace {

class memory_task_store final : public task_store {
public:
    explicit memory_task_store(std::function<clock::time_point()> now) : now_(std::move(now)) {
        if (!now_)
            now_ = [] {
                return clock::now();
            };
    }

    void create(task_record r, std::size_t max_per_owner,
                std::function<void(boost::system::result<created, failure>)> done) override {
        auto const now = now_();
        created answer = created::ok;
        {
            std::lock_guard lock(mutex_);
            sweep(now, false);
            auto const full = [&] {
                auto const held = per_owner_.find(r.owner);
                return max_per_owner == 0 || (held != per_owner_.end() && held->second >= max_per_owner);
            };
            if (full())
                sweep(now, true); // the count is exact when it refuses
            auto it = records_.find(r.id);
            if (full())
                answer = created::owner_full;
            else if (it != records_.end() && !expired(it->second, now))
                answer = created::taken;
            else {
                if (it != records_.end())
                    forget(it);
                r.orphaned = false; // read, never written: one process never orphans its own
                ++per_owner_[r.owner];
                auto id = r.id;
                records_.insert_or_assign(std::move(id), std::move(r));
            }
        }
        done(answer);
    }

    void find(std::string id,
              std::function<void(boost::system::result<std::optional<task_record>, failure>)> done) override {
        std::optional<task_record> found;
        {
            std::lock_guard lock(mutex_);
            if (auto it = records_.find(id); it != records_.end() && !expired(it->second, now_()))
                found = it->second;
        }
        done(std::move(found));
    }

    void
    update(std::string id, change c,
           std::function<void(boost::system::result<std::optional<task_record>, failure>)> done) override {
        std::optional<task_record> changed;
        {
            std::lock_guard lock(mutex_);
            auto it = records_.find(id);
            if (it != records_.end() && !expired(it->second, now_()) && !it->second.terminal) {
                if (auto next = c(it->second)) {
                    it->second.body = std::move(next->body);
                    it->second.terminal = next->terminal;
                    changed = it->second;
                }
            }
        }
        done(std::move(changed));
    }

    void list(std::string owner, std::string after, std::size_t limit,
              std::function<void(boost::system::result<page, failure>)> done) override {
        limit = std::max<std::size_t>(limit, 1); // a page always shows something, so paging ends
        page out;
        {
            std::lock_guard lock(mutex_);
            auto const now = now_();
            auto it = after.empty() ? records_.begin() : records_.upper_bound(after);
            for (; it != records_.end(); ++it) {
                if (it->second.owner != owner || expired(it->second, now))
                    continue;
                if (out.records.size() == limit) {
                    out.more = true;
                    break;
                }
                out.records.push_back(it->second);
            }
        }
        done(std::move(out));
    }

private:
    using records = std::map<std::string, task_record, std::less<>>;

    static bool expired(task_record const& r, clock::time_point now) { return r.expires <= now; }

    void forget(records::iterator it) {
        if (auto held = per_owner_.find(it->second.owner); held != per_owner_.end() && --held->second == 0)
            per_owner_.erase(held);
        records_.erase(it);
    }

    void sweep(clock::time_point now, bool now_or_never) {
        if (!now_or_never && now - swept_ < std::chrono::seconds(1) && now >= swept_)
            return;
        swept_ = now;
        for (auto it = records_.begin(); it != records_.end();) {
            auto const next = std::next(it);
            if (expired(it->second, now))
                forget(it);
            it = next;
        }
    }

    std::function<clock::time_point()> now_;
    std::mutex mutex_;
    records records_;
    std::map<std::string, std::size_t, std::less<>> per_owner_;
    clock::time_point swept_{};
};

} // namespace

std::shared_ptr<task_store>
make_memory_task_store(std::function<std::chrono::system_clock::time_point()> now) {
    return std::make_shared<memory_task_store>(std::move(now));
}

} // namespace duet::store
