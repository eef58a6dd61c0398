/// @file duet/protocol/input_key.hpp
///
/// Duet's own `_meta` key on a legacy input request (elicitation/create, sampling/createMessage, roots/list
/// sent by request_context::async_input): the key the question has in a modern input_required round. A
/// gateway in front of a legacy Duet server asks its modern clients under the same keys, so a client that
/// offers answers by key (DIGEST §4) is understood. Other peers ignore it, as they ignore any `_meta` key.
#pragma once

#include <string_view>

namespace duet::protocol::meta_key {

inline constexpr std::string_view input_key = "dev.duet/inputKey";

} // namespace duet::protocol::meta_key
