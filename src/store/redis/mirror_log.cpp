#include "mirror_log.hpp"

#include <iterator>
#include <optional>
#include <utility>

namespace duet::store::redis {

void mirror_log::publish(std::string data) {
    {
        std::lock_guard lock(mutex_);
        if (complete_ || completing_)
            return;
    }
    if (auto out = out_.lock())
        out->append(number_, 'd', std::move(data));
}

void mirror_log::complete(std::optional<std::string> last) {
    {
        std::lock_guard lock(mutex_);
        if (complete_ || completing_)
            return;
        completing_ = true;
    }
    if (auto out = out_.lock())
        out->append(number_, last ? 'f' : 'n', last ? std::move(*last) : std::string());
}

bool mirror_log::is_complete() const {
    std::lock_guard lock(mutex_);
    return complete_;
}

std::vector<event_log::event> mirror_log::events_after(std::uint64_t seq) const {
    std::lock_guard lock(mutex_);
    std::vector<event> out;
    for (auto it = events_.upper_bound(seq); it != events_.end(); ++it)
        out.push_back({it->first, it->second});
    return out;
}

std::vector<event_log::event> mirror_log::take_events() {
    std::lock_guard lock(mutex_);
    std::vector<event> out;
    for (auto& [seq, data] : events_)
        out.push_back({seq, std::move(data)});
    events_.clear();
    return out;
}

std::uint64_t mirror_log::last_seq() const {
    std::lock_guard lock(mutex_);
    return last_event_;
}

std::uint64_t mirror_log::attach(std::function<void()> wake, bool take_over) {
    std::function<void()> previous;
    std::uint64_t token = 0;
    {
        std::lock_guard lock(mutex_);
        if ((reader_ != 0 || !remote_reader_.empty()) && !take_over)
            return 0;
        previous = std::move(wake_);
        token = reader_ = next_reader_++;
        wake_ = std::move(wake);
        remote_reader_.clear();
    }
    if (previous)
        previous(); // the superseded reader wakes, finds itself detached, and ends
    if (auto out = out_.lock())
        out->note("A" + std::to_string(number_) + ' ' + out->tag() + (take_over ? " 1" : " 0"));
    return token;
}

void mirror_log::detach(std::uint64_t token) {
    {
        std::lock_guard lock(mutex_);
        if (reader_ != token)
            return;
        reader_ = 0;
        wake_ = nullptr;
    }
    if (auto out = out_.lock())
        out->note("D" + std::to_string(number_) + ' ' + out->tag());
}

bool mirror_log::attached(std::uint64_t token) const {
    std::lock_guard lock(mutex_);
    return token != 0 && reader_ == token;
}

bool mirror_log::has_reader() const {
    std::lock_guard lock(mutex_);
    return reader_ != 0 || !remote_reader_.empty();
}

void mirror_log::wake() const {
    std::function<void()> wake;
    {
        std::lock_guard lock(mutex_);
        wake = wake_;
    }
    if (wake)
        wake();
}

void mirror_log::request_close() {
    // Wherever the reader is: the note reaches every process, this one included.
    if (auto out = out_.lock())
        out->note("C" + std::to_string(number_));
}

bool mirror_log::take_close_request() {
    std::lock_guard lock(mutex_);
    return std::exchange(close_requested_, false);
}

void mirror_log::take(std::uint64_t seq, char kind, std::string data, bool noted) {
    std::optional<std::uint64_t> missing_after; // a note skipped entries: read them
    {
        std::lock_guard lock(mutex_);
        bool const trimmed = events_.size() >= limit_ && !events_.empty() && seq < events_.begin()->first;
        if (seq == 0 || events_.contains(seq) || trimmed || (seq <= seen_ && kind != 'd' && kind != 'f'))
            return;
        if (noted && seq > seen_ + 1)
            missing_after = seen_;
        seen_ = std::max(seen_, seq);
        if (kind == 'd' || kind == 'f') {
            events_.emplace(seq, std::move(data));
            last_event_ = std::max(last_event_, seq);
            while (events_.size() > limit_)
                events_.erase(events_.begin());
        }
        if (kind == 'f' || kind == 'n')
            complete_ = true;
    }
    if (missing_after)
        if (auto out = out_.lock())
            out->refill(number_, *missing_after);
    wake();
}

void mirror_log::reader_attached(std::string const& tag, bool take_over) {
    std::function<void()> superseded;
    {
        std::lock_guard lock(mutex_);
        if (auto out = out_.lock(); out && tag == out->tag())
            return; // our own
        remote_reader_ = tag;
        if (take_over && reader_ != 0) {
            reader_ = 0;
            superseded = std::move(wake_);
            wake_ = nullptr;
        }
    }
    if (superseded)
        superseded();
}

void mirror_log::reader_detached(std::string const& tag) {
    std::lock_guard lock(mutex_);
    if (remote_reader_ == tag)
        remote_reader_.clear();
}

void mirror_log::set_origin(std::string owner, std::string on_loss) {
    std::lock_guard lock(mutex_);
    owner_ = std::move(owner);
    on_loss_ = std::move(on_loss);
}

std::optional<std::pair<std::string, std::string>> mirror_log::loss_candidate(std::string const& me) {
    std::lock_guard lock(mutex_);
    if (reader_ == 0 || complete_ || loss_reported_ || owner_.empty() || owner_ == me || on_loss_.empty())
        return std::nullopt;
    return std::pair{owner_, on_loss_};
}

void mirror_log::loss_reported() {
    std::lock_guard lock(mutex_);
    loss_reported_ = true;
}

void mirror_log::close_requested() {
    {
        std::lock_guard lock(mutex_);
        if (reader_ == 0)
            return; // the reader is elsewhere
        close_requested_ = true;
    }
    wake();
}

} // namespace duet::store::redis
