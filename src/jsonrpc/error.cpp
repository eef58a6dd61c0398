#include <duet/jsonrpc/codec.hpp>
#include <duet/jsonrpc/error.hpp>

#include <boost/throw_exception.hpp>

#include <stdexcept>

namespace duet::jsonrpc {

namespace {

char const* describe(parse_errc e) noexcept {
    switch (e) {
    case parse_errc::bad_json:
        return "Parse error: the frame is not valid JSON";
    case parse_errc::too_large:
        return "Invalid Request: the message exceeds the size limit";
    case parse_errc::too_deep:
        return "Invalid Request: the message nests deeper than the limit";
    case parse_errc::not_an_object:
        return "Invalid Request: a message must be a JSON object";
    case parse_errc::empty_batch:
        return "Invalid Request: an empty batch";
    case parse_errc::bad_jsonrpc_version:
        return "Invalid Request: \"jsonrpc\" must be exactly \"2.0\"";
    case parse_errc::bad_method:
        return "Invalid Request: \"method\" must be a string";
    case parse_errc::bad_id:
        return "Invalid Request: \"id\" must be a string or an integer";
    case parse_errc::bad_params:
        return "Invalid Request: \"params\" must be an object or an array";
    case parse_errc::bad_response:
        return "Invalid Request: a response needs exactly one of \"result\" and a well-formed \"error\"";
    case parse_errc::unknown_shape:
        return "Invalid Request: neither a request, a notification nor a response";
    }
    return "unknown JSON-RPC parse error";
}

class parse_category_impl final : public boost::system::error_category {
public:
    char const* name() const noexcept override { return "duet.jsonrpc.parse"; }
    std::string message(int ev) const override { return describe(static_cast<parse_errc>(ev)); }
};

} // namespace

boost::system::error_category const& parse_category() noexcept {
    static parse_category_impl const instance;
    return instance;
}

boost::system::error_code make_error_code(parse_errc e) noexcept {
    return {static_cast<int>(e), parse_category()};
}

error_object to_error_object(parse_errc e) {
    return error_object{
        e == parse_errc::bad_json ? code::parse_error : code::invalid_request, describe(e), {}};
}

void throw_exception_from_error(error_object const& e, boost::source_location const& loc) {
    boost::throw_exception(std::runtime_error(e.message), loc);
}

void throw_exception_from_error(parse_failure const& f, boost::source_location const& loc) {
    boost::throw_exception(boost::system::system_error(make_error_code(f.reason)), loc);
}

} // namespace duet::jsonrpc
