// Newline-delimited lines out of a byte stream (DIGEST §10), for both ends of stdio: the server's reader of
// its stdin (src/transport/stdio.cpp) and the client's reader of its child's stdout
// (src/client/stdio_transport.cpp). Pure: the caller reads into space() however it likes and tells commit()
// how many bytes came; what an oversized line or the end of input means is the caller's decision.
//
// One buffer, read into directly: a line that one read brings whole is handed on as a view into it, never
// copied; each byte is searched once (memchr from where the last search stopped); an unfinished line stays
// where it is until the buffer runs short of room. Not thread-safe; one per stream.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

namespace duet::support {

class line_splitter {
public:
    /// Lines of up to `max_line` bytes (counted before the newline, a trailing '\r' included) are handed on.
    /// The buffer starts at `first_buffer` bytes and doubles while an unfinished line fills it, up to
    /// max_line + 1 bytes.
    line_splitter(std::size_t max_line, std::size_t first_buffer);

    /// Where the next read goes: never empty. Valid until the next commit().
    [[nodiscard]] std::span<char> space() {
        // Less than half the buffer free (rounded up: a buffer of one byte that is full has none).
        if (2 * (buffer_.size() - end_) < buffer_.size())
            make_room();
        return {buffer_.data() + end_, buffer_.size() - end_};
    }

    /// `n` bytes were read into space(). Hands on, in order, every line they complete: `on_line(view)` with
    /// the line's bytes less a trailing '\r' (an empty line is dropped; the view is valid during the call),
    /// `on_oversized()` once for a line longer than max_line, whose bytes are skipped up to its newline. A
    /// line is reported oversized as soon as more than max_line of its bytes have come, newline or not.
    template<class OnLine, class OnOversized>
    void commit(std::size_t n, OnLine&& on_line, OnOversized&& on_oversized) {
        end_ += n;
        char* const base = buffer_.data();
        if (discarding_) {
            auto const* nl = static_cast<char const*>(std::memchr(base + scanned_, '\n', end_ - scanned_));
            if (!nl) {
                begin_ = scanned_ = end_ = 0;
                return;
            }
            begin_ = scanned_ = static_cast<std::size_t>(nl - base) + 1;
            discarding_ = false;
        }
        while (auto const* nl =
                   static_cast<char const*>(std::memchr(base + scanned_, '\n', end_ - scanned_))) {
            std::string_view line(base + begin_, static_cast<std::size_t>(nl - (base + begin_)));
            begin_ = scanned_ = static_cast<std::size_t>(nl - base) + 1;
            if (line.size() > max_line_) {
                on_oversized();
                continue;
            }
            if (!line.empty() && line.back() == '\r')
                line.remove_suffix(1);
            if (!line.empty())
                on_line(line);
        }
        if (begin_ == end_) {
            begin_ = scanned_ = end_ = 0;
            return;
        }
        scanned_ = end_;
        if (end_ - begin_ > max_line_) {
            // Every byte held belongs to the oversized line: drop them and skip the rest up to its newline.
            discarding_ = true;
            begin_ = scanned_ = end_ = 0;
            on_oversized();
        }
    }

    /// The bytes of the line no newline has ended yet, exactly as they came (a trailing '\r' kept); empty
    /// while an oversized line is being skipped. At end of input it is what the stream's last line was.
    [[nodiscard]] std::string_view unfinished() const noexcept {
        return {buffer_.data() + begin_, end_ - begin_};
    }

private:
    // Moves the unfinished line to the front when that frees room; grows the buffer when the line fills it.
    void make_room();

    std::size_t max_line_;
    std::vector<char> buffer_;
    std::size_t begin_ = 0;   ///< the first byte of the line not handed on yet
    std::size_t scanned_ = 0; ///< [begin_, scanned_) holds no newline
    std::size_t end_ = 0;     ///< the end of what was read
    bool discarding_ = false; ///< skipping an oversized line up to its newline
};

} // namespace duet::support
