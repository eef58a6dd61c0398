#include "value_parse.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value_stack.hpp>

#include <cmath>
#include <cstdint>

namespace duet::jsonrpc::detail {

namespace {

namespace json = boost::json;
using json::error_code;
using json::string_view;

// Builds the value the way boost::json::parser does (a value_stack fed by basic_parser's events) and keeps
// one more fact: whether a double was not finite. It only notes it: a text with an infinite number and a
// later syntax error or too deep a nesting must fail as that, as it did when the check came after the parse.
struct value_handler {
    static constexpr std::size_t max_object_size = json::object::max_size();
    static constexpr std::size_t max_array_size = json::array::max_size();
    static constexpr std::size_t max_key_size = json::string::max_size();
    static constexpr std::size_t max_string_size = json::string::max_size();

    json::value_stack st;
    bool all_finite = true;

    value_handler(json::storage_ptr sp, unsigned char* buffer, std::size_t size)
        : st(std::move(sp), buffer, size) {}

    bool on_document_begin(error_code&) { return true; }
    bool on_document_end(error_code&) { return true; }
    bool on_object_begin(error_code&) { return true; }
    bool on_object_end(std::size_t n, error_code&) {
        st.push_object(n);
        return true;
    }
    bool on_array_begin(error_code&) { return true; }
    bool on_array_end(std::size_t n, error_code&) {
        st.push_array(n);
        return true;
    }
    bool on_key_part(string_view s, std::size_t, error_code&) {
        st.push_chars(s);
        return true;
    }
    bool on_key(string_view s, std::size_t, error_code&) {
        st.push_key(s);
        return true;
    }
    bool on_string_part(string_view s, std::size_t, error_code&) {
        st.push_chars(s);
        return true;
    }
    bool on_string(string_view s, std::size_t, error_code&) {
        st.push_string(s);
        return true;
    }
    bool on_number_part(string_view, error_code&) { return true; }
    bool on_int64(std::int64_t i, string_view, error_code&) {
        st.push_int64(i);
        return true;
    }
    bool on_uint64(std::uint64_t u, string_view, error_code&) {
        st.push_uint64(u);
        return true;
    }
    bool on_double(double d, string_view, error_code&) {
        all_finite = all_finite && std::isfinite(d);
        st.push_double(d);
        return true;
    }
    bool on_bool(bool b, error_code&) {
        st.push_bool(b);
        return true;
    }
    bool on_null(error_code&) {
        st.push_null();
        return true;
    }
    bool on_comment_part(string_view, error_code&) { return true; }
    bool on_comment(string_view, error_code&) { return true; }
};

} // namespace

parsed_value parse_value(std::string_view bytes, json::storage_ptr storage,
                         json::parse_options const& options) {
    // As boost::json::parse: the parser's own stack starts in a buffer here, the value goes to `storage`.
    unsigned char temp[BOOST_JSON_STACK_BUFFER_SIZE];
    json::basic_parser<value_handler> p(options, json::storage_ptr(), temp, sizeof temp);
    p.handler().st.reset(std::move(storage));
    boost::system::error_code ec;
    auto const n = p.write_some(false, bytes.data(), bytes.size(), ec);
    if (!ec && n < bytes.size())
        ec = json::error::extra_data;
    if (ec)
        return {json::value(), ec, true};
    // Built in place: assigning the value to one made on the default heap would copy the whole tree there
    // (a Boost.JSON assignment keeps the target's storage).
    return {p.handler().st.release(), ec, p.handler().all_finite};
}

} // namespace duet::jsonrpc::detail
