/// @file duet/server/uri_template.hpp
///
/// Matching URIs against RFC 6570 templates of levels 1 and 2, the forms resource templates use:
/// `{var}` matches one non-empty run of characters other than '/', '?', '#' and ','; `{+var}` matches any
/// non-empty text. Percent-encoded text is returned as sent.
///
///     match_uri_template("file:///{dir}/{name}", "file:///docs/a.txt") -> {{"dir","docs"},{"name","a.txt"}}
///     match_uri_template("file:///{dir}/{name}", "file:///a.txt")      -> nothing
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::server {

[[nodiscard]] std::optional<std::map<std::string, std::string>>
match_uri_template(std::string_view uri_template, std::string_view uri);

/// The variable names of a template, in order of appearance.
[[nodiscard]] std::vector<std::string> uri_template_variables(std::string_view uri_template);

} // namespace duet::server
