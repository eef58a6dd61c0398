/// @file duet/server/argument_check.hpp
///
/// What tools/call checks of a tool's arguments before its handler runs: the required members and primitive
/// types of the tool's inputSchema (argument_check).
#pragma once

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <vector>

namespace duet::server {

/// The arguments checks a tool's inputSchema top level can express cheaply (required members and primitive
/// types), read out of the schema once when the tool is added: every tools/call used to look "required",
/// "properties", each argument's property and its "type" up by name in the schema.
class argument_check {
public:
    argument_check() = default;
    explicit argument_check(boost::json::object const& schema);

    /// Why the arguments do not fit, in the words tools/call has always answered with; nullopt if they fit.
    std::optional<std::string> problem(boost::json::object const& args) const;

private:
    enum class kind : unsigned char { string, boolean, number, integer, object, array, null, other };
    struct typed_property {
        std::string name;
        std::string type; // as the schema spells it: an unknown type fails every argument, by that name
        kind k = kind::other;
    };
    std::vector<std::string> required_;
    std::vector<typed_property> typed_; // sorted by name; properties without a string "type" check nothing
};

} // namespace duet::server
