#include "task_entry.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace duet::server::detail {

namespace json = boost::json;
using clock = std::chrono::system_clock;

namespace {

std::int64_t ms_of(clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

clock::time_point at_ms(std::int64_t ms) {
    return clock::time_point(std::chrono::duration_cast<clock::duration>(std::chrono::milliseconds(ms)));
}

std::optional<std::int64_t> int_of(json::object const& o, std::string_view key) {
    auto const* v = o.if_contains(key);
    if (!v || !v->is_int64())
        return std::nullopt;
    return v->get_int64();
}

} // namespace

store::task_record to_record(task_entry const& e) {
    json::object body{{"status", protocol::to_string(e.view.status)},
                      {"created", ms_of(e.view.created)},
                      {"updated", ms_of(e.view.updated)},
                      {"era", protocol::to_string(e.era)},
                      {"version", protocol::to_string(e.version)}};
    if (!e.view.status_message.empty())
        body["statusMessage"] = e.view.status_message;
    if (e.view.ttl_ms)
        body["ttl"] = *e.view.ttl_ms;
    if (e.view.poll_interval_ms)
        body["poll"] = *e.view.poll_interval_ms;
    if (e.result)
        body["result"] = *e.result;
    if (e.error) {
        json::object error{{"code", e.error->code}, {"message", e.error->message}};
        if (!e.error->data.is_null())
            error["data"] = e.error->data;
        body["error"] = std::move(error);
    }
    if (!e.input_requests.empty())
        body["inputRequests"] = e.input_requests;
    if (!e.answers.empty())
        body["answers"] = e.answers;
    return {.id = e.view.id,
            .owner = e.owner,
            .body = json::serialize(body),
            .terminal = protocol::is_terminal(e.view.status),
            .expires = e.expires};
}

std::optional<task_entry> from_record(store::task_record const& r) {
    boost::system::error_code ec;
    auto parsed = json::parse(r.body, ec);
    if (ec || !parsed.is_object())
        return std::nullopt;
    auto const& body = parsed.get_object();
    auto const* status = body.if_contains("status");
    auto const* era = body.if_contains("era");
    auto const* version = body.if_contains("version");
    auto const created = int_of(body, "created");
    auto const updated = int_of(body, "updated");
    if (!status || !status->is_string() || !era || !era->is_string() || !version || !version->is_string() ||
        !created || !updated)
        return std::nullopt;
    task_entry e;
    auto const s = protocol::parse_task_status(status->get_string());
    auto const v = protocol::parse_version(version->get_string());
    if (!s || !v)
        return std::nullopt;
    e.view.id = r.id;
    e.view.status = *s;
    e.view.created = at_ms(*created);
    e.view.updated = at_ms(*updated);
    e.view.ttl_ms = int_of(body, "ttl");
    e.view.poll_interval_ms = int_of(body, "poll");
    if (auto const* m = body.if_contains("statusMessage"); m && m->is_string())
        e.view.status_message = m->get_string();
    e.owner = r.owner;
    e.era = era->get_string() == protocol::to_string(protocol::era::legacy) ? protocol::era::legacy
                                                                            : protocol::era::modern;
    e.version = *v;
    if (auto const* result = body.if_contains("result"); result && result->is_object())
        e.result = result->get_object();
    if (auto const* error = body.if_contains("error"); error && error->is_object()) {
        auto const& o = error->get_object();
        jsonrpc::error_object err;
        if (auto code = int_of(o, "code"))
            err.code = static_cast<std::int32_t>(*code);
        if (auto const* m = o.if_contains("message"); m && m->is_string())
            err.message = m->get_string();
        if (auto const* d = o.if_contains("data"))
            err.data = *d;
        e.error = std::move(err);
    }
    if (auto const* asked = body.if_contains("inputRequests"); asked && asked->is_object())
        e.input_requests = asked->get_object();
    if (auto const* given = body.if_contains("answers"); given && given->is_object())
        e.answers = given->get_object();
    e.expires = r.expires;
    e.orphaned = r.orphaned && !protocol::is_terminal(e.view.status);
    return e;
}

} // namespace duet::server::detail
