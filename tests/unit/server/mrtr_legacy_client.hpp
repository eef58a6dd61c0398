// File: tests/unit/server/mrtr_legacy_client.hpp
//
// What a legacy client does in the in-process multi round-trip tests: it opens a 2025-11-25 session and
// answers the real server-to-client requests a handler's questions become.
//
//     class MrtrLegacy : public Mrtr, protected legacy_client_steps {};
//     open(h);
//     auto next = answer(h, "elicitation/create", accepted("name", "Ada"), 0, form("Name?", "name"));
#pragma once

#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "unit/server/harness.hpp"
#include "unit/server/mrtr_support.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <string_view>

namespace duet::test {

struct legacy_client_steps {
    static void open(harness& h, boost::json::object caps = all_caps()) {
        h.send(initialize_request("init", "2025-11-25", std::move(caps)));
        result_of(h.response("init"));
        h.send(initialized_notification());
    }

    /// Waits for the server's next request of `method` after message `from`, checks its params when given
    /// (without the key hint), and answers it with `result`; the index to look from next.
    static std::size_t answer(harness& h, std::string_view method, boost::json::object result,
                              std::size_t from, boost::json::value const& want_params = nullptr) {
        auto const i =
            h.wait_for([&](boost::json::value const& m) { return is_server_request(m, method); }, from);
        if (!i)
            return from;
        auto const& request = h.messages()[*i].as_object();
        if (!want_params.is_null()) {
            EXPECT_EQ(without_input_key(request.at("params")), want_params) << boost::json::value(request);
        }
        h.send(client_response(request.at("id"), std::move(result)));
        return *i + 1;
    }
};

} // namespace duet::test
