#include "event_stream.hpp"

#include <charconv>
#include <iterator>
#include <utility>

namespace duet::transport::http {

void event_stream::publish(std::string data) {
    std::function<void()> wake;
    {
        std::lock_guard lock(mutex_);
        if (complete_)
            return;
        log_.push_back({++last_seq_, std::move(data)});
        while (log_.size() > limit_)
            log_.pop_front();
        wake = wake_;
    }
    if (wake)
        wake();
}

void event_stream::complete(std::optional<std::string> last) {
    std::function<void()> wake;
    {
        std::lock_guard lock(mutex_);
        if (complete_)
            return;
        if (last) {
            log_.push_back({++last_seq_, std::move(*last)});
            while (log_.size() > limit_)
                log_.pop_front();
        }
        complete_ = true;
        wake = wake_;
    }
    if (wake)
        wake();
}

bool event_stream::is_complete() const {
    std::lock_guard lock(mutex_);
    return complete_;
}

std::vector<event_stream::event> event_stream::events_after(std::uint64_t seq) const {
    std::lock_guard lock(mutex_);
    std::vector<event> out;
    for (auto const& e : log_)
        if (e.seq > seq)
            out.push_back(e);
    return out;
}

std::vector<event_stream::event> event_stream::take_events() {
    std::lock_guard lock(mutex_);
    std::vector<event> out(std::make_move_iterator(log_.begin()), std::make_move_iterator(log_.end()));
    log_.clear();
    return out;
}

std::uint64_t event_stream::last_seq() const {
    std::lock_guard lock(mutex_);
    return last_seq_;
}

std::uint64_t event_stream::attach(std::function<void()> wake, bool take_over) {
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

void event_stream::detach(std::uint64_t token) {
    std::lock_guard lock(mutex_);
    if (reader_ != token)
        return;
    reader_ = 0;
    wake_ = nullptr;
}

bool event_stream::attached(std::uint64_t token) const {
    std::lock_guard lock(mutex_);
    return token != 0 && reader_ == token;
}

bool event_stream::has_reader() const {
    std::lock_guard lock(mutex_);
    return reader_ != 0;
}

void event_stream::wake() const {
    std::function<void()> wake;
    {
        std::lock_guard lock(mutex_);
        wake = wake_;
    }
    if (wake)
        wake();
}

void event_stream::request_close() {
    {
        std::lock_guard lock(mutex_);
        close_requested_ = true;
    }
    wake();
}

bool event_stream::take_close_request() {
    std::lock_guard lock(mutex_);
    return std::exchange(close_requested_, false);
}

std::string format_event_id(std::uint64_t stream, std::uint64_t seq) {
    return std::to_string(stream) + "-" + std::to_string(seq);
}

std::optional<event_position> parse_event_id(std::string_view id) {
    auto const dash = id.find('-');
    if (dash == std::string_view::npos || dash == 0 || dash + 1 == id.size())
        return std::nullopt;
    auto number = [](std::string_view s) -> std::optional<std::uint64_t> {
        std::uint64_t v = 0;
        auto const [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc{} || end != s.data() + s.size())
            return std::nullopt;
        return v;
    };
    auto const stream = number(id.substr(0, dash));
    auto const seq = number(id.substr(dash + 1));
    if (!stream || !seq)
        return std::nullopt;
    return event_position{*stream, *seq};
}

} // namespace duet::transport::http
