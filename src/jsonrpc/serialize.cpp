#include <duet/jsonrpc/codec.hpp>

#include <boost/json/serialize.hpp>

namespace duet::jsonrpc {

namespace {

boost::json::value error_to_json(error_object const& e) {
    boost::json::object o;
    o.reserve(3);
    o.emplace("code", e.code);
    o.emplace("message", e.message);
    if (!e.data.is_null())
        o.emplace("data", e.data);
    return o;
}

} // namespace

boost::json::object to_json(message const& m) {
    boost::json::object o;
    o.reserve(4);
    o.emplace("jsonrpc", "2.0");
    std::visit(overloaded{
                   [&](request const& r) {
                       o.emplace("id", r.id.to_json());
                       o.emplace("method", r.method);
                       if (!r.params.is_null())
                           o.emplace("params", r.params);
                   },
                   [&](notification const& n) {
                       o.emplace("method", n.method);
                       if (!n.params.is_null())
                           o.emplace("params", n.params);
                   },
                   [&](response const& r) {
                       o.emplace("id", r.id.to_json());
                       o.emplace("result", r.result);
                   },
                   [&](error_response const& e) {
                       o.emplace("id", e.id ? e.id->to_json() : boost::json::value(nullptr));
                       o.emplace("error", error_to_json(e.error));
                   },
               },
               m);
    return o;
}

std::string serialize(message const& m) {
    return boost::json::serialize(to_json(m));
}

std::string serialize(std::vector<message> const& batch_reply) {
    boost::json::array a;
    a.reserve(batch_reply.size());
    for (auto const& m : batch_reply)
        a.emplace_back(to_json(m));
    return boost::json::serialize(a);
}

} // namespace duet::jsonrpc
