// The JSON text of a frame into a value, as boost::json::parse makes it, noting on the way whether any number
// read as a non-finite double (a number too large for a double reads as infinity, which no JSON text can
// carry back out). Noting it during the parse saves a second walk over every value of the tree afterwards.
#pragma once

#include <boost/json/parse_options.hpp>
#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>
#include <boost/system/error_code.hpp>

#include <string_view>

namespace duet::jsonrpc::detail {

struct parsed_value {
    boost::json::value value;     ///< null when `ec` is set
    boost::system::error_code ec; ///< what boost::json::parse would report for the same text and options
    bool all_finite = true;       ///< every number of the text is a finite double or an integer
};

/// Exactly boost::json::parse(bytes, ec, storage, options), plus `all_finite`. A text that fails to parse
/// says nothing reliable about its numbers.
[[nodiscard]] parsed_value parse_value(std::string_view bytes, boost::json::storage_ptr storage,
                                       boost::json::parse_options const& options);

} // namespace duet::jsonrpc::detail
