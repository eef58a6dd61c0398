#include <duet/jsonrpc/codec.hpp>
#include <duet/jsonrpc/json_text.hpp>

#include <boost/json/parse.hpp>

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

// A tail applies only to an object result (response::result_tail).
bool has_tail(response const& r) {
    return r.result_tail && !r.result_tail->empty() && r.result.is_object();
}

// The result as a value, with its pre-serialized tail members in it (the slow path: batches).
boost::json::value result_with_tail(response const& r) {
    if (!has_tail(r))
        return r.result;
    boost::json::value out = r.result;
    auto tail = boost::json::parse("{" + *r.result_tail + "}").get_object();
    for (auto& kv : tail)
        out.get_object()[kv.key()] = std::move(kv.value());
    return out;
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
                       o.emplace("result", result_with_tail(r));
                   },
                   [&](error_response const& e) {
                       o.emplace("id", e.id ? e.id->to_json() : boost::json::value(nullptr));
                       o.emplace("error", error_to_json(e.error));
                   },
               },
               m);
    return o;
}

namespace {

void append_id(std::string& out, request_id const& id) {
    if (id.is_integer())
        out.append(std::to_string(id.as_integer()));
    else
        append_json_string(out, id.as_string());
}

} // namespace

// The same text as serializing to_json(m), member for member, written without building that object first:
// a result or params is serialized where it lies instead of being copied into an envelope.
std::string serialize(message const& m) {
    std::string out;
    // Room for a typical answer and its tail, so the string is allocated once.
    auto const* answer = std::get_if<response>(&m);
    out.reserve(256 + (answer && answer->result_tail ? answer->result_tail->size() : 0));
    out.append(R"({"jsonrpc":"2.0")");
    auto method_and_params = [&](std::string const& method, boost::json::value const& params) {
        out.append(R"(,"method":)");
        append_json_string(out, method);
        if (!params.is_null()) {
            out.append(R"(,"params":)");
            append_json_text(out, params);
        }
    };
    std::visit(overloaded{
                   [&](request const& r) {
                       out.append(R"(,"id":)");
                       append_id(out, r.id);
                       method_and_params(r.method, r.params);
                   },
                   [&](notification const& n) { method_and_params(n.method, n.params); },
                   [&](response const& r) {
                       out.append(R"(,"id":)");
                       append_id(out, r.id);
                       out.append(R"(,"result":)");
                       append_json_text(out, r.result);
                       if (has_tail(r)) {
                           // The result's closing brace moves behind the tail members.
                           out.pop_back();
                           if (!r.result.get_object().empty())
                               out.push_back(',');
                           out.append(*r.result_tail);
                           out.push_back('}');
                       }
                   },
                   [&](error_response const& e) {
                       out.append(R"(,"id":)");
                       if (e.id)
                           append_id(out, *e.id);
                       else
                           out.append("null");
                       out.append(R"(,"error":)");
                       append_json_text(out, error_to_json(e.error));
                   },
               },
               m);
    out.push_back('}');
    return out;
}

std::string serialize(std::vector<message> const& batch_reply) {
    boost::json::array a;
    a.reserve(batch_reply.size());
    for (auto const& m : batch_reply)
        a.emplace_back(to_json(m));
    return to_json_text(a);
}

} // namespace duet::jsonrpc
