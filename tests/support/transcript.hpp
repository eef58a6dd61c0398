// File: tests/support/transcript.hpp
//
// A record of one conversation with a server, the messages the test sent and every message the server wrote,
// each tagged with the era and protocol version it belongs to, so that the whole transcript can be checked
// against the official MCP schemas (../shared/spec/<version>/schema.json) in one batch.
//
//     transcript t;
//     t.record_sent(initialize_request(1, "2025-11-25"));
//     t.record_received(line);                 // fails the test unless the line is JSON-RPC
//     t.expect_schema_valid(schema_validator::shared());
//
// Era of a received message (ERA-POLICY, DIGEST §14):
//  - a response takes the era of the request it answers, fixed when the request was sent: modern when its
//    `_meta` claimed a protocol version (and the server serves modern requests), legacy inside a session or
//    for `initialize` (whose answer sets the session's version), else none (an error for a request no era
//    admits);
//  - a notification tagged with a subscriptionId is modern; progress follows the request that carried its
//    token; log messages follow the requests in flight; list_changed / updated without a tag are legacy;
//  - a request from the server belongs to the legacy session.
// Legacy results are checked in closed mode (no field the version does not define); modern ones in open mode.
// Messages of a legacy version without a schema here (2025-03-26, 2024-11-05) are not checked.
#pragma once

#include "support/schema_validator.hpp"

#include <boost/json/value.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace duet::test {

/// Which eras the server under test serves (duet serve --legacy-only / --modern-only).
enum class served_eras { both, legacy_only, modern_only };

class transcript {
public:
    explicit transcript(served_eras eras = served_eras::both) : eras_(eras) {}

    /// A message the test sends: a request, a notification, or an answer to a server request.
    void record_sent(boost::json::value const& message);
    /// A legacy session opened elsewhere at `version` (a shared store restored it on this connection): what
    /// follows is checked as that session's.
    void record_restored_session(std::string version) { legacy_version_ = std::move(version); }
    /// One line the server wrote. Adds a test failure unless it is one JSON-RPC 2.0 message or a batch of
    /// them. Returns the parsed message (null when it was not JSON).
    boost::json::value record_received(std::string_view line);

    /// Every message the server wrote, in order (a batch reply is one array).
    [[nodiscard]] std::vector<boost::json::value> const& received() const noexcept { return received_; }

    /// Checks every received message against the schema of its era and version; failures are test failures
    /// naming the message. Returns how many schema checks were made.
    std::size_t expect_schema_valid(schema_validator& validator) const;
    /// The same against schema_validator::shared(), expecting at least one check; when the schemas are
    /// unavailable, records the calling test as skipped with the reason (schemas_or_skip).
    void expect_schema_valid() const;

    /// The negotiated legacy version, once an initialize was answered.
    [[nodiscard]] std::optional<std::string> const& legacy_version() const noexcept {
        return legacy_version_;
    }

private:
    enum class era { none, legacy, modern };
    struct tag {
        era what = era::none;
        std::string version; ///< legacy: the session's version; empty for modern and none
    };
    struct sent_request {
        std::string method;
        tag at;
    };
    struct entry {
        boost::json::value message;
        std::vector<tag> eras; ///< each era this message must validate in (two when it cannot be told)
        std::string method;    ///< the method a response answers
    };

    tag classify_notification(boost::json::object const& n) const;
    void record_one(boost::json::value const& v, std::vector<entry>& out);

    served_eras eras_;
    std::optional<std::string> legacy_version_;
    std::map<std::string, sent_request> requests_; ///< by serialized id ("7" and "\"7\"" differ)
    std::map<std::string, tag> progress_tokens_;   ///< by serialized token
    std::map<std::string, tag> listens_;           ///< by serialized listen id
    std::map<std::string, tag> in_flight_;         ///< requests not yet answered, by serialized id
    std::vector<boost::json::value> received_;
    std::vector<entry> checks_;
};

} // namespace duet::test
