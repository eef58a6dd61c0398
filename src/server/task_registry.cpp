// The registry's core (task_registry.hpp): making tasks, the changes a running handler writes, announcing
// them between processes and applying what others announce, and the look a process sharing its tasks takes
// at those running here. The tasks/* requests are answered in task_requests.cpp.
#include "task_registry.hpp"

#include <duet/protocol/errors.hpp>
#include <duet/protocol/shaping.hpp>
#include <duet/store/memory.hpp>

#include "task_store_calls.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>

namespace duet::server::detail {

namespace asio = boost::asio;
using protocol::task_status;
using clock = std::chrono::system_clock;

// How often a process sharing its tasks looks whether those running here are still live in the store.
constexpr std::chrono::seconds running_check_every{2};

namespace {

std::int64_t ms_since_epoch(clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

} // namespace
task_registry::task_registry(options o)
    : options_(std::move(o)), store_(options_.store ? options_.store : store::make_memory_task_store()),
      origin_(store::new_task_id()) {}

task_registry::~task_registry() {
    if (subscribed_)
        options_.bus->unsubscribe(subscription_);
}

std::string task_registry::scoped(std::string const& owner) const {
    // Length-prefixed, so that no topic and owner make another pair's scope.
    return std::to_string(options_.topic.size()) + ':' + options_.topic + owner;
}

void task_registry::start() {
    if (!store_->shared() || !options_.bus)
        return; // one process: every change is made, and heard, here
    std::weak_ptr<task_registry> weak = weak_from_this();
    subscription_ = options_.bus->subscribe(options_.topic, [weak](std::string_view payload) {
        if (auto self = weak.lock())
            self->on_announcement(payload);
    });
    subscribed_ = true;
}

boost::asio::awaitable<boost::system::result<task_entry, jsonrpc::error_object>>
task_registry::async_create(std::shared_ptr<task_link> link, task_plan plan, protocol::era era,
                            protocol::version version) {
    sweep();
    auto ttl = plan.ttl.value_or(options_.ttl);
    ttl = std::clamp(ttl, std::chrono::milliseconds(1000), options_.max_ttl);
    auto const now = clock::now();
    task_entry e;
    e.view.id = store::new_task_id();
    e.view.status = task_status::working;
    e.view.created = now;
    e.view.updated = now;
    e.view.ttl_ms = ttl.count();
    e.view.poll_interval_ms = options_.poll_interval.count();
    e.expires = now + ttl;
    e.owner = scoped(plan.owner);
    e.era = era;
    e.version = version;
    auto record = to_record(e);
    auto const most = options_.max_per_owner;
    auto const target = store_;
    store_call<store::task_store::created> const create = [target, record = std::move(record),
                                                           most](auto done) mutable {
        target->create(std::move(record), most, std::move(done));
    };
    auto made = co_await async_store(create);
    if (!made)
        co_return task_store_failed(made.error());
    if (*made != store::task_store::created::ok)
        co_return protocol::make_error(protocol::errc::internal_error,
                                       "Internal error: this caller already holds " + std::to_string(most) +
                                           " tasks, the most it may; wait for some to expire or cancel them");
    {
        std::lock_guard lock(mutex_);
        if (link)
            running_[e.view.id] = running_task{link, e.expires};
        known_[e.view.id] = known_task{e.owner, e.expires};
    }
    announce(e); // the others learn of the task, so their listens may watch it
    if (store_->shared() && link)
        watch_running(co_await asio::this_coro::executor);
    co_return e;
}

bool task_registry::shared() const noexcept {
    return store_->shared();
}

boost::asio::awaitable<std::optional<task_entry>> task_registry::async_running_record(std::string id) {
    auto found = co_await async_find_record(store_, id);
    if (!found) // out of reach: as good as running, until a look says otherwise
        co_return task_entry{};
    std::optional<task_entry> e;
    if (*found)
        e = from_record(**found);
    if (e && protocol::is_terminal(e->view.status))
        e.reset();
    co_return e;
}

boost::asio::awaitable<std::optional<boost::json::object>>
task_registry::async_stored_answers(std::string id) {
    auto e = co_await async_running_record(std::move(id));
    if (!e)
        co_return std::nullopt;
    co_return std::move(e->answers);
}

void task_registry::watch_running(boost::asio::any_io_executor ex) {
    {
        std::lock_guard lock(mutex_);
        if (watching_)
            return;
        watching_ = true;
    }
    std::weak_ptr<task_registry> weak = weak_from_this();
    asio::co_spawn(ex, async_watch_running(std::move(weak)), asio::detached);
}

boost::asio::awaitable<void> task_registry::async_watch_running(std::weak_ptr<task_registry> weak) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (;;) {
        timer.expires_after(running_check_every);
        co_await timer.async_wait(asio::use_awaitable);
        auto self = weak.lock();
        if (!self)
            co_return;
        bool const more = co_await self->async_check_running();
        if (!more)
            co_return;
    }
}

boost::asio::awaitable<bool> task_registry::async_check_running() {
    // A task cancelled by another process whose announcement missed this one, or whose TTL elapsed, is no
    // longer live in the store: its handler here hears a cancellation.
    sweep();
    std::vector<std::string> ids;
    {
        std::lock_guard lock(mutex_);
        for (auto it = running_.begin(); it != running_.end();)
            it = it->second.link.expired() ? running_.erase(it) : std::next(it);
        if (running_.empty()) {
            watching_ = false;
            co_return false;
        }
        for (auto const& kv : running_)
            ids.push_back(kv.first);
    }
    for (auto const& id : ids) {
        auto const copy = id;
        auto const live = co_await async_running_record(copy);
        if (!live)
            if (auto link = running(id))
                link->cancel();
    }
    co_return true;
}

std::shared_ptr<task_link> task_registry::running(std::string const& id) {
    std::lock_guard lock(mutex_);
    auto it = running_.find(id);
    if (it == running_.end())
        return nullptr;
    auto link = it->second.link.lock();
    if (!link)
        running_.erase(it);
    return link;
}

boost::asio::awaitable<boost::system::result<std::optional<task_entry>, jsonrpc::error_object>>
task_registry::async_find(std::string id, std::string owner) {
    auto found = co_await async_find_record(store_, id);
    if (!found)
        co_return task_store_failed(found.error());
    std::optional<task_entry> entry;
    if (*found && (*found)->owner == owner)
        entry = from_record(**found);
    if (!entry || !entry->orphaned)
        co_return entry;
    // The process running it ended: nothing will finish it, so it fails now rather than at its TTL.
    std::function<bool(task_entry&)> const fail_orphan = [](task_entry& t) {
        if (!t.orphaned)
            return false;
        t.view.status = task_status::failed;
        t.error = protocol::make_error(protocol::errc::internal_error,
                                       "Internal error: the server process running this task ended before "
                                       "it finished");
        t.view.status_message = t.error->message;
        t.input_requests.clear();
        t.answers.clear();
        return true;
    };
    auto failed = co_await async_change(id, fail_orphan);
    if (!failed)
        co_return failed.error();
    if (*failed) {
        changed(**failed);
        co_return std::move(*failed);
    }
    auto again = co_await async_find_record(store_, id); // another reader failed it first
    if (!again)
        co_return task_store_failed(again.error());
    entry.reset();
    if (*again && (*again)->owner == owner)
        entry = from_record(**again);
    co_return entry;
}

boost::asio::awaitable<boost::system::result<std::optional<task_entry>, jsonrpc::error_object>>
task_registry::async_change(std::string id, std::function<bool(task_entry&)> change) {
    auto const target = store_;
    store::task_store::change on_record =
        [change = std::move(change)](store::task_record const& current) -> std::optional<store::task_record> {
        auto e = from_record(current);
        if (!e || protocol::is_terminal(e->view.status))
            return std::nullopt;
        auto const before = e->view.updated;
        if (!change(*e))
            return std::nullopt;
        e->view.updated = std::max(clock::now(), before);
        return to_record(*e);
    };
    store_call<std::optional<store::task_record>> const update = [target, id, on_record](auto done) {
        target->update(id, on_record, std::move(done));
    };
    auto changed_record = co_await async_store(update);
    if (!changed_record)
        co_return task_store_failed(changed_record.error());
    std::optional<task_entry> entry;
    if (*changed_record)
        entry = from_record(**changed_record);
    co_return entry;
}

void task_registry::changed(task_entry const& e) {
    apply(e, true);
    announce(e);
}

void task_registry::announce(task_entry const& e) {
    if (!store_->shared() || !options_.bus)
        return;
    auto record = to_record(e);
    boost::json::object note{{"id", record.id},
                             {"owner", record.owner},
                             {"expires", ms_since_epoch(record.expires)},
                             {"body", record.body}};
    options_.bus->publish(options_.topic, "C " + origin_ + ' ' + boost::json::serialize(note));
}

void task_registry::announce_answers(std::string const& id, boost::json::object const& answers) {
    if (!store_->shared() || !options_.bus)
        return;
    boost::json::object note{{"id", id}, {"answers", answers}};
    options_.bus->publish(options_.topic, "D " + origin_ + ' ' + boost::json::serialize(note));
}

void task_registry::on_announcement(std::string_view payload) {
    // "C ORIGIN {id, owner, expires, body}": a task changed; "D ORIGIN {id, answers}": answers to a task's
    // input requests. This process's own were applied as they were made.
    if (payload.size() < 3 || payload[1] != ' ')
        return;
    auto const kind = payload[0];
    auto const rest = payload.substr(2);
    auto const space = rest.find(' ');
    if (space == std::string_view::npos || rest.substr(0, space) == origin_)
        return;
    boost::system::error_code ec;
    auto parsed = boost::json::parse(rest.substr(space + 1), ec);
    if (ec || !parsed.is_object())
        return;
    auto const& note = parsed.get_object();
    auto const* id = note.if_contains("id");
    if (!id || !id->is_string())
        return;
    if (kind == 'D') {
        auto const* answers = note.if_contains("answers");
        if (auto link = running(std::string(id->get_string())); link && answers && answers->is_object())
            link->deliver(answers->get_object());
        return;
    }
    auto const* owner = note.if_contains("owner");
    auto const* expires = note.if_contains("expires");
    auto const* body = note.if_contains("body");
    if (kind != 'C' || !owner || !owner->is_string() || !expires || !expires->is_int64() || !body ||
        !body->is_string())
        return;
    store::task_record record{.id = std::string(id->get_string()),
                              .owner = std::string(owner->get_string()),
                              .body = std::string(body->get_string()),
                              .expires = clock::time_point(std::chrono::duration_cast<clock::duration>(
                                  std::chrono::milliseconds(expires->get_int64())))};
    if (auto e = from_record(record))
        apply(*e, false);
}

void task_registry::apply(task_entry const& e, bool made_here) {
    {
        std::lock_guard lock(mutex_);
        known_[e.view.id] = known_task{e.owner, e.expires};
    }
    if (auto link = running(e.view.id)) {
        // Cancelled by a tasks/cancel another process took: the handler here hears it.
        if (!made_here && e.view.status == task_status::cancelled)
            link->cancel();
        link->changed(e);
    }
    if (e.era == protocol::era::modern) {
        std::vector<std::shared_ptr<task_watcher>> watching;
        {
            std::lock_guard lock(mutex_);
            auto [first, last] = watchers_.equal_range(e.view.id);
            for (auto it = first; it != last;) {
                auto w = it->second.w.lock();
                if (!w) {
                    it = watchers_.erase(it);
                    continue;
                }
                if (it->second.owner == e.owner)
                    watching.push_back(std::move(w));
                ++it;
            }
        }
        if (!watching.empty()) {
            auto const detailed = detailed_task(e);
            for (auto const& w : watching)
                (*w)(detailed);
        }
    }
    if (!protocol::is_terminal(e.view.status))
        return;
    std::vector<std::shared_ptr<wake_signal>> waiting;
    {
        std::lock_guard lock(mutex_);
        auto [first, last] = result_waiters_.equal_range(e.view.id);
        for (auto it = first; it != last; ++it)
            if (auto w = it->second.lock())
                waiting.push_back(std::move(w));
    }
    for (auto& w : waiting)
        w->notify();
}

boost::asio::awaitable<void> task_registry::async_complete(std::string id, answer_result outcome) {
    std::function<bool(task_entry&)> const store_outcome = [&outcome](task_entry& e) {
        if (!outcome) {
            e.view.status = task_status::failed;
            e.error = outcome.error();
            if (e.view.status_message.empty())
                e.view.status_message = outcome.error().message;
        } else {
            auto result = outcome->result; // a copy: the change may be tried again
            auto const* rt = result.if_contains("resultType");
            if (rt && rt->is_string() && rt->get_string() != "complete") {
                // Only a run that ended as a request can end in input_required; a task never does.
                e.view.status = task_status::failed;
                e.error = protocol::internal_error();
            } else {
                protocol::shape_result(
                    result, {.era = e.era, .version = e.version, .method = protocol::method_id::tools_call});
                // A 2025-11-25 source's related-task key (a gateway's upstream) is no part of the result: the
                // extension forbids it inline, and tasks/result adds this task's own.
                if (auto* meta = result.if_contains("_meta"); meta && meta->is_object()) {
                    meta->get_object().erase(protocol::related_task_key);
                    if (meta->get_object().empty())
                        result.erase("_meta");
                }
                auto const* is_error = result.if_contains("isError");
                bool const tool_error = is_error && is_error->is_bool() && is_error->get_bool();
                // A tool error is a completed task in the extension, a failed one in 2025-11-25 (whose
                // tasks/result still returns the result).
                e.view.status = tool_error && e.era == protocol::era::legacy ? task_status::failed
                                                                             : task_status::completed;
                e.view.status_message.clear(); // the last progress note says nothing of the outcome
                e.result = std::move(result);
            }
        }
        e.input_requests.clear();
        e.answers.clear();
        return true;
    };
    auto changed_entry = co_await async_change(id, store_outcome);
    if (changed_entry && *changed_entry)
        changed(**changed_entry); // while the link is still found: a 2025-11-25 session hears the end
    std::lock_guard lock(mutex_);
    running_.erase(id);
}

boost::asio::awaitable<void> task_registry::async_move(std::string id, protocol::task_status to) {
    std::function<bool(task_entry&)> const move_to = [to](task_entry& t) {
        if (!protocol::may_move(t.view.status, to))
            return false;
        t.view.status = to;
        if (to != task_status::input_required)
            t.input_requests.clear();
        return true;
    };
    auto e = co_await async_change(id, move_to);
    if (e && *e)
        changed(**e);
}

boost::asio::awaitable<void> task_registry::async_set_message(std::string id, std::string message) {
    std::function<bool(task_entry&)> const set_message = [&message](task_entry& t) {
        if (t.view.status_message == message)
            return false;
        t.view.status_message = message;
        return true;
    };
    auto e = co_await async_change(id, set_message);
    if (e && *e)
        changed(**e);
}

boost::asio::awaitable<void> task_registry::async_ask(std::string id, boost::json::object questions) {
    std::function<bool(task_entry&)> const add_questions = [&questions](task_entry& t) {
        for (auto const& kv : questions)
            t.input_requests[kv.key()] = kv.value();
        t.view.status = task_status::input_required;
        return true;
    };
    auto e = co_await async_change(id, add_questions);
    if (e && *e)
        changed(**e);
}

bool task_registry::may_watch(std::string const& id, std::string const& owner) {
    std::lock_guard lock(mutex_);
    if (auto it = known_.find(id); it != known_.end())
        return it->second.owner == scoped(owner) && it->second.expires > clock::now();
    // With a shared store, another process may have made it a moment ago, its announcement still on the
    // way: the id is taken, and its changes reach the listen only if they are the caller's (watch).
    bool const ours = id.size() == 32 && std::all_of(id.begin(), id.end(), [](char c) {
                          return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                      });
    return store_->shared() && ours;
}

std::shared_ptr<void> task_registry::watch(std::string const& id, std::string owner, task_watcher w) {
    auto held = std::make_shared<task_watcher>(std::move(w));
    std::lock_guard lock(mutex_);
    watchers_.emplace(id, watcher{scoped(owner), held});
    return held;
}
void task_registry::sweep() {
    // Tasks whose TTL elapsed while their handler runs here: the handler hears a cancellation. The store
    // forgets the records itself.
    auto const now = std::chrono::steady_clock::now();
    std::vector<std::shared_ptr<task_link>> expired;
    {
        std::lock_guard lock(mutex_);
        if (now - swept_ < std::chrono::seconds(1))
            return;
        swept_ = now;
        auto const wall = clock::now();
        for (auto it = running_.begin(); it != running_.end();) {
            auto link = it->second.link.lock();
            if (link && it->second.expires > wall) {
                ++it;
                continue;
            }
            watchers_.erase(it->first);
            if (link)
                expired.push_back(std::move(link));
            it = running_.erase(it);
        }
        for (auto it = known_.begin(); it != known_.end();)
            it = it->second.expires <= wall ? known_.erase(it) : std::next(it);
    }
    for (auto& link : expired)
        link->cancel();
}

} // namespace duet::server::detail
