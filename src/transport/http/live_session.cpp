#include "live_session.hpp"

#include <duet/jsonrpc/codec.hpp>
#include <duet/jsonrpc/json_text.hpp>

#include <boost/json/parse.hpp>

namespace duet::transport::http {

namespace json = boost::json;

void live_session::on_broadcast(std::string_view payload) {
    auto parsed = jsonrpc::parse_frame(payload, {});
    if (auto* one = std::get_if<jsonrpc::parsed>(&parsed.content); one && *one && conn)
        conn->receive(std::move(**one));
}

void live_session::on_state(std::string_view state) {
    if (auto r = decode_record(state); r && conn)
        conn->refresh_session(std::move(r->state));
}

void live_session::on_events_here(bool here) {
    if (conn)
        conn->deliver_session_events(here);
}

void live_session::on_ended() {
    if (conn)
        conn->finish([] {});
}

// A JSON line of the endpoint and principal (JSON escapes the newline a principal holds), then the state.
std::string encode_record(session_record const& r) {
    return jsonrpc::to_json_text(json::object{{"path", r.path}, {"principal", r.principal}}) + '\n' +
           server::to_json_text(r.state);
}

boost::system::result<session_record, std::string> decode_record(std::string_view text) {
    using result = boost::system::result<session_record, std::string>;
    auto const nl = text.find('\n');
    if (nl == std::string_view::npos)
        return result(boost::system::in_place_error, "a stored session without its state");
    boost::system::error_code ec;
    auto const head = json::parse(text.substr(0, nl), ec);
    auto const* o = !ec ? head.if_object() : nullptr;
    auto const* path = o ? o->if_contains("path") : nullptr;
    auto const* principal = o ? o->if_contains("principal") : nullptr;
    if (!path || !path->is_string() || !principal || !principal->is_string())
        return result(boost::system::in_place_error, "a stored session without its endpoint or principal");
    auto state = server::session_state_from_json(text.substr(nl + 1));
    if (!state)
        return result(boost::system::in_place_error, state.error());
    return session_record{std::string(path->get_string()), std::string(principal->get_string()),
                          std::move(*state)};
}

} // namespace duet::transport::http
