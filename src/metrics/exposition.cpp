#include "exposition.hpp"

#include <charconv>
#include <cmath>

namespace duet::metrics::detail {

std::string escape_label_value(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

std::string_view status_class_label(std::size_t index) noexcept {
    static constexpr std::string_view classes[] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
    return index < std::size(classes) ? classes[index] : "5xx";
}

void exposition::family(std::string_view name, std::string_view help, std::string_view type) {
    text_.append("# HELP ").append(name).append(" ");
    // HELP text escapes backslash and newline only.
    for (char c : help) {
        if (c == '\\')
            text_ += "\\\\";
        else if (c == '\n')
            text_ += "\\n";
        else
            text_ += c;
    }
    text_.append("\n# TYPE ").append(name).append(" ").append(type).append("\n");
}

void exposition::labels(std::initializer_list<label> labels, std::string_view extra_name,
                        std::string_view extra_value) {
    if (labels.size() == 0 && extra_name.empty())
        return;
    text_ += '{';
    bool first = true;
    auto one = [&](std::string_view name, std::string_view value) {
        if (!first)
            text_ += ',';
        first = false;
        text_.append(name).append("=\"").append(escape_label_value(value)).append("\"");
    };
    for (auto const& [name, value] : labels)
        one(name, value);
    if (!extra_name.empty())
        one(extra_name, extra_value);
    text_ += '}';
}

void exposition::value(double v) {
    text_ += ' ';
    if (std::isnan(v)) {
        text_ += "NaN";
    } else if (std::isinf(v)) {
        text_ += v > 0 ? "+Inf" : "-Inf";
    } else {
        char buffer[32];
        auto const [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
        text_.append(buffer, ec == std::errc{} ? end : buffer);
    }
    text_ += '\n';
}

void exposition::sample(std::string_view name, std::initializer_list<label> labels_, double v) {
    text_.append(name);
    labels(labels_);
    value(v);
}

void exposition::raw_sample(std::string_view name, std::string_view labels_, double v) {
    text_.append(name);
    if (!labels_.empty())
        text_.append("{").append(labels_).append("}");
    value(v);
}

void exposition::histogram(std::string_view name, std::initializer_list<label> labels_,
                           std::span<double const> bounds, std::span<std::uint64_t const> cumulative,
                           double sum) {
    for (std::size_t i = 0; i <= bounds.size() && i < cumulative.size(); ++i) {
        std::string bound = "+Inf";
        if (i < bounds.size()) {
            char buffer[32];
            // Fixed: 0.0001 rather than 1e-04, as a reader of the bucket labels expects them.
            auto const [end, ec] =
                std::to_chars(buffer, buffer + sizeof buffer, bounds[i], std::chars_format::fixed);
            bound.assign(buffer, ec == std::errc{} ? end : buffer);
        }
        text_.append(name).append("_bucket");
        labels(labels_, "le", bound);
        value(static_cast<double>(cumulative[i]));
    }
    text_.append(name).append("_sum");
    labels(labels_);
    value(sum);
    text_.append(name).append("_count");
    labels(labels_);
    value(static_cast<double>(cumulative.empty() ? 0 : cumulative.back()));
}

} // namespace duet::metrics::detail
