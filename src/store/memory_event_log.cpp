#include "memory_event_log.hpp"

#include <iterator>
#include <utility>

namespace duet::store {

void memory_event_log::append(std::string data) {
    log_.push_back({++last_seq_, std::move(data)});
    while (log_.size() > limit_)
        log_.pop_front();
}

void memory_event_log::publish(std::string data) {
    std::function<void()> wake;
    {
        std::lock_guard lock(mutex_);
        if (complete_)
            return;
        append(std::move(data));
        wake = wake_;
    }
    if (wake)
        wake();
}

void memory_event_log::complete(std::optional<std::string> last) {
    std::function<void()> wake;
    {
        std::lock_guard lock(mutex_);
        if (complete_)
            return;
        if (last)
            append(std::move(*last));
        complete_ = true;
        wake = wake_;
    }
    if (wake)
        wake();
}

bool memory_event_log::is_complete() const {
    std::lock_guard lock(mutex_);
    return complete_;
}

std::vector<event_log::event> memory_event_log::events_after(std::uint64_t seq) const {
    std::lock_guard lock(mutex_);
    std::vector<event> out;
    for (auto const& e : log_)
        if (e.seq > seq)
            out.push_back(e);
    return out;
}

std::vector<event_log::event> memory_event_log::take_events() {
    std::lock_guard lock(mutex_);
    std::vector<event> out(std::make_move_iterator(log_.begin()), std::make_move_iterator(log_.end()));
    log_.clear();
    return out;
}

std::uint64_t memory_event_log::last_seq() const {
    std::lock_guard lock(mutex_);
    return last_seq_;
}

std::uint64_t memory_event_log::attach(std::function<void()> wake, bool take_over) {
    std::function<void()> previous;
    std::uint64_t token = 0;
    {
        std::lock_guard lock(mutex_);
        if (reader_ != 0 && !take_over)
            return 0;
        previous = std::move(wake_);
        token = reader_ = next_reader_++;
        wake_ = std::move(wake);
    }
    if (previous)
        previous(); // the superseded reader wakes, finds itself detached, and ends
    return token;
}

void memory_event_log::detach(std::uint64_t token) {
    std::lock_guard lock(mutex_);
    if (reader_ != token)
        return;
    reader_ = 0;
    wake_ = nullptr;
}

bool memory_event_log::attached(std::uint64_t token) const {
    std::lock_guard lock(mutex_);
    return token != 0 && reader_ == token;
}

bool memory_event_log::has_reader() const {
    std::lock_guard lock(mutex_);
    return reader_ != 0;
}

void memory_event_log::wake() const {
    std::function<void()> wake;
    {
        std::lock_guard lock(mutex_);
        wake = wake_;
    }
    if (wake)
        wake();
}

void memory_event_log::request_close() {
    {
        std::lock_guard lock(mutex_);
        close_requested_ = true;
    }
    wake();
}

bool memory_event_log::take_close_request() {
    std::lock_guard lock(mutex_);
    return std::exchange(close_requested_, false);
}

} // namespace duet::store
