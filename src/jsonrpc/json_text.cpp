#include <duet/jsonrpc/json_text.hpp>

#include "number_text.hpp"

#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace duet::jsonrpc {

namespace {

namespace json = boost::json;

// What each byte becomes inside a JSON string, as Boost.JSON's serializer writes it: 0 for itself (UTF-8 and
// DEL included), a letter for a two-character escape, 'u' for \u00XX.
constexpr std::array<char, 256> escapes = [] {
    std::array<char, 256> e{};
    for (int c = 0; c < 0x20; ++c)
        e[c] = 'u';
    e['\b'] = 'b';
    e['\t'] = 't';
    e['\n'] = 'n';
    e['\f'] = 'f';
    e['\r'] = 'r';
    e['"'] = '"';
    e['\\'] = '\\';
    return e;
}();

std::size_t plain_run_bytewise(char const* first, char const* last) noexcept {
    char const* p = first;
    while (p != last && escapes[static_cast<unsigned char>(*p)] == 0)
        ++p;
    return static_cast<std::size_t>(p - first);
}

#if defined(__SSE2__)

// One bit for each of the 16 bytes of `chunk` that needs an escape.
unsigned escape_bits(__m128i chunk) noexcept {
    // A byte below 0x20 saturates to 0.
    auto const control = _mm_cmpeq_epi8(_mm_subs_epu8(chunk, _mm_set1_epi8(0x1f)), _mm_setzero_si128());
    auto const quote = _mm_cmpeq_epi8(chunk, _mm_set1_epi8('"'));
    auto const backslash = _mm_cmpeq_epi8(chunk, _mm_set1_epi8('\\'));
    return static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(control, _mm_or_si128(quote, backslash))));
}

__m128i load16(char const* p) noexcept {
    return _mm_loadu_si128(reinterpret_cast<__m128i const*>(p));
}

__m128i load8(char const* p) noexcept {
    return _mm_loadl_epi64(reinterpret_cast<__m128i const*>(p));
}

__m128i load4(char const* p) noexcept {
    std::int32_t word;
    std::memcpy(&word, p, sizeof word);
    return _mm_cvtsi32_si128(word);
}

// Where the first byte to escape is, given the bits of the `head` bytes from `first` followed by the bits of
// the bytes that end at `first + n`.
std::size_t first_escape(unsigned bits, std::size_t head, std::size_t n) noexcept {
    auto const head_bits = bits & ((1u << head) - 1);
    if (head_bits != 0)
        return static_cast<std::size_t>(std::countr_zero(head_bits));
    if (bits != 0)
        return n - head + static_cast<std::size_t>(std::countr_zero(bits >> head));
    return n;
}

// How many bytes from `first` on are written as they are, sixteen at a time. A short string is loaded as its
// first and last eight (or four) bytes, overlapping, so most keys and values take one check instead of a loop
// over their bytes: text results are most of what Duet writes, and nearly all of it needs no escape.
std::size_t plain_run(char const* first, char const* last) noexcept {
    auto const n = static_cast<std::size_t>(last - first);
    if (n >= 16) {
        char const* p = first;
        for (; last - p > 16; p += 16)
            if (auto const bits = escape_bits(load16(p)); bits != 0)
                return static_cast<std::size_t>(p - first) + static_cast<std::size_t>(std::countr_zero(bits));
        // The last sixteen overlap the chunk before, which had nothing to escape.
        p = last - 16;
        if (auto const bits = escape_bits(load16(p)); bits != 0)
            return static_cast<std::size_t>(p - first) + static_cast<std::size_t>(std::countr_zero(bits));
        return n;
    }
    if (n >= 8)
        return first_escape(escape_bits(_mm_unpacklo_epi64(load8(first), load8(last - 8))), 8, n);
    if (n >= 4) // the upper eight bytes are zeros, which would read as control characters
        return first_escape(escape_bits(_mm_unpacklo_epi32(load4(first), load4(last - 4))) & 0xff, 4, n);
    return plain_run_bytewise(first, last);
}

#else

std::size_t plain_run(char const* first, char const* last) noexcept {
    return plain_run_bytewise(first, last);
}

#endif

// Writes into a buffer on the stack and appends it to the string when full and at the end: one append per
// kilobyte instead of one per token, and no per-value allocation.
class text_writer {
public:
    explicit text_writer(std::string& out) noexcept : out_(out) {}
    text_writer(text_writer const&) = delete;
    text_writer& operator=(text_writer const&) = delete;

    void finish() { flush(); }

    void value(json::value const& v) {
        switch (v.kind()) {
        case json::kind::null:
            put("null", 4);
            break;
        case json::kind::bool_:
            v.get_bool() ? put("true", 4) : put("false", 5);
            break;
        case json::kind::int64:
            integer(v.get_int64());
            break;
        case json::kind::uint64:
            integer(v.get_uint64());
            break;
        case json::kind::double_:
            make_room(detail::max_double_text);
            next_ = detail::write_double(next_, v.get_double());
            break;
        case json::kind::string:
            string(v.get_string());
            break;
        case json::kind::array:
            array(v.get_array());
            break;
        case json::kind::object:
            object(v.get_object());
            break;
        }
    }

    void array(json::array const& a) {
        put('[');
        bool first = true;
        for (auto const& element : a) {
            if (!first)
                put(',');
            first = false;
            value(element);
        }
        put(']');
    }

    void object(json::object const& o) {
        put('{');
        bool first = true;
        for (auto const& member : o) {
            if (!first)
                put(',');
            first = false;
            string(member.key());
            put(':');
            value(member.value());
        }
        put('}');
    }

    void string(std::string_view s) {
        put('"');
        char const* p = s.data();
        char const* const last = p + s.size();
        for (;;) {
            auto const run = plain_run(p, last);
            put(p, run);
            p += run;
            if (p == last)
                break;
            escape(static_cast<unsigned char>(*p++));
        }
        put('"');
    }

private:
    static constexpr std::size_t buffer_size = 1024;

    [[nodiscard]] std::size_t room() const noexcept {
        return static_cast<std::size_t>(buffer_ + buffer_size - next_);
    }

    void flush() {
        out_.append(buffer_, static_cast<std::size_t>(next_ - buffer_));
        next_ = buffer_;
    }

    // `n` is at most buffer_size.
    void make_room(std::size_t n) {
        if (room() < n)
            flush();
    }

    void put(char c) {
        make_room(1);
        *next_++ = c;
    }

    void put(char const* s, std::size_t n) {
        if (room() < n) {
            flush();
            if (n > buffer_size) {
                out_.append(s, n);
                return;
            }
        }
        std::memcpy(next_, s, n);
        next_ += n;
    }

    template<class Integer>
    void integer(Integer i) {
        make_room(20); // "-9223372036854775808", or UINT64_MAX
        next_ = std::to_chars(next_, next_ + 20, i).ptr;
    }

    void escape(unsigned char c) {
        static constexpr char hex[] = "0123456789abcdef";
        make_room(6);
        *next_++ = '\\';
        auto const e = escapes[c];
        if (e != 'u') {
            *next_++ = e;
            return;
        }
        std::memcpy(next_, "u00", 3);
        next_[3] = hex[c >> 4];
        next_[4] = hex[c & 15];
        next_ += 5;
    }

    std::string& out_;
    char* next_ = buffer_;
    char buffer_[buffer_size];
};

template<class Json>
std::string text_of(Json const& v) {
    std::string out;
    append_json_text(out, v);
    return out;
}

} // namespace

void append_json_text(std::string& out, json::value const& v) {
    text_writer w(out);
    w.value(v);
    w.finish();
}

void append_json_text(std::string& out, json::object const& o) {
    text_writer w(out);
    w.object(o);
    w.finish();
}

void append_json_text(std::string& out, json::array const& a) {
    text_writer w(out);
    w.array(a);
    w.finish();
}

void append_json_string(std::string& out, std::string_view s) {
    text_writer w(out);
    w.string(s);
    w.finish();
}

std::string to_json_text(json::value const& v) {
    return text_of(v);
}

std::string to_json_text(json::object const& o) {
    return text_of(o);
}

std::string to_json_text(json::array const& a) {
    return text_of(a);
}

} // namespace duet::jsonrpc
