#include <duet/jsonrpc/codec.hpp>

#include "value_parse.hpp"

#include <boost/json/error.hpp>
#include <boost/json/parse_options.hpp>

#include <utility>

namespace duet::jsonrpc {

namespace {

parse_failure fail(parse_errc why, std::optional<request_id> id = std::nullopt) {
    return parse_failure{why, error_response{std::move(id), to_error_object(why)}};
}

parse_failure fail_silently(parse_errc why) {
    return parse_failure{why, std::nullopt};
}

// The members a message's kind and validity depend on, found in one pass over the object rather than one
// lookup each (the parser already made keys unique: the last of duplicates is the one kept).
struct envelope {
    boost::json::value* jsonrpc = nullptr;
    boost::json::value* id = nullptr;
    boost::json::value* method = nullptr;
    boost::json::value* params = nullptr;
    boost::json::value* result = nullptr;
    boost::json::value* error = nullptr;
};

envelope members_of(boost::json::object& o) {
    envelope e;
    for (auto& kv : o) {
        auto const k = kv.key();
        switch (k.size()) {
        case 2:
            if (k == "id")
                e.id = &kv.value();
            break;
        case 5:
            if (k == "error")
                e.error = &kv.value();
            break;
        case 6:
            if (k == "method")
                e.method = &kv.value();
            else if (k == "params")
                e.params = &kv.value();
            else if (k == "result")
                e.result = &kv.value();
            break;
        case 7:
            if (k == "jsonrpc")
                e.jsonrpc = &kv.value();
            break;
        default:
            break;
        }
    }
    return e;
}

bool has_version_2_0(envelope const& e) {
    return e.jsonrpc && e.jsonrpc->is_string() && e.jsonrpc->get_string() == "2.0";
}

// The id an error reply should echo: the request's own when it is a valid id, else none (null on the wire).
std::optional<request_id> echoable_id(envelope const& e) {
    if (e.id)
        return request_id::from_json(*e.id);
    return std::nullopt;
}

std::optional<error_object> read_error_object(boost::json::value const& v) {
    auto const* o = v.if_object();
    if (!o)
        return std::nullopt;
    auto const* c = o->if_contains("code");
    auto const* m = o->if_contains("message");
    if (!c || !m || !m->is_string())
        return std::nullopt;
    std::int64_t code_value = 0;
    if (c->is_int64())
        code_value = c->get_int64();
    else if (c->is_uint64() && c->get_uint64() <= static_cast<std::uint64_t>(INT32_MAX))
        code_value = static_cast<std::int64_t>(c->get_uint64());
    else
        return std::nullopt;
    if (code_value < INT32_MIN || code_value > INT32_MAX)
        return std::nullopt;
    error_object e{static_cast<std::int32_t>(code_value), std::string(m->get_string()), {}};
    if (auto const* d = o->if_contains("data"))
        e.data = *d;
    return e;
}

// `o` is the caller's to give: its params move into the message rather than being copied.
parsed parse_call(boost::json::object& o, envelope const& e) {
    std::optional<request_id> id = echoable_id(e);
    if (!has_version_2_0(e))
        return fail(parse_errc::bad_jsonrpc_version, id);
    auto const& method = *e.method;
    if (!method.is_string())
        return fail(parse_errc::bad_method, id);
    if (e.id && !id)
        return fail(parse_errc::bad_id);
    // In the frame's storage, so the move below is a move, not a copy into the default heap.
    boost::json::value params(o.storage());
    if (auto* p = e.params) {
        if (!p->is_object() && !p->is_array())
            return fail(parse_errc::bad_params, id);
        params = std::move(*p);
    }
    if (id)
        return message{request{std::move(*id), std::string(method.get_string()), std::move(params)}};
    return message{notification{std::string(method.get_string()), std::move(params)}};
}

// Likewise: a result moves into the message.
parsed parse_reply(envelope const& e) {
    auto* result = e.result;
    auto const* error = e.error;
    if (!has_version_2_0(e) || (result && error))
        return fail_silently(parse_errc::bad_response);
    auto const* id_member = e.id;
    if (!id_member)
        return fail_silently(parse_errc::bad_response);
    auto id = request_id::from_json(*id_member);
    if (result) {
        if (!id)
            return fail_silently(parse_errc::bad_response);
        return message{response{std::move(*id), std::move(*result)}};
    }
    if (!id && !id_member->is_null())
        return fail_silently(parse_errc::bad_response);
    auto err = read_error_object(*error);
    if (!err)
        return fail_silently(parse_errc::bad_response);
    return message{error_response{std::move(id), std::move(*err)}};
}

// parse_message on a value the caller gives up (its parts move into the message).
parsed parse_owned(boost::json::value& v) {
    auto* o = v.if_object();
    if (!o)
        return fail(parse_errc::not_an_object);
    auto const e = members_of(*o);
    if (e.method)
        return parse_call(*o, e);
    if (e.result || e.error)
        return parse_reply(e);
    // No method and no result/error: "method" is missing.
    if (!has_version_2_0(e))
        return fail(parse_errc::bad_jsonrpc_version, echoable_id(e));
    return fail(parse_errc::bad_method, echoable_id(e));
}

} // namespace

parsed parse_message(boost::json::value const& v) {
    boost::json::value copy = v;
    return parse_owned(copy);
}

frame parse_frame(std::string_view bytes, parse_limits const& limits, boost::json::storage_ptr storage) {
    if (bytes.size() > limits.max_bytes)
        return frame{parsed{fail(parse_errc::too_large)}};

    boost::json::parse_options options;
    options.max_depth = limits.max_depth;
    auto text = detail::parse_value(bytes, std::move(storage), options);
    if (text.ec) {
        if (text.ec == boost::json::error::too_deep)
            return frame{parsed{fail(parse_errc::too_deep)}};
        return frame{parsed{fail(parse_errc::bad_json)}};
    }
    // A number too large for a double reads as infinity, which no JSON text can carry back out; such a frame
    // is refused whole rather than echoed as invalid JSON later.
    if (!text.all_finite)
        return frame{parsed{fail(parse_errc::bad_json)}};
    auto& v = text.value;

    if (auto* a = v.if_array()) {
        if (a->empty())
            return frame{parsed{fail(parse_errc::empty_batch)}};
        if (a->size() > limits.max_batch)
            return frame{parsed{fail(parse_errc::too_large)}};
        batch b;
        b.elements.reserve(a->size());
        for (auto& element : *a)
            b.elements.push_back(parse_owned(element));
        return frame{std::move(b)};
    }
    return frame{parse_owned(v)};
}

} // namespace duet::jsonrpc
