/// @file duet/client/elicitation_form.hpp
///
/// The fields a form-mode elicitation asks for, read out of its `requestedSchema` once, for whatever answers
/// it (a prompt on a terminal, a test client filling defaults):
///
///     for (auto const& f : requested_fields(question.params))
///         content[f.name] = f.default_value ? *f.default_value : ask_user(f.name, f.type);
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string_view>
#include <vector>

namespace duet::client {

/// One property of an elicitation's requestedSchema, viewing into the params it was read from.
struct requested_field {
    std::string_view name;
    /// The property's JSON type; "string" where the schema names none (the spec's primitive default).
    std::string_view type = "string";
    /// The property's `default` (SEP-1034), or nullptr.
    boost::json::value const* default_value = nullptr;
};

/// The fields of `requestedSchema.properties` in the order the server wrote them; empty when the params
/// carry no such object. The views live as long as `elicitation_params`.
std::vector<requested_field> requested_fields(boost::json::object const& elicitation_params);

} // namespace duet::client
