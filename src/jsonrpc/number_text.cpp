#include "number_text.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace duet::jsonrpc::detail {

namespace {

char* copy(char* out, char const* from, int count) noexcept {
    std::memcpy(out, from, static_cast<std::size_t>(count));
    return out + count;
}

char* zeros(char* out, int count) noexcept {
    std::memset(out, '0', static_cast<std::size_t>(count));
    return out + count;
}

// The shortest round-trip digits of a positive finite double, and where its decimal point goes: the value is
// 0.DIGITS × 10^point. The digits point into `text`.
struct decimal_digits {
    char const* digits;
    int count;
    int point;
};

decimal_digits shortest_digits(double positive, char (&text)[32]) noexcept {
    // to_chars in scientific form gives the shortest digits that read back the same, as D[.DDD]e±XX.
    auto const end = std::to_chars(text, text + sizeof text, positive, std::chars_format::scientific).ptr;
    auto const* e = static_cast<char const*>(std::memchr(text, 'e', static_cast<std::size_t>(end - text)));
    decimal_digits d{text, 1, 0};
    if (e - text > 1) {
        // D.DDD: the first digit moves onto the point, so the digits are one run.
        text[1] = text[0];
        d = {text + 1, static_cast<int>(e - text) - 1, 0};
    }
    int exponent = 0;
    for (char const* p = e + 2; p != end; ++p)
        exponent = exponent * 10 + (*p - '0');
    d.point = (e[1] == '-' ? -exponent : exponent) + 1;
    return d;
}

} // namespace

char* write_double(char* out, double d) noexcept {
    if (!std::isfinite(d))
        return copy(out, "null", 4);
    // An integral double below 2^53 is its integer exactly, and the shortest digits are that integer's too;
    // the common case (counts, sums) skips the digit search. -0 converts to 0.
    if (d > -0x1p53 && d < 0x1p53) {
        auto const whole = static_cast<std::int64_t>(d);
        if (static_cast<double>(whole) == d)
            return std::to_chars(out, out + max_double_text, whole).ptr;
    }
    if (d < 0) {
        *out++ = '-';
        d = -d;
    }
    char text[32];
    auto const [digits, count, point] = shortest_digits(d, text);
    // The four layouts of ECMA-262 Number::toString, by where the decimal point falls.
    if (count <= point && point <= 21)
        return zeros(copy(out, digits, count), point - count);
    if (0 < point && point <= 21) {
        out = copy(out, digits, point);
        *out++ = '.';
        return copy(out, digits + point, count - point);
    }
    if (-6 < point && point <= 0) {
        out = zeros(copy(out, "0.", 2), -point);
        return copy(out, digits, count);
    }
    *out++ = digits[0];
    if (count > 1) {
        *out++ = '.';
        out = copy(out, digits + 1, count - 1);
    }
    int const exponent = point - 1;
    out = copy(out, exponent < 0 ? "e-" : "e+", 2);
    return std::to_chars(out, out + 4, exponent < 0 ? -exponent : exponent).ptr;
}

} // namespace duet::jsonrpc::detail
