#include <duet/server/definitions.hpp>

namespace duet::server {

namespace {

void put_if(boost::json::object& o, std::string_view key, std::string const& s) {
    if (!s.empty())
        o[key] = s;
}
void put_if(boost::json::object& o, std::string_view key, boost::json::object const& v) {
    if (!v.empty())
        o[key] = v;
}
void put_if(boost::json::object& o, std::string_view key, boost::json::array const& v) {
    if (!v.empty())
        o[key] = v;
}

} // namespace

boost::json::object tool::to_json() const {
    boost::json::object o{{"name", name}};
    put_if(o, "title", title);
    put_if(o, "description", description);
    o["inputSchema"] = input_schema;
    if (output_schema)
        o["outputSchema"] = *output_schema;
    put_if(o, "annotations", annotations);
    put_if(o, "icons", icons);
    put_if(o, "_meta", meta);
    if (tasks != protocol::task_support::forbidden) // shaping keeps it for 2025-11-25 only
        o["execution"] = boost::json::object{{"taskSupport", protocol::to_string(tasks)}};
    return o;
}

boost::json::object resource::to_json() const {
    boost::json::object o{{"uri", uri}, {"name", name}};
    put_if(o, "title", title);
    put_if(o, "description", description);
    put_if(o, "mimeType", mime_type);
    if (size)
        o["size"] = *size;
    put_if(o, "annotations", annotations);
    put_if(o, "icons", icons);
    return o;
}

boost::json::object resource_template::to_json() const {
    boost::json::object o{{"uriTemplate", uri_template}, {"name", name}};
    put_if(o, "title", title);
    put_if(o, "description", description);
    put_if(o, "mimeType", mime_type);
    put_if(o, "annotations", annotations);
    put_if(o, "icons", icons);
    return o;
}

boost::json::object prompt::to_json() const {
    boost::json::object o{{"name", name}};
    put_if(o, "title", title);
    put_if(o, "description", description);
    if (!arguments.empty()) {
        boost::json::array args;
        for (auto const& a : arguments) {
            boost::json::object ao{{"name", a.name}};
            put_if(ao, "title", a.title);
            put_if(ao, "description", a.description);
            if (a.required)
                ao["required"] = true;
            args.push_back(std::move(ao));
        }
        o["arguments"] = std::move(args);
    }
    put_if(o, "icons", icons);
    return o;
}

} // namespace duet::server
