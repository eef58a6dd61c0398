// A hand-written reader of RFC 9110's challenge grammar. The list syntax is ambiguous at a comma (another
// parameter of this challenge, or the next challenge's scheme?): what follows decides, as the RFC intends —
// `name =` is a parameter, a bare token is a new scheme.
#include <duet/auth/challenge.hpp>
#include <duet/protocol/header_codec.hpp>

#include <array>

namespace duet::auth {

namespace {

bool is_tchar(char c) noexcept {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// A table: a protected server walks every request's bearer token with it (is_token68).
constexpr auto token68_chars = [] {
    std::array<bool, 256> table{};
    for (unsigned char c = 0; c < 128; ++c)
        table[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                   c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
    return table;
}();

bool is_token68_char(char c) noexcept {
    return token68_chars[static_cast<unsigned char>(c)];
}

} // namespace

bool is_token68(std::string_view text) noexcept {
    auto const end = text.find_last_not_of('=');
    if (end == std::string_view::npos)
        return false;
    for (char c : text.substr(0, end + 1))
        if (!is_token68_char(c))
            return false;
    return true;
}

namespace {

class reader {
public:
    explicit reader(std::string_view text) : text_(text) {}

    [[nodiscard]] bool done() const noexcept { return pos_ >= text_.size(); }
    [[nodiscard]] char peek() const noexcept { return done() ? '\0' : text_[pos_]; }
    [[nodiscard]] std::size_t pos() const noexcept { return pos_; }
    void seek(std::size_t p) noexcept { pos_ = p; }

    void skip_ows() noexcept {
        while (!done() && (text_[pos_] == ' ' || text_[pos_] == '\t'))
            ++pos_;
    }
    // Commas and the whitespace around them: empty list elements are allowed (RFC 9110 §5.6.1.2).
    void skip_separators() noexcept {
        while (!done() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == ','))
            ++pos_;
    }
    std::string_view token() noexcept {
        auto const start = pos_;
        while (!done() && is_tchar(text_[pos_]))
            ++pos_;
        return text_.substr(start, pos_ - start);
    }
    // After the opening quote; nullopt when the string never closes.
    std::optional<std::string> quoted_rest() {
        std::string out;
        while (!done()) {
            char const c = text_[pos_++];
            if (c == '"')
                return out;
            if (c == '\\') {
                if (done())
                    return std::nullopt;
                out.push_back(text_[pos_++]);
                continue;
            }
            out.push_back(c);
        }
        return std::nullopt;
    }

private:
    std::string_view text_;
    std::size_t pos_ = 0;
};

// Whether a parameter (`token BWS "=" BWS value`) starts here, rather than a token68 whose padding is one or
// more '=' (`YWI=`, `abc==`): a parameter's '=' is followed by its value. Leaves the reader where it was.
bool param_ahead(reader& r) {
    auto const start = r.pos();
    bool const named = !r.token().empty();
    r.skip_ows();
    bool const equals = r.peek() == '=';
    bool param = false;
    if (named && equals) {
        r.seek(r.pos() + 1);
        r.skip_ows();
        param = r.peek() == '"' || (!r.done() && is_tchar(r.peek()));
    }
    r.seek(start);
    return param;
}

// One `name = value`; false with `error` set when the value is malformed.
bool read_param(reader& r, challenge& c, std::string& error) {
    std::string name(r.token());
    r.skip_ows();
    r.seek(r.pos() + 1); // '='
    r.skip_ows();
    if (r.peek() == '"') {
        r.seek(r.pos() + 1);
        auto value = r.quoted_rest();
        if (!value) {
            error = "a quoted value of " + name + " never closes";
            return false;
        }
        c.params.emplace_back(std::move(name), std::move(*value));
        return true;
    }
    auto const value = r.token();
    if (value.empty()) {
        error = "the parameter " + name + " has no value";
        return false;
    }
    c.params.emplace_back(std::move(name), std::string(value));
    return true;
}

// A token68 standing alone up to the end or a comma; false (the reader unmoved) when there is none.
bool read_token68(reader& r, challenge& c) {
    auto const start = r.pos();
    std::string value;
    while (!r.done() && is_token68_char(r.peek())) {
        value.push_back(r.peek());
        r.seek(r.pos() + 1);
    }
    while (!value.empty() && r.peek() == '=') {
        value.push_back('=');
        r.seek(r.pos() + 1);
    }
    r.skip_ows();
    if (value.empty() || !(r.done() || r.peek() == ',')) {
        r.seek(start);
        return false;
    }
    c.token68 = std::move(value);
    return true;
}

// The challenges of one field value, appended to `out`; an error in words, or empty.
std::string parse_field(std::string_view field, std::vector<challenge>& out) {
    reader r(field);
    r.skip_separators();
    while (!r.done()) {
        challenge c;
        c.scheme = std::string(r.token());
        if (c.scheme.empty())
            return "expected an authentication scheme at \"" + std::string(field.substr(r.pos())) + "\"";
        bool const spaced = r.peek() == ' ' || r.peek() == '\t';
        r.skip_ows();
        if (spaced && !r.done() && r.peek() != ',') {
            std::string error;
            if (param_ahead(r)) {
                do {
                    if (!read_param(r, c, error))
                        return error;
                    r.skip_ows();
                    if (r.peek() != ',' && !r.done())
                        return "expected a comma after the parameter " + c.params.back().first;
                    r.skip_separators();
                } while (!r.done() && param_ahead(r));
            } else if (!read_token68(r, c)) {
                return "cannot read the parameters of the " + c.scheme + " challenge";
            }
        } else if (!r.done() && r.peek() != ',') {
            return "expected a space after the scheme " + c.scheme;
        }
        out.push_back(std::move(c));
        r.skip_separators();
    }
    return {};
}

} // namespace

std::optional<std::string_view> challenge::param(std::string_view name) const noexcept {
    for (auto const& p : params)
        if (protocol::iequals(p.first, name))
            return std::string_view(p.second);
    return std::nullopt;
}

bool challenge::is(std::string_view scheme_name) const noexcept {
    return protocol::iequals(scheme, scheme_name);
}

challenge_list parse_challenges(std::span<std::string const> field_values) {
    challenge_list list;
    for (auto const& field : field_values) {
        auto error = parse_field(field, list.challenges);
        if (!error.empty()) {
            list.error = "WWW-Authenticate: " + error;
            break;
        }
    }
    return list;
}

challenge const* find_bearer(std::span<challenge const> challenges) noexcept {
    for (auto const& c : challenges)
        if (c.is("Bearer"))
            return &c;
    return nullptr;
}

} // namespace duet::auth
