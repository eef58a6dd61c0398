// bench/answer_check.cpp: see answer_check.hpp. The SAX handler below follows the one path the verdict reads
// (top level → "result" → "content"[0] → "text") and notes, for each member on it, how often it was seen and
// whether its value had the expected type and text; every other value is parsed and ignored.
#include "answer_check.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <algorithm>
#include <array>

namespace duet::bench {

namespace {

namespace json = boost::json;

// The members the verdict reads.
enum class slot : unsigned char {
    none,
    document, // the line's one JSON value
    jsonrpc,
    id,
    method,
    result,
    error,
    is_error,
    content,
    first_block, // content[0]
    text,
    count_
};

// What an open container is, on the path the verdict reads.
enum class role : unsigned char { other, top, result, content, first_block };

struct member {
    std::uint8_t seen = 0; // saturates at 2: duplicates are all that matter
    bool ok = false;       // its value had the expected type (and text)
};

class sax {
public:
    static constexpr std::size_t max_object_size = std::size_t(-1);
    static constexpr std::size_t max_array_size = std::size_t(-1);
    static constexpr std::size_t max_key_size = std::size_t(-1);
    static constexpr std::size_t max_string_size = std::size_t(-1);

    explicit sax(std::string expected_text) : expected_text_(std::move(expected_text)) {}

    void reset() {
        members_ = {};
        id_ = 0;
        id_text_ = {};
        depth_ = 0;
        key_ = slot::none;
        key_length_ = 0;
        in_string_ = false;
    }

    member const& operator[](slot s) const { return members_[std::size_t(s)]; }
    std::uint64_t id() const { return id_; }
    // The id's digits as they lie in the line (empty unless one whole integer id was read).
    std::string_view id_text() const { return id_text_; }

    bool on_document_begin(json::error_code&) { return true; }
    bool on_document_end(json::error_code&) { return true; }

    bool on_object_begin(json::error_code&) {
        auto const s = value_slot();
        role r = role::other;
        switch (s) {
        case slot::document:
            r = role::top;
            break;
        case slot::result:
            r = role::result;
            break;
        case slot::first_block:
            r = role::first_block;
            break;
        default:
            break;
        }
        mark(s, r != role::other);
        push(r);
        return true;
    }
    bool on_object_end(std::size_t, json::error_code&) { return pop(); }

    bool on_array_begin(json::error_code&) {
        auto const s = value_slot();
        mark(s, s == slot::content);
        push(s == slot::content ? role::content : role::other);
        if (s == slot::content)
            content_items_ = 0;
        return true;
    }
    bool on_array_end(std::size_t, json::error_code&) { return pop(); }

    bool on_key_part(json::string_view part, std::size_t, json::error_code&) {
        append_key(part);
        return true;
    }
    bool on_key(json::string_view part, std::size_t, json::error_code&) {
        if (key_length_ == 0) {
            key_ = key_slot({part.data(), part.size()});
            return true;
        }
        append_key(part);
        key_ = key_slot(key_length_ <= key_buffer_.size() ? std::string_view(key_buffer_.data(), key_length_)
                                                          : std::string_view());
        key_length_ = 0;
        return true;
    }

    bool on_string_part(json::string_view part, std::size_t, json::error_code&) {
        if (!in_string_)
            begin_string();
        match(part);
        return true;
    }
    bool on_string(json::string_view part, std::size_t, json::error_code&) {
        if (!in_string_)
            begin_string();
        match(part);
        in_string_ = false;
        switch (string_) {
        case slot::method:
            mark(string_, true);
            break; // any string names a method
        case slot::jsonrpc:
        case slot::text:
            mark(string_, matching_ && matched_ == target_.size());
            break;
        default:
            mark(string_, false); // a string where the verdict wants another type
        }
        return true;
    }

    bool on_number_part(json::string_view, json::error_code&) { return true; }
    bool on_int64(std::int64_t i, json::string_view text, json::error_code&) {
        // The driver's ids are written as plain digits; a sign (even -0) makes another number.
        integer(i >= 0 && text.starts_with('-') == false, std::uint64_t(i), text);
        return true;
    }
    bool on_uint64(std::uint64_t u, json::string_view text, json::error_code&) {
        integer(true, u, text);
        return true;
    }
    bool on_double(double, json::string_view, json::error_code&) { // 5.0 and 5e0 are not the integer 5
        mark(value_slot(), false);
        return true;
    }
    bool on_bool(bool b, json::error_code&) {
        auto const s = value_slot();
        mark(s, s == slot::is_error && !b);
        return true;
    }
    bool on_null(json::error_code&) {
        mark(value_slot(), false);
        return true;
    }
    bool on_comment_part(json::string_view, json::error_code&) { return true; }
    bool on_comment(json::string_view, json::error_code&) { return true; }

private:
    static constexpr std::size_t max_depth = 40; // beyond Boost.JSON's default limit of 32

    void integer(bool unsigned_digits, std::uint64_t value, json::string_view text) {
        auto const s = value_slot();
        if (s == slot::id && unsigned_digits) {
            id_ = value;
            id_text_ = {text.data(), text.size()};
        }
        mark(s, s == slot::id && unsigned_digits);
    }

    // The slot of the value that starts now, from the container it is in.
    slot value_slot() {
        if (depth_ == 0)
            return slot::document;
        switch (role_at(depth_)) {
        case role::top:
        case role::result:
        case role::first_block:
            return key_;
        case role::content:
            return content_items_++ == 0 ? slot::first_block : slot::none;
        case role::other:
            return slot::none;
        }
        return slot::none;
    }

    slot key_slot(std::string_view key) const {
        switch (role_at(depth_)) {
        case role::top:
            if (key == "jsonrpc")
                return slot::jsonrpc;
            if (key == "id")
                return slot::id;
            if (key == "method")
                return slot::method;
            if (key == "result")
                return slot::result;
            if (key == "error")
                return slot::error;
            return slot::none;
        case role::result:
            if (key == "isError")
                return slot::is_error;
            if (key == "content")
                return slot::content;
            return slot::none;
        case role::first_block:
            return key == "text" ? slot::text : slot::none;
        default:
            return slot::none;
        }
    }

    role role_at(std::size_t depth) const { return depth < max_depth ? roles_[depth] : role::other; }

    void push(role r) {
        ++depth_;
        if (depth_ < max_depth)
            roles_[depth_] = r;
    }
    bool pop() {
        --depth_;
        return true;
    }

    void mark(slot s, bool ok) {
        if (s == slot::none)
            return;
        auto& m = members_[std::size_t(s)];
        m.seen = std::uint8_t(std::min(2, m.seen + 1));
        m.ok = ok;
    }

    void append_key(json::string_view part) {
        auto const room = key_buffer_.size() - std::min(key_length_, key_buffer_.size());
        std::copy_n(part.data(), std::min(room, part.size()), key_buffer_.data() + key_length_);
        key_length_ += part.size(); // past the buffer: a key longer than any the verdict reads
    }

    // A string value begins (it may come in parts): the text it must equal, if its slot has one.
    void begin_string() {
        in_string_ = true;
        string_ = value_slot();
        matched_ = 0;
        matching_ = string_ == slot::jsonrpc || string_ == slot::text;
        target_ = string_ == slot::jsonrpc ? std::string_view("2.0") : std::string_view(expected_text_);
    }
    void match(json::string_view part) {
        if (!matching_)
            return;
        if (target_.substr(matched_, part.size()) != std::string_view(part.data(), part.size()))
            matching_ = false;
        else
            matched_ += part.size();
    }

    std::string expected_text_;
    std::array<member, std::size_t(slot::count_)> members_{};
    std::uint64_t id_ = 0;
    std::string_view id_text_;
    std::array<role, max_depth> roles_{};
    std::size_t depth_ = 0;
    std::size_t content_items_ = 0; // values seen so far in the content array
    slot key_ = slot::none;         // the member whose value comes next
    std::array<char, 8> key_buffer_{};
    std::size_t key_length_ = 0;
    bool in_string_ = false;
    slot string_ = slot::none; // the slot of the string value being read
    std::string_view target_;
    std::size_t matched_ = 0;
    bool matching_ = true;
};

} // namespace

class answer_check::reader {
public:
    explicit reader(std::string expected_text) : parser_(json::parse_options(), std::move(expected_text)) {}

    // Parses one line; false unless it is one complete JSON value with nothing but blanks after it.
    bool parse(std::string_view line) {
        parser_.reset();
        parser_.handler().reset();
        json::error_code ec;
        auto const used = parser_.write_some(false, line.data(), line.size(), ec);
        if (ec || !parser_.done())
            return false;
        return line.find_first_not_of(" \t\r", used) == std::string_view::npos;
    }

    sax const& facts() const { return parser_.handler(); }

private:
    json::basic_parser<sax> parser_;
};

answer_check::answer_check(std::string expected_text, bool reuse_verdicts)
    : reader_(std::make_unique<reader>(std::move(expected_text))), reuse_verdicts_(reuse_verdicts) {}

answer_check::~answer_check() = default;
answer_check::answer_check(answer_check&&) noexcept = default;
answer_check& answer_check::operator=(answer_check&&) noexcept = default;

void answer_check::begin(std::uint64_t first_id, bool expect_text) {
    first_id_ = first_id;
    expect_text_ = expect_text;
    answered_.clear();
    settled_ = 0;
    bad_ = 0;
    notifications_ = 0;
    first_bad_line_.clear();
    shape_known_ = false; // learnt under the previous run's expectations
}

line_outcome answer_check::check_line(std::string_view line) {
    if (shape_known_)
        if (auto const id = id_in_good_shape(line)) {
            ++reused_;
            return answer(*id, true, line);
        }

    auto const parsed = reader_->parse(line);
    auto const& f = reader_->facts();
    auto const once = [&](slot s) {
        return f[s].seen == 1 && f[s].ok;
    };
    auto const absent = [&](slot s) {
        return f[s].seen == 0;
    };

    auto const envelope = parsed && once(slot::document) && once(slot::jsonrpc);
    if (envelope && absent(slot::id) && once(slot::method) && absent(slot::result) && absent(slot::error)) {
        ++notifications_;
        return {line_kind::notification};
    }
    // An integer id settles its request whatever else the line holds, unless the line is a request of the
    // server's own (it carries a method).
    if (!once(slot::id) || !absent(slot::method))
        return answer(std::nullopt, false, line);
    auto const good = envelope && absent(slot::error) && once(slot::result) &&
                      (absent(slot::is_error) || once(slot::is_error)) &&
                      (!expect_text_ || (once(slot::content) && once(slot::first_block) && once(slot::text)));
    if (good && reuse_verdicts_)
        learn_shape(line, f.id_text());
    return answer(f.id(), good, line);
}

line_outcome answer_check::answer(std::optional<std::uint64_t> id, bool good, std::string_view line) {
    line_outcome o;
    if (id && *id >= first_id_ && *id - first_id_ < answered_.size() &&
        !answered_[std::size_t(*id - first_id_)]) {
        o.kind = line_kind::answer;
        o.settles = true;
        o.slot = std::size_t(*id - first_id_);
        o.good = good;
        answered_[o.slot] = true;
        ++settled_;
    }
    if (!o.good) {
        ++bad_;
        if (bad_ == 1)
            first_bad_line_ = std::string(line.substr(0, 200));
    }
    return o;
}

// A good answer's bytes around its id. A line of the same bytes around another run of digits is the same JSON
// text but for the id's value: the number still ends where it did (the byte after it ended a number before),
// and a plain integer of at most 18 digits is read as the same kind of number. So its verdict is the same,
// and the parse is skipped. Servers write the same answer to the same request, so nearly every line takes
// this path.
void answer_check::learn_shape(std::string_view line, std::string_view id_text) {
    if (id_text.empty() || id_text.data() < line.data() ||
        id_text.data() + id_text.size() > line.data() + line.size())
        return; // the digits were not read in place
    auto const at = std::size_t(id_text.data() - line.data());
    shape_head_.assign(line.substr(0, at));
    shape_tail_.assign(line.substr(at + id_text.size()));
    shape_known_ = true;
}

std::optional<std::uint64_t> answer_check::id_in_good_shape(std::string_view line) const {
    constexpr std::size_t max_digits = 18; // below 2^63: read as the same int64 as any shorter id
    auto const frame = shape_head_.size() + shape_tail_.size();
    if (line.size() <= frame || line.size() > frame + max_digits || !line.starts_with(shape_head_) ||
        !line.ends_with(shape_tail_))
        return std::nullopt;
    auto const digits = line.substr(shape_head_.size(), line.size() - frame);
    if (digits.size() > 1 && digits[0] == '0') // not a JSON number
        return std::nullopt;
    std::uint64_t id = 0;
    for (char c : digits) {
        if (c < '0' || c > '9')
            return std::nullopt;
        id = id * 10 + std::uint64_t(c - '0');
    }
    return id;
}

} // namespace duet::bench
