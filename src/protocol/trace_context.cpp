#include <duet/protocol/meta_keys.hpp>
#include <duet/protocol/trace_context.hpp>

#include <algorithm>

namespace duet::protocol {

namespace {

bool lower_hex(std::string_view s) noexcept {
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool all_zeros(std::string_view s) noexcept {
    return std::all_of(s.begin(), s.end(), [](char c) { return c == '0'; });
}

// The spec's bound on what a vendor must pass on; beyond it (or with a control character) it is dropped.
constexpr std::size_t max_tracestate = 512;

std::string usable_tracestate(std::string_view s) {
    if (s.size() > max_tracestate)
        return {};
    if (std::any_of(s.begin(), s.end(), [](char c) { return c < 0x20 || c == 0x7f; }))
        return {};
    return std::string(s);
}

std::optional<trace_context> from(std::string_view traceparent, std::string_view tracestate) {
    auto parent = parse_traceparent(traceparent);
    if (!parent)
        return std::nullopt;
    return trace_context{std::move(*parent), usable_tracestate(tracestate)};
}

} // namespace

std::optional<std::string> parse_traceparent(std::string_view text) {
    // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2.
    constexpr std::size_t length = 55;
    if (text.size() < length || text[2] != '-' || text[35] != '-' || text[52] != '-')
        return std::nullopt;
    auto const version = text.substr(0, 2);
    auto const trace_id = text.substr(3, 32);
    auto const parent_id = text.substr(36, 16);
    auto const flags = text.substr(53, 2);
    if (!lower_hex(version) || version == "ff" || !lower_hex(trace_id) || !lower_hex(parent_id) ||
        !lower_hex(flags) || all_zeros(trace_id) || all_zeros(parent_id))
        return std::nullopt;
    // Version 00 is exactly 55 characters; a later one may go on, after a '-'.
    if (version == "00" ? text.size() != length : text.size() > length && text[length] != '-')
        return std::nullopt;
    std::string out = "00-";
    out.append(trace_id).append("-").append(parent_id).append("-").append(flags);
    return out;
}

std::optional<trace_context> trace_of(boost::json::value const& params, http_facts const* http) {
    if (auto const* p = params.if_object())
        if (auto const* meta = p->if_contains("_meta"); meta && meta->is_object())
            if (auto const* parent = meta->get_object().if_contains(meta_key::traceparent);
                parent && parent->is_string()) {
                auto const* state = meta->get_object().if_contains(meta_key::tracestate);
                if (auto t = from(parent->get_string(),
                                  state && state->is_string() ? std::string_view(state->get_string()) : ""))
                    return t;
            }
    if (http && !http->traceparent.empty())
        return from(http->traceparent, http->tracestate);
    return std::nullopt;
}

trace_context child_of(trace_context const& parent, std::string_view span_id) {
    trace_context next = parent;
    next.traceparent.replace(36, 16, span_id.substr(0, 16));
    return next;
}

} // namespace duet::protocol
