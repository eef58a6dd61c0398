#include "support/line_splitter.hpp"

#include <algorithm>
#include <limits>

namespace duet::support {

line_splitter::line_splitter(std::size_t max_line, std::size_t first_buffer)
    : max_line_(max_line), buffer_(std::max<std::size_t>(1, first_buffer)) {}

void line_splitter::make_room() {
    if (begin_ > 0) {
        std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
        end_ -= begin_;
        scanned_ -= begin_;
        begin_ = 0;
        return;
    }
    if (end_ < buffer_.size())
        return; // a long unfinished line at the front: the rest of the buffer is still room
    // Full of one unfinished line, which commit() has seen is no longer than max_line: it may grow by one
    // byte more at least, so the newline (or the byte that makes it oversized) has somewhere to go.
    auto const cap = max_line_ == std::numeric_limits<std::size_t>::max() ? max_line_ : max_line_ + 1;
    buffer_.resize(std::min(buffer_.size() * 2, cap));
}

} // namespace duet::support
