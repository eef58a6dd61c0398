// The Prometheus text format (0.0.4) written line by line: families' HELP and TYPE, samples with their labels
// escaped, histograms' buckets, numbers as Prometheus reads them (+Inf, NaN).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace duet::metrics::detail {

using label = std::pair<std::string_view, std::string_view>;

class exposition {
public:
    void family(std::string_view name, std::string_view help, std::string_view type);
    void sample(std::string_view name, std::initializer_list<label> labels, double value);
    /// `labels`: `name="value"` pairs joined by commas, already escaped (may be empty).
    void raw_sample(std::string_view name, std::string_view labels, double value);
    /// `cumulative` has one count per bound and the +Inf one (the total) last.
    void histogram(std::string_view name, std::initializer_list<label> labels, std::span<double const> bounds,
                   std::span<std::uint64_t const> cumulative, double sum);

    [[nodiscard]] std::string text() && { return std::move(text_); }

private:
    void labels(std::initializer_list<label> labels, std::string_view extra_name = {},
                std::string_view extra_value = {});
    void value(double v);

    std::string text_;
};

/// A label value escaped for the text format: backslash, double quote and newline.
[[nodiscard]] std::string escape_label_value(std::string_view value);

/// "1xx" … "5xx" for index 0 … 4.
[[nodiscard]] std::string_view status_class_label(std::size_t index) noexcept;

} // namespace duet::metrics::detail
