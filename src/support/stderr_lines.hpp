// A child's stderr as lines for our log, bounded in the two ways a misbehaving child could make it costly:
// a line longer than max_line bytes is cut there (the cut marked, its rest skipped up to its newline, so an
// endless line costs one logged line, not memory), and past lines_per_window lines in one window the rest
// are dropped and counted (the count logged as a line of its own when the next window begins, or at the
// end), so a child that writes without end cannot fill the log. Pure: the caller reads the bytes and says
// when they came.
//
//     stderr_lines lines({});
//     lines.feed(bytes, clock::now(), [&](std::string_view l) { log(name + ": " + std::string(l)); });
//     lines.finish([&](std::string_view l) { ... });   // at EOF
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace duet::support {

class stderr_lines {
public:
    using clock = std::chrono::steady_clock;

    struct limits {
        std::size_t max_line = 2048;
        std::size_t lines_per_window = 100;
        std::chrono::milliseconds window = std::chrono::seconds(1);
    };

    explicit stderr_lines(limits l) : limits_(l) {}

    /// Bytes read at `now`: each line they complete (a trailing '\r' and empty lines left out) or cut goes
    /// to `emit(std::string_view)`, unless its window is full.
    template<class Emit>
    void feed(std::string_view bytes, clock::time_point now, Emit&& emit) {
        while (!bytes.empty()) {
            auto const* nl = static_cast<char const*>(std::memchr(bytes.data(), '\n', bytes.size()));
            auto const upto = nl ? static_cast<std::size_t>(nl - bytes.data()) : bytes.size();
            if (!skipping_) {
                auto const room = limits_.max_line - current_.size();
                current_.append(bytes.data(), std::min(upto, room));
                if (upto > room) {
                    current_ += cut_mark;
                    offer(now, emit);
                    skipping_ = true;
                }
            }
            if (!nl)
                return;
            bytes.remove_prefix(upto + 1);
            if (skipping_)
                skipping_ = false;
            else
                offer(now, emit);
        }
    }

    /// The end of the stream: its last line, if it had no newline, and the count of lines dropped.
    template<class Emit>
    void finish(clock::time_point now, Emit&& emit) {
        if (!skipping_)
            offer(now, emit);
        skipping_ = false;
        report_dropped(emit);
    }

    /// What ends a line that was cut.
    static constexpr std::string_view cut_mark = " [cut]";

private:
    template<class Emit>
    void offer(clock::time_point now, Emit& emit) {
        if (!current_.empty() && current_.back() == '\r')
            current_.pop_back();
        if (current_.empty())
            return;
        if (now - window_began_ >= limits_.window) {
            window_began_ = now;
            in_window_ = 0;
            report_dropped(emit);
        }
        if (in_window_ < limits_.lines_per_window) {
            ++in_window_;
            emit(std::string_view(current_));
        } else {
            ++dropped_;
        }
        current_.clear();
    }

    template<class Emit>
    void report_dropped(Emit& emit) {
        if (dropped_ == 0)
            return;
        auto const note = "[" + std::to_string(dropped_) + " more lines dropped: over " +
                          std::to_string(limits_.lines_per_window) + " lines in " +
                          std::to_string(limits_.window.count()) + " ms]";
        dropped_ = 0;
        emit(std::string_view(note));
    }

    limits limits_;
    std::string current_;
    bool skipping_ = false; ///< the rest of a cut line, up to its newline
    clock::time_point window_began_{};
    std::size_t in_window_ = 0;
    std::size_t dropped_ = 0;
};

} // namespace duet::support
