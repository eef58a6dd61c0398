#include "task_registry.hpp"

#include <duet/log/log.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/protocol/shaping.hpp>
#include <duet/store/memory.hpp>

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

// How long a waiter sleeps at most before it looks again (named: no temporary goes to a coroutine).
constexpr std::chrono::steady_clock::duration recheck_every = std::chrono::seconds(1);
// How often a process sharing its tasks looks whether those running here are still live in the store.
constexpr std::chrono::seconds running_check_every{2};
// How often a second promotion looks whether the first has settled (a store round trip or two).
constexpr std::chrono::milliseconds promotion_settling{5};

boost::asio::awaitable<bool> wake_signal::async_wait_for(std::chrono::steady_clock::duration timeout) {
    using namespace asio::experimental::awaitable_operators;
    asio::steady_timer timer(co_await asio::this_coro::executor, timeout);
    auto woken = co_await (channel_.async_receive(asio::as_tuple(asio::use_awaitable)) ||
                           timer.async_wait(asio::as_tuple(asio::use_awaitable)));
    co_return woken.index() == 0;
}

// ---- task_link
// ---------------------------------------------------------------------------------------------

task_link::task_link(std::shared_ptr<task_registry> registry, task_plan plan, protocol::era era,
                     protocol::version version, std::weak_ptr<request_state> state,
                     boost::asio::any_io_executor dispatcher)
    : registry_(std::move(registry)), plan_(std::move(plan)), era_(era), version_(version),
      state_(std::move(state)), dispatcher_(dispatcher), dispatcher_wake_(std::move(dispatcher)) {}

boost::asio::awaitable<boost::system::result<void, jsonrpc::error_object>> task_link::async_promote() {
    for (;;) { // the other side (dispatcher, handler) making it a task settles it for both
        {
            std::lock_guard lock(mutex_);
            if (phase_ != phase::promoting)
                break;
        }
        asio::steady_timer pause(co_await asio::this_coro::executor, promotion_settling);
        co_await pause.async_wait(asio::use_awaitable);
    }
    {
        std::lock_guard lock(mutex_);
        if (phase_ != phase::request)
            co_return boost::system::result<void, jsonrpc::error_object>{};
        if (auto st = state_.lock(); st && st->cancelled.load())
            co_return boost::system::result<void, jsonrpc::error_object>{}; // nobody will hear of the task
        phase_ = phase::promoting; // the handler's end, or its rounds, wait for the outcome
    }
    // The task exists in the store before the request is answered with it, so a tasks/get right after
    // finds it (SEP-2663 §Task Creation).
    auto self = shared_from_this();
    auto made = co_await registry_->async_create(self, plan_, era_, version_);
    std::shared_ptr<wake_signal> wake;
    std::optional<answer_result> ended;
    {
        std::lock_guard lock(mutex_);
        wake = input_wake_;
        if (made) {
            phase_ = phase::task;
            created_ = made->view;
            if (auto st = state_.lock(); st && era_ == protocol::era::legacy)
                st->detached = true; // its messages now go on the session's own stream
            if (outcome_) {          // the handler ended meanwhile: the task stores its outcome
                ended = std::move(outcome_);
                outcome_.reset();
            }
        } else {
            phase_ = outcome_ ? phase::answering : phase::request;
        }
    }
    if (ended)
        write({.what = task_write::kind::complete, .outcome = std::move(ended)});
    if (!made || ended)
        dispatcher_wake_.notify();
    if (wake)
        wake->notify(); // a handler waiting to commit to its rounds
    if (!made)
        co_return made.error();
    co_return boost::system::result<void, jsonrpc::error_object>{};
}

std::optional<protocol::task_view> task_link::created() const {
    std::lock_guard lock(mutex_);
    return created_;
}

std::optional<answer_result> task_link::take_outcome() {
    std::lock_guard lock(mutex_);
    if (phase_ != phase::answering || !outcome_)
        return std::nullopt;
    auto out = std::move(outcome_);
    outcome_.reset();
    return out;
}

void task_link::start(boost::asio::any_io_executor handler) {
    std::lock_guard lock(mutex_);
    input_wake_ = std::make_shared<wake_signal>(std::move(handler));
}

void task_link::finish(answer_result outcome) {
    std::unique_lock lock(mutex_);
    switch (phase_) {
    case phase::task:
        lock.unlock();
        write({.what = task_write::kind::complete, .outcome = std::move(outcome)});
        return;
    case phase::promoting:
        outcome_ = std::move(outcome); // async_promote settles where it goes
        return;
    case phase::request:
    case phase::answering:
        phase_ = phase::answering;
        outcome_ = std::move(outcome);
        lock.unlock();
        dispatcher_wake_.notify();
        return;
    }
}

std::optional<std::string> task_link::task_id() const {
    std::lock_guard lock(mutex_);
    if (!created_)
        return std::nullopt;
    return created_->id;
}

boost::asio::awaitable<bool> task_link::async_commit_to_rounds() {
    for (;;) {
        std::shared_ptr<wake_signal> wake;
        {
            std::lock_guard lock(mutex_);
            if (phase_ == phase::task)
                co_return false;
            if (phase_ != phase::promoting) {
                phase_ = phase::answering;
                co_return true;
            }
            wake = input_wake_;
        }
        if (!wake)
            wake = std::make_shared<wake_signal>(co_await asio::this_coro::executor);
        (void)co_await wake->async_wait_for(recheck_every);
    }
}

boost::asio::awaitable<std::vector<peer_result>>
task_link::async_task_inputs(std::vector<input_request> requests, boost::json::object const& client_caps) {
    std::vector<peer_result> results(
        requests.size(), peer_failure{make_error_code(peer_errc::connection_closed), std::nullopt});
    boost::json::object questions;
    std::vector<std::size_t> waiting;
    {
        std::lock_guard lock(mutex_);
        for (std::size_t i = 0; i < requests.size(); ++i) {
            auto& r = requests[i];
            if (auto c = protocol::capability_needed(r.method, r.params);
                c && !protocol::declares(client_caps, *c)) {
                results[i] = peer_failure{make_error_code(peer_errc::capability_missing), std::nullopt};
                continue;
            }
            if (auto const* answer = answers_.if_contains(r.key)) {
                results[i] = *answer;
                continue;
            }
            boost::json::object ask{{"method", r.method}};
            if (!r.params.is_null())
                ask["params"] = r.params;
            questions[r.key] = std::move(ask);
            waiting.push_back(i);
        }
    }
    if (waiting.empty())
        co_return results;
    write({.what = task_write::kind::ask, .questions = std::move(questions)});
    auto const id = task_id().value_or("");
    for (;;) {
        std::shared_ptr<wake_signal> wake;
        {
            std::lock_guard lock(mutex_);
            bool const all = std::all_of(waiting.begin(), waiting.end(),
                                         [&](std::size_t i) { return answers_.contains(requests[i].key); });
            if (all || cancelled_) {
                for (auto i : waiting)
                    if (auto const* answer = answers_.if_contains(requests[i].key))
                        results[i] = *answer;
                break;
            }
            wake = input_wake_;
        }
        // A wake may be missed only by a change that lands between the check and the wait: the second's
        // timeout bounds that, as it bounds a task that expired while waiting. Answers another process took
        // are announced; should the announcement miss this one, the task's record has them.
        bool const woken = co_await wake->async_wait_for(recheck_every);
        if (!woken && registry_->shared()) {
            auto const stored = co_await registry_->async_stored_answers(id);
            if (!stored)
                cancel(); // cancelled elsewhere, or expired: nothing will answer
            else if (!stored->empty())
                deliver(*stored);
        }
    }
    co_return results;
}

void task_link::note_status(std::string message) {
    if (task_id())
        write({.what = task_write::kind::message, .message = std::move(message)});
}

void task_link::note_waiting_for_client(bool waiting) {
    if (task_id())
        write({.what = task_write::kind::status,
               .status = waiting ? task_status::input_required : task_status::working});
}

void task_link::write(task_write w) {
    {
        std::lock_guard lock(mutex_);
        writes_.push_back(std::move(w));
        if (writing_)
            return;
        writing_ = true;
    }
    // The request's state lives until its writes are done: a 2025-11-25 session hears the last of them
    // through it, though the handler has ended.
    auto self = shared_from_this();
    auto state = state_.lock();
    asio::co_spawn(dispatcher_, async_write_all(std::move(self), std::move(state)), asio::detached);
}

boost::asio::awaitable<void> task_link::async_write_all(std::shared_ptr<task_link> self,
                                                        std::shared_ptr<request_state> /*kept alive*/) {
    auto const id = self->task_id().value_or("");
    for (;;) {
        std::optional<task_write> next;
        {
            std::lock_guard lock(self->mutex_);
            if (self->writes_.empty()) {
                self->writing_ = false;
                break;
            }
            next = std::move(self->writes_.front());
            self->writes_.pop_front();
        }
        auto& w = *next;
        switch (w.what) {
        case task_write::kind::message:
            co_await self->registry_->async_set_message(id, std::move(w.message));
            break;
        case task_write::kind::status:
            co_await self->registry_->async_move(id, w.status);
            break;
        case task_write::kind::ask:
            co_await self->registry_->async_ask(id, std::move(w.questions));
            break;
        case task_write::kind::complete:
            co_await self->registry_->async_complete(id, std::move(*w.outcome));
            break;
        }
    }
}

void task_link::deliver(boost::json::object const& answers) {
    std::shared_ptr<wake_signal> wake;
    {
        std::lock_guard lock(mutex_);
        for (auto const& kv : answers)
            answers_[kv.key()] = kv.value();
        wake = input_wake_;
    }
    if (wake)
        wake->notify();
}

void task_link::cancel() {
    std::shared_ptr<wake_signal> wake;
    {
        std::lock_guard lock(mutex_);
        cancelled_ = true;
        wake = input_wake_;
    }
    if (auto st = state_.lock())
        st->cancelled = true;
    if (wake)
        wake->notify();
}

void task_link::changed(task_entry const& e) {
    if (era_ != protocol::era::legacy)
        return;
    auto st = state_.lock();
    auto host = st ? st->host.lock() : nullptr;
    if (!host)
        return;
    // The status notification goes even after the handler saw a cancellation: it reports exactly that.
    bool const was_cancelled = st->cancelled.exchange(false);
    host->notify(*st, jsonrpc::notification{"notifications/tasks/status", protocol::task_json(e.view, era_)});
    if (was_cancelled)
        st->cancelled = true;
}

// ---- task_registry
// -----------------------------------------------------------------------------------------

namespace {

protocol::error_object not_found(std::string_view id) {
    return protocol::invalid_params("Invalid params: no task \"" + std::string(id) +
                                    "\" (it never existed, belongs to another caller, or has expired)");
}

protocol::error_object store_failed(std::string const& why) {
    log::write(log::event{.severity = log::level::error, .name = "task_store_failed", .message = why});
    return protocol::internal_error();
}

template<class T>
using store_result = boost::system::result<T, store::task_store::failure>;

// Runs one store operation (`start` hands it the callback) and resumes the awaiting coroutine on its own
// executor with the answer: a shared store answers on a thread of its own. Not a coroutine itself, so that
// nothing it is given lives in a frame GCC 12 might destroy twice.
template<class T>
using store_call = std::function<void(std::function<void(store_result<T>)>)>;

template<class T>
boost::asio::awaitable<store_result<T>> async_store(store_call<T> start) {
    return asio::async_initiate<decltype(asio::use_awaitable), void(store_result<T>)>(
        [](auto handler, store_call<T> begin) {
            auto const ex = asio::get_associated_executor(handler);
            auto held = std::make_shared<decltype(handler)>(std::move(handler));
            begin([ex, held](store_result<T> answer) {
                asio::post(ex, [held, answer = std::move(answer)]() mutable {
                    std::move (*held)(std::move(answer));
                });
            });
        },
        asio::use_awaitable, std::move(start));
}

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
        co_return store_failed(made.error());
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
    auto const target = store_;
    store_call<std::optional<store::task_record>> const find = [target, id](auto done) {
        target->find(id, std::move(done));
    };
    auto found = co_await async_store(find);
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
    auto const target = store_;
    store_call<std::optional<store::task_record>> const find = [target, id](auto done) {
        target->find(id, std::move(done));
    };
    auto found = co_await async_store(find);
    if (!found)
        co_return store_failed(found.error());
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
    auto again = co_await async_store(find); // another reader failed it first
    if (!again)
        co_return store_failed(again.error());
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
        co_return store_failed(changed_record.error());
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

boost::asio::awaitable<answer_result> task_registry::async_answer(protocol::method_id method,
                                                                  boost::json::value params,
                                                                  std::string owner, protocol::era era) {
    using protocol::method_id;
    owner = scoped(owner);
    if (method == method_id::tasks_list)
        co_return co_await async_list(std::move(params), std::move(owner));
    auto read = protocol::task_id_param(params);
    if (!read)
        co_return read.error();
    std::string id(*read);
    switch (method) {
    case method_id::tasks_get:
        co_return co_await async_get(std::move(id), std::move(owner), era);
    case method_id::tasks_update:
        co_return co_await async_update(std::move(id), std::move(params), std::move(owner));
    case method_id::tasks_cancel:
        co_return co_await async_cancel(std::move(id), std::move(owner), era);
    case method_id::tasks_result:
        co_return co_await async_result(std::move(id), std::move(owner));
    default:
        co_return protocol::method_not_found(protocol::info(method).name, "not a tasks method");
    }
}

std::string modern_task_owner(protocol::caller_identity const* c) {
    if (c && c->token)
        return "token:" + c->token->issuer + " " +
               (c->token->subject.empty() ? "client " + c->token->client_id : c->token->subject);
    if (c && !c->tls_subject.empty())
        return "tls:" + c->tls_subject;
    return {};
}

boost::json::object detailed_task(task_entry const& e) {
    auto task = protocol::task_json(e.view, protocol::era::modern);
    switch (e.view.status) {
    case task_status::input_required:
        task["inputRequests"] = e.input_requests;
        break;
    case task_status::completed:
        task["result"] = e.result.value_or(boost::json::object{});
        break;
    case task_status::failed:
        if (e.error) {
            boost::json::object error{{"code", e.error->code}, {"message", e.error->message}};
            if (!e.error->data.is_null())
                error["data"] = e.error->data;
            task["error"] = std::move(error);
        }
        break;
    default:
        break;
    }
    return task;
}

boost::asio::awaitable<answer_result> task_registry::async_get(std::string id, std::string owner,
                                                               protocol::era era) {
    auto e = co_await async_find(id, std::move(owner));
    if (!e)
        co_return e.error();
    if (!*e)
        co_return not_found(id);
    if (era == protocol::era::modern)
        co_return method_answer{detailed_task(**e), {}};
    co_return method_answer{protocol::task_json((*e)->view, era), {}};
}

bool task_registry::known(std::string const& id, std::string const& owner) {
    std::lock_guard lock(mutex_);
    auto it = known_.find(id);
    return it != known_.end() && it->second.owner == scoped(owner) && it->second.expires > clock::now();
}

std::shared_ptr<void> task_registry::watch(std::string const& id, std::string owner, task_watcher w) {
    auto held = std::make_shared<task_watcher>(std::move(w));
    std::lock_guard lock(mutex_);
    watchers_.emplace(id, watcher{scoped(owner), held});
    return held;
}

boost::asio::awaitable<answer_result> task_registry::async_update(std::string id, boost::json::value params,
                                                                  std::string owner) {
    auto const* responses = params.get_object().if_contains("inputResponses");
    if (!responses || !responses->is_object())
        co_return protocol::invalid_params("Invalid params: inputResponses must be an object");
    auto found = co_await async_find(id, owner);
    if (!found)
        co_return found.error();
    if (!*found)
        co_return not_found(id);
    // Answers to what the task asks now are taken; any other key is ignored (SEP-2663 §Task Update
    // Requests). A malformed answer refuses the whole update, so nothing is half applied.
    boost::json::object taken;
    std::optional<protocol::error_object> refused;
    auto const& given = responses->get_object();
    std::function<bool(task_entry&)> const take_answers = [&given, &taken, &refused](task_entry& t) {
        taken.clear(); // the change may be tried again on a fresher record
        refused.reset();
        for (auto const& kv : given) {
            auto const* asked = t.input_requests.if_contains(kv.key());
            if (!asked)
                continue;
            auto const& method = asked->as_object().at("method").as_string();
            if (!protocol::well_formed_input_response(method, kv.value())) {
                refused =
                    protocol::invalid_params("Invalid params: inputResponses[\"" + std::string(kv.key()) +
                                                 "\"] is not a valid result of " + std::string(method),
                                             boost::json::object{{"key", kv.key()}});
                return false;
            }
            taken[kv.key()] = kv.value();
        }
        if (taken.empty())
            return false;
        for (auto const& kv : taken) {
            t.input_requests.erase(kv.key());
            t.answers[kv.key()] = kv.value();
        }
        if (t.input_requests.empty())
            t.view.status = task_status::working;
        return true;
    };
    auto e = co_await async_change(id, take_answers);
    if (refused)
        co_return *refused;
    if (!e)
        co_return e.error();
    if (*e) {
        if (auto link = running(id))
            link->deliver(taken);
        else
            announce_answers(id, taken); // the process running the handler hears them
        changed(**e);
    }
    co_return method_answer{};
}

boost::asio::awaitable<answer_result> task_registry::async_cancel(std::string id, std::string owner,
                                                                  protocol::era era) {
    auto e = co_await async_find(id, owner);
    if (!e)
        co_return e.error();
    if (!*e)
        co_return not_found(id);
    if (protocol::is_terminal((*e)->view.status)) {
        if (auto link = running(id); link && (*e)->view.status == task_status::cancelled)
            link->cancel(); // cancelled elsewhere, and this process had not heard
        // The extension acknowledges any known task (idempotent); 2025-11-25 refuses a finished one.
        if (era == protocol::era::modern)
            co_return method_answer{};
        co_return protocol::invalid_params("Invalid params: task \"" + id + "\" is already " +
                                           std::string(protocol::to_string((*e)->view.status)) +
                                           " and cannot be cancelled");
    }
    std::function<bool(task_entry&)> const mark_cancelled = [](task_entry& t) {
        t.view.status = task_status::cancelled;
        t.view.status_message = "The task was cancelled by request.";
        t.input_requests.clear();
        t.answers.clear();
        return true;
    };
    auto after = co_await async_change(id, mark_cancelled);
    if (!after)
        co_return after.error();
    if (auto link = running(id))
        link->cancel(); // elsewhere, the process running it hears the cancellation (apply)
    std::optional<task_entry> now;
    if (*after) {
        now = std::move(**after);
        changed(*now);
    } else { // it ended between the two looks: what it ended as stands
        auto again = co_await async_find(id, owner);
        if (again && *again)
            now = std::move(**again);
    }
    if (era == protocol::era::modern || !now)
        co_return method_answer{};
    co_return method_answer{protocol::task_json(now->view, era), {}};
}

boost::asio::awaitable<answer_result> task_registry::async_list(boost::json::value params,
                                                                std::string owner) {
    std::string after;
    if (auto const* c = params.get_object().if_contains("cursor"); c && !c->is_null()) {
        if (!c->is_string())
            co_return protocol::invalid_params("Invalid params: cursor must be a string");
        after = c->get_string();
        bool const ours = after.size() == 32 && std::all_of(after.begin(), after.end(), [](char ch) {
                              return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
                          });
        if (!after.empty() && !ours)
            co_return protocol::invalid_params("Invalid params: invalid cursor",
                                               boost::json::object{{"cursor", after}});
    }
    auto const target = store_;
    auto const limit = options_.page_size;
    store_call<store::task_store::page> const list = [target, owner, after, limit](auto done) {
        target->list(owner, after, limit, std::move(done));
    };
    auto page = co_await async_store(list);
    if (!page)
        co_return store_failed(page.error());
    boost::json::array out;
    for (auto const& r : page->records) {
        auto t = from_record(r);
        if (t && t->orphaned) { // fails now, as a tasks/get of it would
            auto const id = r.id;
            auto fresh = co_await async_find(id, owner);
            if (fresh && *fresh)
                t = std::move(**fresh);
        }
        if (t)
            out.push_back(protocol::task_json(t->view, protocol::era::legacy));
    }
    boost::json::object result{{"tasks", std::move(out)}};
    if (page->more && !page->records.empty())
        result["nextCursor"] = page->records.back().id; // ids are opaque and ordered: the last one shown
    co_return method_answer{std::move(result), {}};
}

std::optional<answer_result> task_registry::finished(task_entry const& e) const {
    if (!protocol::is_terminal(e.view.status))
        return std::nullopt;
    if (e.error)
        return *e.error;
    if (!e.result)
        return protocol::invalid_params("Invalid params: task \"" + e.view.id +
                                        "\" was cancelled; it has no result");
    auto result = *e.result;
    auto& meta = result["_meta"];
    if (!meta.is_object())
        meta = boost::json::object{};
    meta.get_object()[protocol::related_task_key] = boost::json::object{{"taskId", e.view.id}};
    return method_answer{std::move(result), {}};
}

boost::asio::awaitable<answer_result> task_registry::async_result(std::string id, std::string owner) {
    auto wake = std::make_shared<wake_signal>(co_await asio::this_coro::executor);
    {
        std::lock_guard lock(mutex_);
        result_waiters_.emplace(id, wake);
    }
    answer_result outcome = protocol::internal_error();
    for (;;) {
        auto e = co_await async_find(id, owner);
        if (!e) {
            outcome = e.error();
            break;
        }
        if (!*e) {
            outcome = not_found(id);
            break;
        }
        if (auto done = finished(**e)) {
            outcome = std::move(*done);
            break;
        }
        // A wake lost between the look and the wait, or an expiry, is caught by the next look.
        (void)co_await wake->async_wait_for(recheck_every);
    }
    {
        std::lock_guard lock(mutex_);
        auto [first, last] = result_waiters_.equal_range(id);
        for (auto it = first; it != last;)
            it =
                it->second.expired() || it->second.lock() == wake ? result_waiters_.erase(it) : std::next(it);
    }
    co_return outcome;
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
