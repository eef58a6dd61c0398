#include <duet/client/elicitation_form.hpp>

namespace duet::client {

std::vector<requested_field> requested_fields(boost::json::object const& elicitation_params) {
    std::vector<requested_field> fields;
    auto const* schema = elicitation_params.if_contains("requestedSchema");
    auto const* props =
        schema && schema->is_object() ? schema->get_object().if_contains("properties") : nullptr;
    if (!props || !props->is_object())
        return fields;
    fields.reserve(props->get_object().size());
    for (auto const& kv : props->get_object()) {
        requested_field f{kv.key()};
        if (auto const* p = kv.value().if_object()) {
            if (auto const* t = p->if_contains("type"); t && t->is_string())
                f.type = t->get_string();
            f.default_value = p->if_contains("default");
        }
        fields.push_back(f);
    }
    return fields;
}

} // namespace duet::client
