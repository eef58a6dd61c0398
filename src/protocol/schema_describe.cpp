#include <duet/protocol/schema/describe.hpp>

#include <boost/throw_exception.hpp>

#include <stdexcept>

namespace duet::schema {

void throw_exception_from_error(decode_error const& e, boost::source_location const& loc) {
    boost::throw_exception(std::invalid_argument(e.to_string()), loc);
}

} // namespace duet::schema
