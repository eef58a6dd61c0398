// File: tests/support/schema_validator.hpp
//
// Validates JSON values against the official MCP JSON schemas (../shared/spec/<version>/schema.json) from C++
// tests. One Node process (tests/support/validate_schema.mjs, Ajv from tests/interop/node_modules) is started
// on first use and kept for the life of the validator, so a test can send hundreds of checks cheaply; a batch
// is written and read concurrently, so its size is unbounded.
//
//     auto& schemas = duet::test::schema_validator::shared();
//     DUET_SKIP_WITHOUT_SCHEMAS(schemas);                   // no ../shared, node or npm packages: SKIPPED
//     if (auto* v = duet::test::schemas_or_skip()) ...      // the same, for checks at the end of a test
//     auto r = schemas.validate("2026-07-28", "CallToolResult", result);
//     EXPECT_TRUE(r.ok) << r.errors;
//     auto bad = schemas.validate("2025-06-18", "Tool", tool, duet::test::schema_mode::closed);
//     EXPECT_TRUE(bad.rejected());                          // checked, and does not conform
//
// `type` is a definition name of that version's schema (`$defs` in 2020-12, `definitions` in draft-07), e.g.
// "ServerResult" or "ListToolsResult". In schema_mode::closed every object schema that lists its properties
// also rejects properties it does not list (metadata maps and embedded JSON Schemas stay open), which is how
// a test proves a legacy result carries no field its version does not define; the official schemas themselves
// are open. Not thread-safe: use one validator per thread.
#pragma once

#include <boost/json/value.hpp>

#include <sys/types.h>

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace duet::test {

/// How a skip reason starts when what is missing may legitimately be missing on a user's machine; scripts/
/// run-tests counts such skips and fails `make test` on any other (tests/support/test_main.cpp logs them).
inline constexpr std::string_view optional_skip = "optional: ";

enum class schema_mode : bool { open, closed };

/// One value to check against one definition of one version's schema.
struct schema_check {
    std::string version; ///< "2026-07-28", "2025-11-25", "2025-06-18"
    std::string type;    ///< definition name, e.g. "ListToolsResult"
    boost::json::value value;
    schema_mode mode = schema_mode::open;
};

struct schema_verdict {
    bool ok = false;
    /// The check could not be made: unknown version or type, validator unavailable or broken. Never a verdict
    /// on the value, so a negative test must not accept it as "invalid".
    bool bad_check = false;
    std::string errors{};

    /// The value was checked and does not conform: what a negative test asserts.
    [[nodiscard]] bool rejected() const noexcept { return !ok && !bad_check; }
};

struct schema_validator_paths {
    std::filesystem::path shared_dir{}; ///< holds spec/<version>/schema.json
    std::filesystem::path source_dir{}; ///< the repository: tests/support/*.mjs, tests/interop/node_modules
    std::filesystem::path node{};       ///< the node binary; empty: $DUET_NODE, else `node` on PATH
};

class schema_validator {
public:
    /// Paths from the build: DUET_SHARED_DIR and DUET_SOURCE_DIR.
    schema_validator();
    explicit schema_validator(schema_validator_paths paths);
    ~schema_validator();
    schema_validator(schema_validator const&) = delete;
    schema_validator& operator=(schema_validator const&) = delete;

    /// One validator per test process.
    static schema_validator& shared();

    /// False when ../shared/spec, node, the validator script or tests/interop/node_modules is missing.
    [[nodiscard]] bool available() const noexcept { return unavailable_.empty(); }
    /// Why available() is false; empty when it is true. Starts with `optional_skip` only when what is missing
    /// is ../shared (which a clone may lack); node and ajv are installed by bootstrap, so their absence is a
    /// broken install, and scripts/run-tests fails a test skipped for it.
    [[nodiscard]] std::string const& unavailable_reason() const noexcept { return unavailable_; }

    [[nodiscard]] schema_verdict validate(std::string_view version, std::string_view type,
                                          boost::json::value const& value,
                                          schema_mode mode = schema_mode::open);
    /// One verdict per check, in order, from one round trip.
    [[nodiscard]] std::vector<schema_verdict> validate(std::span<schema_check const> checks);

private:
    bool start();
    void stop() noexcept;
    std::vector<schema_verdict> fail_all(std::size_t n, std::string const& why) const;

    schema_validator_paths paths_;
    std::string unavailable_;
    std::string broken_; ///< set once the process failed; later checks report it
    int fd_ = -1;
    pid_t pid_ = -1;
    std::string pending_; ///< output read past the last complete line
};

/// The shared validator when it can run here. Otherwise null, and the calling test is recorded as skipped
/// with the reason: a test whose schema checks could not run must not report itself passed.
[[nodiscard]] schema_validator* schemas_or_skip();

} // namespace duet::test

/// Skips the calling test (GTEST_SKIP) when `validator` cannot run here, with unavailable_reason().
#define DUET_SKIP_WITHOUT_SCHEMAS(validator)                                                                 \
    do {                                                                                                     \
        if (!(validator).available())                                                                        \
            GTEST_SKIP() << (validator).unavailable_reason();                                                \
    } while (false)
