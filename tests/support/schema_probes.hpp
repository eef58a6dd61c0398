// File: tests/support/schema_probes.hpp
//
// The requests the schema suites (tests/stdio/schema_test.cpp, tests/http/schema_test.cpp) send to the demo
// server (apps/duet/demo_server.cpp) in both eras, so that every kind of result and error it can write is in
// the transcript checked against the official schemas: each list, reads (found, templated, missing), prompts
// (with and without arguments), completion, tool calls (plain, typed, bad arguments, unknown), a bad cursor
// and an unknown method, then the legacy-only session methods.
//
//     int id = 100;
//     send_schema_probes([&](boost::json::value const& m) { client.send(m); }, id);
#pragma once

#include "stdio/messages.hpp"

#include <boost/json/value.hpp>

#include <functional>

namespace duet::test {

/// Sends each probe through `send`, ids counting up from `next_id` (left after the last one used).
inline void send_schema_probes(std::function<void(boost::json::value const&)> const& send, int& next_id) {
    namespace json = boost::json;
    auto both = [&](std::string_view method, json::object params = {}) {
        send(legacy_request(next_id++, method, params));
        send(modern_request(next_id++, method, params));
    };
    both("tools/list");
    both("prompts/list");
    both("resources/list");
    both("resources/templates/list");
    both("resources/read", {{"uri", "duet://demo/readme"}});
    both("resources/read", {{"uri", "duet://demo/greeting/grace"}});
    both("resources/read", {{"uri", "duet://demo/nothing"}});
    both("prompts/get",
         {{"name", "review"}, {"arguments", {{"language", "rust"}, {"code", "fn main() {}"}}}});
    both("prompts/get", {{"name", "review"}});
    both("completion/complete", {{"ref", {{"type", "ref/resource"}, {"uri", "duet://demo/greeting/{name}"}}},
                                 {"argument", {{"name", "name"}, {"value", "a"}}}});
    both("tools/call", call_params("echo", {{"text", "hi"}}));
    both("tools/call", call_params("add", {{"a", 1.5}, {"b", 2}}));
    both("tools/call", call_params("add", {{"a", "x"}, {"b", 2}}));
    both("tools/call", call_params("nope"));
    both("tools/list", {{"cursor", "bogus"}});
    both("no/such/method");
    send(legacy_request(next_id++, "ping"));
    send(legacy_request(next_id++, "logging/setLevel", {{"level", "debug"}}));
    send(legacy_request(next_id++, "resources/subscribe", {{"uri", "duet://demo/readme"}}));
}

} // namespace duet::test
