// Tests for duet/protocol/tasks.hpp and the rows tasks add to the rest of the protocol core: the status
// machine, how one tools/call runs (plain, task, refused) per era, version and tool, the Task shapes of both
// eras, the params of tasks/* and of a 2025-11-25 task-augmented call, the input responses a task accepts,
// and the tasks rows of the method table, the capabilities, result shaping and admission.
//
// Requirements: 2025-11-25 experimental tasks (schema CreateTaskResult {task}, Task with `ttl` /
// `pollInterval`, `execution.taskSupport`, ServerCapabilities.tasks); the tasks extension SEP-2663
// (../shared/spec/ext-tasks/tasks.md: the server decides, a flat `resultType:"task"` CreateTaskResult with
// `ttlMs` / `pollIntervalMs`, tasks/get answers `resultType:"complete"`, -32021 naming the extension for a
// request that does not declare it). Where ../shared is at hand every shape is validated against the official
// schema of its era; where it is not, those tests skip with an `optional:` reason.
#include <duet/protocol/admission.hpp>
#include <duet/protocol/capabilities.hpp>
#include <duet/protocol/errors.hpp>
#include <duet/protocol/method_table.hpp>
#include <duet/protocol/shaping.hpp>
#include <duet/protocol/tasks.hpp>
#include <duet/protocol/version.hpp>

#include "support/schema_validator.hpp"
#include "unit/protocol/admission_support.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace duet::test::tasks_unit {

namespace bj = boost::json;
using namespace duet::protocol;
using duet::test::schema_check;
using duet::test::schema_mode;
using duet::test::schema_validator;
using std::chrono::milliseconds;
using std::chrono::system_clock;

bj::object parse_object(std::string_view text) {
    return bj::parse(text).as_object();
}

system_clock::time_point at_ms(std::int64_t ms) {
    return system_clock::time_point{std::chrono::duration_cast<system_clock::duration>(milliseconds{ms})};
}

// 2023-11-14T22:13:20.123Z and one minute later.
constexpr std::int64_t created_ms = 1'700'000'000'123;
constexpr std::int64_t updated_ms = created_ms + 60'000;

task_view sample_task(task_status s = task_status::working) {
    return task_view{.id = "4f0c2a9e8b7d6c5a4f0c2a9e8b7d6c5a",
                     .status = s,
                     .status_message = "",
                     .created = at_ms(created_ms),
                     .updated = at_ms(updated_ms),
                     .ttl_ms = 3'600'000,
                     .poll_interval_ms = 1000};
}

std::string describe_error(error_object const& e) {
    return std::to_string(e.code) + " " + e.message + " data=" + bj::serialize(e.data);
}

constexpr std::array all_statuses{task_status::working, task_status::input_required, task_status::completed,
                                  task_status::failed, task_status::cancelled};

// ---- the status machine -----------------------------------------------------------------------------------

TEST(TaskStatusMachine, NamesRoundTripAndNothingElseParses) {
    EXPECT_EQ(to_string(task_status::working), "working");
    EXPECT_EQ(to_string(task_status::input_required), "input_required");
    EXPECT_EQ(to_string(task_status::completed), "completed");
    EXPECT_EQ(to_string(task_status::failed), "failed");
    EXPECT_EQ(to_string(task_status::cancelled), "cancelled");
    for (auto s : all_statuses)
        EXPECT_EQ(parse_task_status(to_string(s)), s) << to_string(s);
    for (std::string_view const bad : {"", "Working", "canceled", "input-required", "done", "working "})
        EXPECT_EQ(parse_task_status(bad), std::nullopt) << '"' << bad << '"';
}

TEST(TaskStatusMachine, OnlyCompletedFailedAndCancelledAreTerminal) {
    EXPECT_FALSE(is_terminal(task_status::working));
    EXPECT_FALSE(is_terminal(task_status::input_required));
    EXPECT_TRUE(is_terminal(task_status::completed));
    EXPECT_TRUE(is_terminal(task_status::failed));
    EXPECT_TRUE(is_terminal(task_status::cancelled));
}

// Every one of the 25 pairs, restated: working <-> input_required, any non-terminal status to any terminal
// one, nothing out of a terminal status, and no status to itself.
TEST(TaskStatusMachine, MayMoveFollowsTheWholeTable) {
    // rows: from; columns: to; both in the order of all_statuses
    constexpr bool allowed[5][5] = {
        {false, true, true, true, true},     // working
        {true, false, true, true, true},     // input_required
        {false, false, false, false, false}, // completed
        {false, false, false, false, false}, // failed
        {false, false, false, false, false}, // cancelled
    };
    for (std::size_t from = 0; from < all_statuses.size(); ++from)
        for (std::size_t to = 0; to < all_statuses.size(); ++to)
            EXPECT_EQ(may_move(all_statuses[from], all_statuses[to]), allowed[from][to])
                << to_string(all_statuses[from]) << " -> " << to_string(all_statuses[to]);
}

TEST(TaskStatusMachine, TerminalStatusesNeverMove) {
    for (auto from : all_statuses) {
        if (!is_terminal(from))
            continue;
        for (auto to : all_statuses)
            EXPECT_FALSE(may_move(from, to)) << to_string(from) << " -> " << to_string(to);
    }
}

TEST(TaskStatusMachine, TaskSupportNamesAreTheSchemaWords) {
    EXPECT_EQ(to_string(task_support::forbidden), "forbidden");
    EXPECT_EQ(to_string(task_support::optional), "optional");
    EXPECT_EQ(to_string(task_support::required), "required");
}

// ---- decide_task: how one tools/call runs -----------------------------------------------------------------

enum class runs_as { plain, task, needs_extension, not_found };

struct decision_row {
    std::string_view name;
    task_support support;
    version v;
    bool declares_extension;
    bool legacy_asked;
    runs_as expected;
};

void PrintTo(decision_row const& row, std::ostream* os) {
    *os << row.name;
}

class TaskDecision : public ::testing::TestWithParam<decision_row> {};

TEST_P(TaskDecision, RunsTheCallAsTheTableSays) {
    auto const& row = GetParam();
    auto const d =
        decide_task("slow", row.support, era_of(row.v), row.v, row.declares_extension, row.legacy_asked);
    switch (row.expected) {
    case runs_as::plain:
        EXPECT_EQ(d.what, task_decision::kind::plain);
        EXPECT_FALSE(d.refusal) << describe_error(*d.refusal);
        break;
    case runs_as::task:
        EXPECT_EQ(d.what, task_decision::kind::task);
        EXPECT_FALSE(d.refusal) << describe_error(*d.refusal);
        break;
    case runs_as::needs_extension: {
        ASSERT_EQ(d.what, task_decision::kind::refuse);
        ASSERT_TRUE(d.refusal);
        EXPECT_EQ(d.refusal->code, static_cast<int>(errc::missing_required_client_capability));
        // SEP-2663 §Capability Negotiation: data.requiredCapabilities names the extension with {}.
        EXPECT_EQ(
            d.refusal->data,
            bj::parse(R"({"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}})"))
            << describe_error(*d.refusal);
        break;
    }
    case runs_as::not_found:
        ASSERT_EQ(d.what, task_decision::kind::refuse);
        ASSERT_TRUE(d.refusal);
        EXPECT_EQ(d.refusal->code, static_cast<int>(errc::method_not_found)) << describe_error(*d.refusal);
        ASSERT_TRUE(d.refusal->data.is_object()) << describe_error(*d.refusal);
        EXPECT_EQ(d.refusal->data.as_object().at("method"), "tools/call") << describe_error(*d.refusal);
        EXPECT_NE(d.refusal->message.find("Method not found"), std::string::npos)
            << describe_error(*d.refusal);
        break;
    }
}

constexpr auto v_modern = version::v2026_07_28;
constexpr auto v_1125 = version::v2025_11_25;
constexpr auto forbidden = task_support::forbidden;
constexpr auto optional_support = task_support::optional;
constexpr auto required = task_support::required;

decision_row const decision_rows[] = {
    // Modern: the server decides, for a request that declares the extension; `params.task` means nothing.
    {"ModernForbiddenDeclaredIsPlain", forbidden, v_modern, true, false, runs_as::plain},
    {"ModernForbiddenUndeclaredIsPlain", forbidden, v_modern, false, false, runs_as::plain},
    {"ModernForbiddenDeclaredAndAskedIsPlain", forbidden, v_modern, true, true, runs_as::plain},
    {"ModernOptionalDeclaredIsTask", optional_support, v_modern, true, false, runs_as::task},
    {"ModernOptionalUndeclaredIsPlain", optional_support, v_modern, false, false, runs_as::plain},
    {"ModernOptionalUndeclaredButAskedIsPlain", optional_support, v_modern, false, true, runs_as::plain},
    {"ModernRequiredDeclaredIsTask", required, v_modern, true, false, runs_as::task},
    {"ModernRequiredUndeclaredNeedsTheExtension", required, v_modern, false, false, runs_as::needs_extension},
    {"ModernRequiredUndeclaredButAskedNeedsTheExtension", required, v_modern, false, true,
     runs_as::needs_extension},
    // 2025-11-25: the client asks with params.task; the extension declaration means nothing.
    {"V20251125ForbiddenNotAskedIsPlain", forbidden, v_1125, false, false, runs_as::plain},
    {"V20251125ForbiddenAskedIsMethodNotFound", forbidden, v_1125, false, true, runs_as::not_found},
    {"V20251125ForbiddenAskedWithExtensionIsMethodNotFound", forbidden, v_1125, true, true,
     runs_as::not_found},
    {"V20251125OptionalNotAskedIsPlain", optional_support, v_1125, false, false, runs_as::plain},
    {"V20251125OptionalNotAskedWithExtensionIsPlain", optional_support, v_1125, true, false, runs_as::plain},
    {"V20251125OptionalAskedIsTask", optional_support, v_1125, false, true, runs_as::task},
    {"V20251125RequiredAskedIsTask", required, v_1125, false, true, runs_as::task},
    {"V20251125RequiredNotAskedIsMethodNotFound", required, v_1125, false, false, runs_as::not_found},
    {"V20251125RequiredNotAskedWithExtensionIsMethodNotFound", required, v_1125, true, false,
     runs_as::not_found},
    // Older legacy versions have no tasks: asking means nothing, and a required tool cannot run.
    {"V20250618ForbiddenAskedIsPlain", forbidden, version::v2025_06_18, false, true, runs_as::plain},
    {"V20250618OptionalAskedIsPlain", optional_support, version::v2025_06_18, false, true, runs_as::plain},
    {"V20250618OptionalNotAskedIsPlain", optional_support, version::v2025_06_18, true, false, runs_as::plain},
    {"V20250618RequiredAskedIsMethodNotFound", required, version::v2025_06_18, false, true,
     runs_as::not_found},
    {"V20250618RequiredNotAskedIsMethodNotFound", required, version::v2025_06_18, false, false,
     runs_as::not_found},
    {"V20250326ForbiddenAskedIsPlain", forbidden, version::v2025_03_26, false, true, runs_as::plain},
    {"V20250326OptionalAskedIsPlain", optional_support, version::v2025_03_26, true, true, runs_as::plain},
    {"V20250326RequiredAskedIsMethodNotFound", required, version::v2025_03_26, true, true,
     runs_as::not_found},
    {"V20250326RequiredNotAskedIsMethodNotFound", required, version::v2025_03_26, false, false,
     runs_as::not_found},
    {"V20241105ForbiddenAskedIsPlain", forbidden, version::v2024_11_05, false, true, runs_as::plain},
    {"V20241105OptionalAskedIsPlain", optional_support, version::v2024_11_05, false, true, runs_as::plain},
    {"V20241105RequiredAskedIsMethodNotFound", required, version::v2024_11_05, false, true,
     runs_as::not_found},
    {"V20241105RequiredNotAskedIsMethodNotFound", required, version::v2024_11_05, false, false,
     runs_as::not_found},
};

INSTANTIATE_TEST_SUITE_P(Tasks, TaskDecision, ::testing::ValuesIn(decision_rows),
                         [](auto const& p) { return std::string(p.param.name); });

TEST(TaskDecisionRefusals, LegacyRefusalsNameTheTool) {
    auto const forbidden_asked = decide_task("slow-tool", forbidden, era::legacy, v_1125, false, true);
    ASSERT_TRUE(forbidden_asked.refusal);
    EXPECT_NE(bj::serialize(forbidden_asked.refusal->data).find("slow-tool"), std::string::npos)
        << describe_error(*forbidden_asked.refusal);
    auto const required_old =
        decide_task("slow-tool", required, era::legacy, version::v2025_06_18, false, false);
    ASSERT_TRUE(required_old.refusal);
    EXPECT_NE(bj::serialize(required_old.refusal->data).find("slow-tool"), std::string::npos)
        << describe_error(*required_old.refusal);
}

// ---- iso8601, task_json and create_task_result ------------------------------------------------------------

TEST(TaskShapes, Iso8601WritesUtcWithMilliseconds) {
    EXPECT_EQ(iso8601(at_ms(0)), "1970-01-01T00:00:00.000Z");
    EXPECT_EQ(iso8601(at_ms(created_ms)), "2023-11-14T22:13:20.123Z");
    EXPECT_EQ(iso8601(at_ms(951'782'400'007)), "2000-02-29T00:00:00.007Z");
    EXPECT_EQ(iso8601(at_ms(4'102'444'799'999)), "2099-12-31T23:59:59.999Z");
    std::regex const shape(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)");
    auto const now = iso8601(system_clock::now());
    EXPECT_TRUE(std::regex_match(now, shape)) << now;
}

TEST(TaskShapes, ModernTaskUsesTtlMsAndPollIntervalMs) {
    auto t = sample_task(task_status::input_required);
    t.status_message = "waiting for you";
    EXPECT_EQ(bj::value(task_json(t, era::modern)),
              bj::parse(R"({"taskId":"4f0c2a9e8b7d6c5a4f0c2a9e8b7d6c5a","status":"input_required",
                            "statusMessage":"waiting for you","createdAt":"2023-11-14T22:13:20.123Z",
                            "lastUpdatedAt":"2023-11-14T22:14:20.123Z","ttlMs":3600000,
                            "pollIntervalMs":1000})"));
}

TEST(TaskShapes, LegacyTaskUsesTtlAndPollInterval) {
    auto t = sample_task(task_status::failed);
    t.status_message = "it broke";
    EXPECT_EQ(bj::value(task_json(t, era::legacy)),
              bj::parse(R"({"taskId":"4f0c2a9e8b7d6c5a4f0c2a9e8b7d6c5a","status":"failed",
                            "statusMessage":"it broke","createdAt":"2023-11-14T22:13:20.123Z",
                            "lastUpdatedAt":"2023-11-14T22:14:20.123Z","ttl":3600000,"pollInterval":1000})"));
}

TEST(TaskShapes, UnlimitedTtlIsNullAndNoPollIntervalIsAbsent) {
    auto t = sample_task();
    t.ttl_ms.reset();
    t.poll_interval_ms.reset();
    auto const modern = task_json(t, era::modern);
    ASSERT_TRUE(modern.contains("ttlMs")) << "ttlMs is required, null for unlimited";
    EXPECT_TRUE(modern.at("ttlMs").is_null());
    EXPECT_FALSE(modern.contains("pollIntervalMs"));
    auto const legacy = task_json(t, era::legacy);
    ASSERT_TRUE(legacy.contains("ttl")) << "ttl is required, null for unlimited";
    EXPECT_TRUE(legacy.at("ttl").is_null());
    EXPECT_FALSE(legacy.contains("pollInterval"));
}

TEST(TaskShapes, EmptyStatusMessageIsOmittedInBothEras) {
    auto const t = sample_task();
    EXPECT_FALSE(task_json(t, era::modern).contains("statusMessage"));
    EXPECT_FALSE(task_json(t, era::legacy).contains("statusMessage"));
}

TEST(TaskShapes, NeitherEraLeaksTheOtherErasNames) {
    auto const modern = task_json(sample_task(), era::modern);
    EXPECT_FALSE(modern.contains("ttl"));
    EXPECT_FALSE(modern.contains("pollInterval"));
    auto const legacy = task_json(sample_task(), era::legacy);
    EXPECT_FALSE(legacy.contains("ttlMs"));
    EXPECT_FALSE(legacy.contains("pollIntervalMs"));
    EXPECT_FALSE(legacy.contains("resultType"));
}

TEST(TaskShapes, ModernCreateTaskResultIsFlatWithResultTypeTask) {
    auto const r = create_task_result(sample_task(), era::modern);
    auto want = task_json(sample_task(), era::modern);
    want["resultType"] = "task";
    EXPECT_EQ(r, want);
    EXPECT_FALSE(r.contains("task"));
}

TEST(TaskShapes, LegacyCreateTaskResultWrapsTheTask) {
    auto const r = create_task_result(sample_task(), era::legacy);
    EXPECT_EQ(r, (bj::object{{"task", task_json(sample_task(), era::legacy)}}));
    EXPECT_FALSE(r.contains("resultType"));
    EXPECT_FALSE(r.contains("taskId"));
}

// ---- the official schemas ---------------------------------------------------------------------------------

// The ext-tasks schema is not a protocol version, and the shared validator only loads
// <spec>/<YYYY-MM-DD>/schema.json. This suite's own validator reads a copy of it under a date-shaped name in
// a scratch directory, without the `$id` (the validator registers each schema twice, open and closed, and
// two schemas with one `$id` clash).
constexpr std::string_view ext_tasks_label = "2663-01-01";

struct ext_tasks_schemas {
    std::filesystem::path dir;
    std::unique_ptr<schema_validator> validator;
    std::string unavailable; ///< why there is no validator; starts with optional_skip for a missing ../shared

    ~ext_tasks_schemas() {
        validator.reset();
        std::error_code ec;
        if (!dir.empty())
            std::filesystem::remove_all(dir, ec);
    }
};

void load_ext_tasks(ext_tasks_schemas& out) {
    std::filesystem::path const source =
        std::filesystem::path(DUET_SHARED_DIR) / "spec" / "ext-tasks" / "schema.json";
    std::ifstream in(source);
    if (!in) {
        out.unavailable = std::string(optional_skip) + "no tasks extension schema at " + source.string() +
                          " (../shared is not beside the project)";
        return;
    }
    std::stringstream text;
    text << in.rdbuf();
    auto schema = bj::parse(text.str()).as_object();
    schema.erase("$id");
    out.dir =
        std::filesystem::temp_directory_path() / ("duet-ext-tasks-schema-" + std::to_string(::getpid()));
    auto const version_dir = out.dir / "spec" / std::string(ext_tasks_label);
    std::filesystem::create_directories(version_dir);
    std::ofstream(version_dir / "schema.json") << bj::serialize(schema);
    out.validator = std::make_unique<schema_validator>(
        duet::test::schema_validator_paths{.shared_dir = out.dir, .source_dir = DUET_SOURCE_DIR});
    if (!out.validator->available())
        out.unavailable = out.validator->unavailable_reason();
}

void skip_calling_test_for(std::string const& reason) {
    GTEST_SKIP() << reason;
}

/// The extension's validator when it can run here; otherwise null, and the calling test is skipped with the
/// reason (as duet::test::schemas_or_skip does for the protocol versions).
schema_validator* ext_tasks_or_skip() {
    static ext_tasks_schemas s;
    static bool const loaded = (load_ext_tasks(s), true);
    (void)loaded;
    if (s.validator && s.unavailable.empty())
        return s.validator.get();
    skip_calling_test_for(s.unavailable);
    return nullptr;
}

void expect_valid(schema_validator& v, std::vector<schema_check> const& checks) {
    auto const verdicts = v.validate(checks);
    ASSERT_EQ(verdicts.size(), checks.size());
    for (std::size_t i = 0; i < checks.size(); ++i)
        EXPECT_TRUE(verdicts[i].ok) << checks[i].version << ' ' << checks[i].type << ' '
                                    << bj::serialize(checks[i].value) << ": " << verdicts[i].errors;
}

void expect_rejected(schema_validator& v, std::vector<schema_check> const& checks) {
    auto const verdicts = v.validate(checks);
    ASSERT_EQ(verdicts.size(), checks.size());
    for (std::size_t i = 0; i < checks.size(); ++i)
        EXPECT_TRUE(verdicts[i].rejected())
            << checks[i].version << ' ' << checks[i].type << ' ' << bj::serialize(checks[i].value)
            << ": ok=" << verdicts[i].ok << ' ' << verdicts[i].errors;
}

std::vector<task_view> every_status_sample() {
    std::vector<task_view> out;
    for (auto s : all_statuses) {
        auto t = sample_task(s);
        if (s == task_status::failed)
            t.status_message = "it broke";
        out.push_back(t);
    }
    auto unlimited = sample_task();
    unlimited.ttl_ms.reset();
    unlimited.poll_interval_ms.reset();
    out.push_back(unlimited);
    return out;
}

TEST(TaskSchemas, LegacyShapesValidateAgainstThe20251125Schema) {
    auto* schemas = duet::test::schemas_or_skip();
    if (!schemas)
        return;
    std::vector<schema_check> checks;
    for (auto const& t : every_status_sample()) {
        checks.push_back(
            {"2025-11-25", "CreateTaskResult", create_task_result(t, era::legacy), schema_mode::closed});
        checks.push_back({"2025-11-25", "Task", task_json(t, era::legacy), schema_mode::closed});
        checks.push_back({"2025-11-25", "GetTaskResult", task_json(t, era::legacy), schema_mode::open});
        checks.push_back(
            {"2025-11-25", "TaskStatusNotificationParams", task_json(t, era::legacy), schema_mode::open});
    }
    expect_valid(*schemas, checks);
}

TEST(TaskSchemas, ModernShapesAreNotLegacyTasks) {
    auto* schemas = duet::test::schemas_or_skip();
    if (!schemas)
        return;
    auto const t = sample_task();
    expect_rejected(*schemas,
                    {
                        {"2025-11-25", "CreateTaskResult", create_task_result(t, era::modern)},
                        {"2025-11-25", "Task", task_json(t, era::modern)},
                        {"2025-11-25", "CreateTaskResult", bj::object{{"task", task_json(t, era::modern)}}},
                    });
}

TEST(TaskSchemas, ModernShapesValidateAgainstTheExtensionSchema) {
    auto* ext = ext_tasks_or_skip();
    if (!ext)
        return;
    std::string const v(ext_tasks_label);
    std::vector<schema_check> checks;
    for (auto const& t : every_status_sample()) {
        checks.push_back({v, "CreateTaskResult", create_task_result(t, era::modern)});
        checks.push_back({v, "Task", task_json(t, era::modern), schema_mode::closed});
    }
    auto const working = task_json(sample_task(task_status::working), era::modern);
    checks.push_back({v, "WorkingTask", working, schema_mode::closed});
    checks.push_back({v, "CancelledTask", task_json(sample_task(task_status::cancelled), era::modern),
                      schema_mode::closed});
    // A tasks/get answer as the server builds it: the Task, its status's own member, resultType "complete".
    auto get_working = working;
    get_working["resultType"] = "complete";
    checks.push_back({v, "GetTaskResult", get_working});
    checks.push_back({v, "DetailedTask", working});
    auto completed = task_json(sample_task(task_status::completed), era::modern);
    completed["result"] = parse_object(R"({"content":[{"type":"text","text":"done"}],"isError":false})");
    checks.push_back({v, "CompletedTask", completed, schema_mode::closed});
    checks.push_back({v, "DetailedTask", completed});
    auto failed = task_json(sample_task(task_status::failed), era::modern);
    failed["error"] = parse_object(R"({"code":-32603,"message":"Internal error"})");
    checks.push_back({v, "FailedTask", failed, schema_mode::closed});
    auto input = task_json(sample_task(task_status::input_required), era::modern);
    input["inputRequests"] = bj::object{};
    checks.push_back({v, "InputRequiredTask", input, schema_mode::closed});
    expect_valid(*ext, checks);
}

TEST(TaskSchemas, LegacyShapesAreNotExtensionTasks) {
    auto* ext = ext_tasks_or_skip();
    if (!ext)
        return;
    std::string const v(ext_tasks_label);
    auto const t = sample_task();
    expect_rejected(*ext, {
                              {v, "CreateTaskResult", create_task_result(t, era::legacy)},
                              {v, "Task", task_json(t, era::legacy)},
                              {v, "WorkingTask", task_json(t, era::legacy)},
                          });
}

// ---- params: tasks/* taskId and the 2025-11-25 params.task ------------------------------------------------

TEST(TaskParams, TaskIdParamReadsTheString) {
    auto const params = bj::parse(R"({"taskId":"4f0c","_meta":{}})");
    auto const id = task_id_param(params);
    ASSERT_TRUE(id) << describe_error(id.error());
    EXPECT_EQ(*id, "4f0c");
}

TEST(TaskParams, TaskIdParamRefusesWhatIsNotAStringTaskId) {
    for (std::string_view const text :
         {R"({})", R"({"taskId":5})", R"({"taskId":null})", R"({"taskId":["a"]})", R"({"taskId":{"id":"a"}})",
          R"({"taskid":"a"})", R"({"task":{"taskId":"a"}})", "null", R"(["a"])", R"("a")", "7"}) {
        auto const r = task_id_param(bj::parse(text));
        ASSERT_FALSE(r) << text;
        EXPECT_EQ(r.error().code, static_cast<int>(errc::invalid_params)) << text;
    }
}

TEST(TaskParams, AbsentOrNullTaskAsksForNoTask) {
    for (std::string_view const text :
         {R"({})", R"({"task":null})", R"({"name":"x","arguments":{}})", "null"}) {
        auto const r = legacy_task_request(bj::parse(text));
        ASSERT_TRUE(r) << text << ": " << describe_error(r.error());
        EXPECT_FALSE(r->has_value()) << text;
    }
}

TEST(TaskParams, EmptyTaskAsksWithoutATtl) {
    auto const r = legacy_task_request(bj::parse(R"({"name":"x","task":{}})"));
    ASSERT_TRUE(r) << describe_error(r.error());
    ASSERT_TRUE(r->has_value());
    EXPECT_FALSE((*r)->ttl_ms);
}

TEST(TaskParams, TaskTtlIsReadInMilliseconds) {
    auto const r = legacy_task_request(bj::parse(R"({"name":"x","task":{"ttl":5000}})"));
    ASSERT_TRUE(r) << describe_error(r.error());
    ASSERT_TRUE(r->has_value());
    EXPECT_EQ((*r)->ttl_ms, 5000);
    auto const zero = legacy_task_request(bj::parse(R"({"task":{"ttl":0}})"));
    ASSERT_TRUE(zero) << describe_error(zero.error());
    ASSERT_TRUE(zero->has_value());
    EXPECT_EQ((*zero)->ttl_ms, 0);
}

TEST(TaskParams, MalformedTaskIsInvalidParams) {
    for (std::string_view const text :
         {R"({"task":{"ttl":-1}})", R"({"task":{"ttl":-5000}})", R"({"task":{"ttl":1.5}})",
          R"({"task":{"ttl":"5000"}})", R"({"task":{"ttl":true}})", R"({"task":{"ttl":[5000]}})",
          R"({"task":{"ttl":{}}})", R"({"task":"yes"})", R"({"task":true})", R"({"task":[]})",
          R"({"task":5000})"}) {
        auto const r = legacy_task_request(bj::parse(text));
        ASSERT_FALSE(r) << text;
        EXPECT_EQ(r.error().code, static_cast<int>(errc::invalid_params)) << text;
    }
}

// ---- the answers a task's input requests accept -----------------------------------------------------------

TEST(TaskInputResponses, ElicitResultNeedsAKnownActionAndObjectContent) {
    for (std::string_view const good :
         {R"({"action":"accept","content":{"name":"Ada"}})", R"({"action":"accept"})",
          R"({"action":"decline"})", R"({"action":"cancel"})",
          R"({"action":"accept","content":{},"_meta":{}})"})
        EXPECT_TRUE(well_formed_input_response("elicitation/create", bj::parse(good))) << good;
    for (std::string_view const bad :
         {R"({})", R"({"action":"ACCEPT"})", R"({"action":"accepted"})", R"({"action":""})",
          R"({"action":1})", R"({"action":null})", R"({"action":"accept","content":"Ada"})",
          R"({"action":"accept","content":[]})", R"({"action":"decline","content":null})",
          R"({"content":{}})", "null", R"("accept")", "[]"})
        EXPECT_FALSE(well_formed_input_response("elicitation/create", bj::parse(bad))) << bad;
}

TEST(TaskInputResponses, CreateMessageResultNeedsRoleModelAndContent) {
    for (
        std::string_view const good :
        {R"({"role":"assistant","model":"m","content":{"type":"text","text":"hi"}})",
         R"({"role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stopReason":"endTurn"})"})
        EXPECT_TRUE(well_formed_input_response("sampling/createMessage", bj::parse(good))) << good;
    for (std::string_view const bad :
         {R"({})", R"({"model":"m","content":{"type":"text","text":"hi"}})",
          R"({"role":"assistant","content":{"type":"text","text":"hi"}})",
          R"({"role":"assistant","model":"m"})", R"({"role":"assistant","model":"m","content":"hi"})",
          R"({"role":1,"model":"m","content":{}})", R"({"role":"assistant","model":null,"content":{}})",
          "null", "[]"})
        EXPECT_FALSE(well_formed_input_response("sampling/createMessage", bj::parse(bad))) << bad;
}

TEST(TaskInputResponses, ListRootsResultNeedsARootsArray) {
    EXPECT_TRUE(well_formed_input_response("roots/list", bj::parse(R"({"roots":[]})")));
    EXPECT_TRUE(well_formed_input_response("roots/list", bj::parse(R"({"roots":[{"uri":"file:///a"}]})")));
    for (std::string_view const bad : {R"({})", R"({"roots":{}})", R"({"roots":null})",
                                       R"({"roots":"file:///a"})", "null", R"([{"uri":"file:///a"}])"})
        EXPECT_FALSE(well_formed_input_response("roots/list", bj::parse(bad))) << bad;
}

// ---- the method table's tasks rows ------------------------------------------------------------------------

struct task_method_row {
    std::string_view method;
    method_id id;
    message_kind kind;
    direction dir;
    std::string_view in; // availability, oldest first: 2024-11-05 .. 2026-07-28
    capability gate;
    name_source mcp_name;
};

constexpr task_method_row task_method_rows[] = {
    {"tasks/get", method_id::tasks_get, message_kind::request, direction::client_to_server, "00011",
     capability::tasks, name_source::task_id},
    {"tasks/update", method_id::tasks_update, message_kind::request, direction::client_to_server, "00001",
     capability::tasks, name_source::task_id},
    {"tasks/cancel", method_id::tasks_cancel, message_kind::request, direction::client_to_server, "00011",
     capability::tasks, name_source::task_id},
    {"tasks/result", method_id::tasks_result, message_kind::request, direction::client_to_server, "00010",
     capability::tasks, name_source::none},
    {"tasks/list", method_id::tasks_list, message_kind::request, direction::client_to_server, "00010",
     capability::tasks, name_source::none},
    {"notifications/tasks/status", method_id::notification_tasks_status, message_kind::notification,
     direction::server_to_client, "00010", capability::none, name_source::none},
    {"notifications/tasks", method_id::notification_tasks, message_kind::notification,
     direction::server_to_client, "00001", capability::none, name_source::none},
};

TEST(TaskMethodTable, TasksRowsExistWhereTheirVersionsDefineThem) {
    for (auto const& want : task_method_rows) {
        auto const* row = find_method(want.method);
        ASSERT_NE(row, nullptr) << want.method;
        EXPECT_EQ(row->id, want.id) << want.method;
        EXPECT_EQ(&info(want.id), row) << want.method;
        EXPECT_EQ(row->name, want.method);
        EXPECT_EQ(row->kind, want.kind) << want.method;
        EXPECT_EQ(row->direction, want.dir) << want.method;
        EXPECT_EQ(row->gate, want.gate) << want.method;
        EXPECT_EQ(row->mcp_name, want.mcp_name) << want.method;
        EXPECT_FALSE(row->cacheable) << want.method << ": a task is never cached";
        EXPECT_FALSE(row->may_require_input) << want.method;
        ASSERT_EQ(want.in.size(), version_registry.size());
        for (std::size_t i = 0; i < version_registry.size(); ++i)
            EXPECT_EQ(row->available_in(version_registry[i].id), want.in[i] == '1')
                << want.method << " in " << version_registry[i].name;
        EXPECT_EQ(row->modern, want.in.back() == '1') << want.method;
    }
}

TEST(TaskMethodTable, NoTasksMethodBefore20251125) {
    for (auto const& want : task_method_rows)
        for (auto v : {version::v2024_11_05, version::v2025_03_26, version::v2025_06_18})
            EXPECT_FALSE(find_method(want.method)->available_in(v)) << want.method << " in " << to_string(v);
}

TEST(TaskMethodTable, NameParamNamesTheMirroredParam) {
    EXPECT_EQ(name_param(name_source::name), "name");
    EXPECT_EQ(name_param(name_source::uri), "uri");
    EXPECT_EQ(name_param(name_source::task_id), "taskId");
    EXPECT_EQ(name_param(name_source::none), "");
    static_assert(name_param(name_source::task_id) == "taskId");
}

TEST(TaskMethodTable, OnlyTheTaskMethodsAreGatedByTasks) {
    for (auto const& row : method_table())
        EXPECT_EQ(row.gate == capability::tasks,
                  row.name.starts_with("tasks/") && row.kind == message_kind::request)
            << row.name;
}

// ---- capabilities -----------------------------------------------------------------------------------------

server_capabilities tasks_only() {
    server_capabilities c;
    c.tasks = true;
    return c;
}

TEST(TaskCapabilities, V20251125AdvertisesCoreTasks) {
    EXPECT_EQ(bj::value(tasks_only().to_json(version::v2025_11_25)),
              bj::parse(R"({"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}})"));
}

TEST(TaskCapabilities, OlderLegacyVersionsAdvertiseNoTasks) {
    for (auto v : {version::v2024_11_05, version::v2025_03_26, version::v2025_06_18}) {
        auto const caps = tasks_only().to_json(v);
        EXPECT_TRUE(caps.empty()) << to_string(v) << ": " << bj::serialize(caps);
    }
}

TEST(TaskCapabilities, ModernAdvertisesTheExtensionOnly) {
    EXPECT_EQ(bj::value(tasks_only().to_json(version::v2026_07_28)),
              bj::parse(R"({"extensions":{"io.modelcontextprotocol/tasks":{}}})"));
}

TEST(TaskCapabilities, TheExtensionJoinsTheExtensionsGiven) {
    auto c = tasks_only();
    c.tools = true;
    c.extensions = parse_object(R"({"com.example/audit":{"level":2}})");
    EXPECT_EQ(bj::value(c.to_json(version::v2026_07_28)),
              bj::parse(R"({"tools":{},"extensions":{"com.example/audit":{"level":2},
                                                     "io.modelcontextprotocol/tasks":{}}})"));
    auto const legacy = c.to_json(version::v2025_11_25);
    EXPECT_FALSE(legacy.contains("extensions")) << bj::serialize(legacy);
    EXPECT_TRUE(legacy.contains("tasks")) << bj::serialize(legacy);
    EXPECT_EQ(c.extensions, parse_object(R"({"com.example/audit":{"level":2}})"))
        << "to_json leaves caps alone";
}

TEST(TaskCapabilities, NoTasksNoTasksCapabilityInAnyVersion) {
    server_capabilities c;
    c.tools = true;
    for (auto const& row : version_registry) {
        auto const o = c.to_json(row.id);
        EXPECT_FALSE(o.contains("tasks")) << row.name;
        EXPECT_FALSE(o.contains("extensions")) << row.name;
    }
}

TEST(TaskCapabilities, AdvertisesTasksOnlyWhenSet) {
    EXPECT_TRUE(tasks_only().advertises(capability::tasks));
    EXPECT_FALSE(server_capabilities{}.advertises(capability::tasks));
    server_capabilities other;
    other.extensions = parse_object(R"({"io.modelcontextprotocol/tasks":{}})");
    EXPECT_FALSE(other.advertises(capability::tasks)) << "the bool is the switch, not a hand-made extension";
}

TEST(TaskCapabilities, AdvertisedCapabilitiesValidate) {
    auto* schemas = duet::test::schemas_or_skip();
    if (!schemas)
        return;
    auto c = tasks_only();
    c.tools = true;
    expect_valid(
        *schemas,
        {
            {"2025-11-25", "ServerCapabilities", c.to_json(version::v2025_11_25), schema_mode::closed},
            {"2025-06-18", "ServerCapabilities", c.to_json(version::v2025_06_18), schema_mode::closed},
            {"2026-07-28", "ServerCapabilities", c.to_json(version::v2026_07_28), schema_mode::closed},
        });
}

TEST(TaskCapabilities, ClientDeclaresTasksOnlyWithAnExtensionObject) {
    for (std::string_view const yes :
         {R"({"extensions":{"io.modelcontextprotocol/tasks":{}}})",
          R"({"extensions":{"io.modelcontextprotocol/tasks":{"future":true},"com.example/x":{}}})",
          R"({"sampling":{},"extensions":{"io.modelcontextprotocol/tasks":{}}})"})
        EXPECT_TRUE(declares(parse_object(yes), client_capability::tasks)) << yes;
    for (std::string_view const no :
         {R"({})", R"({"tasks":{}})", R"({"extensions":{}})", R"({"extensions":{"com.example/x":{}}})",
          R"({"extensions":{"io.modelcontextprotocol/tasks":true}})",
          R"({"extensions":{"io.modelcontextprotocol/tasks":null}})",
          R"({"extensions":{"io.modelcontextprotocol/tasks":"yes"}})",
          R"({"extensions":{"io.modelcontextprotocol/tasks":[]}})",
          R"({"extensions":"io.modelcontextprotocol/tasks"})",
          R"({"extensions":["io.modelcontextprotocol/tasks"]})",
          R"({"experimental":{"io.modelcontextprotocol/tasks":{}}})",
          R"({"io.modelcontextprotocol/tasks":{}})"})
        EXPECT_FALSE(declares(parse_object(no), client_capability::tasks)) << no;
}

TEST(TaskCapabilities, RequirementNamesTheExtension) {
    EXPECT_EQ(bj::value(requirement(client_capability::tasks)),
              bj::parse(R"({"extensions":{"io.modelcontextprotocol/tasks":{}}})"));
    EXPECT_TRUE(declares(requirement(client_capability::tasks), client_capability::tasks));
    EXPECT_EQ(tasks_extension, "io.modelcontextprotocol/tasks");
}

// ---- result shaping ---------------------------------------------------------------------------------------

bj::object shaped_task_result(bj::object result, era e, version v, method_id m) {
    // Generous cache hints: a task result must ignore them.
    shape_result(result, {.era = e,
                          .version = v,
                          .method = m,
                          .hints = {.ttl_ms = 30'000, .scope = cache_scope::public_cache},
                          .server_info = nullptr});
    return result;
}

bj::object tool_with_execution(std::string_view name, std::string_view support) {
    return parse_object(R"({"name":")" + std::string(name) + R"(","inputSchema":{"type":"object"},
                            "execution":{"taskSupport":")" +
                        std::string(support) + R"("}})");
}

bj::object tools_list_with_execution() {
    return bj::object{
        {"tools", bj::array{tool_with_execution("slow", "required"), tool_with_execution("maybe", "optional"),
                            parse_object(R"({"name":"quick","inputSchema":{"type":"object"}})")}}};
}

TEST(TaskShaping, ModernCreatedTaskKeepsResultTypeTaskAndItsOwnTtl) {
    auto const r = shaped_task_result(create_task_result(sample_task(), era::modern), era::modern,
                                      version::v2026_07_28, method_id::tools_call);
    EXPECT_EQ(r.at("resultType"), "task");
    EXPECT_EQ(r.at("ttlMs"), 3'600'000) << "the task's ttlMs is not a cache hint";
    EXPECT_EQ(r.at("pollIntervalMs"), 1000);
    EXPECT_EQ(r.at("taskId"), "4f0c2a9e8b7d6c5a4f0c2a9e8b7d6c5a");
    EXPECT_FALSE(r.contains("cacheScope")) << bj::serialize(r);
}

TEST(TaskShaping, ModernCreatedTaskWithUnlimitedTtlKeepsNull) {
    auto t = sample_task();
    t.ttl_ms.reset();
    auto const r = shaped_task_result(create_task_result(t, era::modern), era::modern, version::v2026_07_28,
                                      method_id::tools_call);
    ASSERT_TRUE(r.contains("ttlMs")) << bj::serialize(r);
    EXPECT_TRUE(r.at("ttlMs").is_null()) << bj::serialize(r);
    EXPECT_EQ(r.at("resultType"), "task");
}

TEST(TaskShaping, ModernTasksGetIsCompleteKeepsTtlAndHasNoCacheScope) {
    auto const r = shaped_task_result(task_json(sample_task(), era::modern), era::modern,
                                      version::v2026_07_28, method_id::tasks_get);
    EXPECT_EQ(r.at("resultType"), "complete");
    EXPECT_EQ(r.at("ttlMs"), 3'600'000) << bj::serialize(r);
    EXPECT_FALSE(r.contains("cacheScope")) << bj::serialize(r);
    auto t = sample_task(task_status::cancelled);
    t.ttl_ms.reset();
    auto const unlimited = shaped_task_result(task_json(t, era::modern), era::modern, version::v2026_07_28,
                                              method_id::tasks_get);
    ASSERT_TRUE(unlimited.contains("ttlMs")) << bj::serialize(unlimited);
    EXPECT_TRUE(unlimited.at("ttlMs").is_null());
    EXPECT_FALSE(unlimited.contains("cacheScope"));
}

TEST(TaskShaping, ModernTasksUpdateAndCancelAreCompleteAndUncached) {
    for (auto m : {method_id::tasks_update, method_id::tasks_cancel}) {
        auto const r = shaped_task_result(bj::object{}, era::modern, version::v2026_07_28, m);
        EXPECT_EQ(bj::value(r), bj::parse(R"({"resultType":"complete"})")) << info(m).name;
    }
}

TEST(TaskShaping, ModernToolsListDropsExecution) {
    auto const r = shaped_task_result(tools_list_with_execution(), era::modern, version::v2026_07_28,
                                      method_id::tools_list);
    ASSERT_EQ(r.at("tools").as_array().size(), 3u);
    for (auto const& t : r.at("tools").as_array())
        EXPECT_FALSE(t.as_object().contains("execution")) << bj::serialize(t);
    EXPECT_EQ(r.at("ttlMs"), 30'000) << "tools/list still carries its cache hints";
}

TEST(TaskShaping, LegacyToolsListKeepsExecutionOnlyIn20251125) {
    auto const kept = shaped_task_result(tools_list_with_execution(), era::legacy, version::v2025_11_25,
                                         method_id::tools_list);
    auto const& tools = kept.at("tools").as_array();
    ASSERT_EQ(tools.size(), 3u);
    EXPECT_EQ(tools[0].as_object().at("execution"), bj::parse(R"({"taskSupport":"required"})"));
    EXPECT_EQ(tools[1].as_object().at("execution"), bj::parse(R"({"taskSupport":"optional"})"));
    EXPECT_FALSE(tools[2].as_object().contains("execution"));
    for (auto v : {version::v2024_11_05, version::v2025_03_26, version::v2025_06_18}) {
        auto const r = shaped_task_result(tools_list_with_execution(), era::legacy, v, method_id::tools_list);
        for (auto const& t : r.at("tools").as_array())
            EXPECT_FALSE(t.as_object().contains("execution")) << to_string(v) << ": " << bj::serialize(t);
    }
}

TEST(TaskShaping, LegacyCreatedTaskPassesThroughUnchanged) {
    auto const created = create_task_result(sample_task(), era::legacy);
    auto const r = shaped_task_result(created, era::legacy, version::v2025_11_25, method_id::tools_call);
    EXPECT_EQ(r, created);
}

TEST(TaskShaping, ShapedTaskResultsValidate) {
    auto* schemas = duet::test::schemas_or_skip();
    if (!schemas)
        return;
    expect_valid(*schemas, {
                               {"2025-11-25", "ListToolsResult",
                                shaped_task_result(tools_list_with_execution(), era::legacy,
                                                   version::v2025_11_25, method_id::tools_list),
                                schema_mode::closed},
                               {"2025-06-18", "ListToolsResult",
                                shaped_task_result(tools_list_with_execution(), era::legacy,
                                                   version::v2025_06_18, method_id::tools_list),
                                schema_mode::closed},
                               {"2026-07-28", "ListToolsResult",
                                shaped_task_result(tools_list_with_execution(), era::modern,
                                                   version::v2026_07_28, method_id::tools_list),
                                schema_mode::closed},
                               {"2025-11-25", "CreateTaskResult",
                                shaped_task_result(create_task_result(sample_task(), era::legacy),
                                                   era::legacy, version::v2025_11_25, method_id::tools_call),
                                schema_mode::closed},
                           });
}

TEST(TaskShaping, ShapedModernTaskResultsValidateAgainstTheExtension) {
    auto* ext = ext_tasks_or_skip();
    if (!ext)
        return;
    std::string const v(ext_tasks_label);
    auto const created = shaped_task_result(create_task_result(sample_task(), era::modern), era::modern,
                                            version::v2026_07_28, method_id::tools_call);
    auto const got = shaped_task_result(task_json(sample_task(), era::modern), era::modern,
                                        version::v2026_07_28, method_id::tasks_get);
    auto const updated =
        shaped_task_result(bj::object{}, era::modern, version::v2026_07_28, method_id::tasks_update);
    auto const cancelled =
        shaped_task_result(bj::object{}, era::modern, version::v2026_07_28, method_id::tasks_cancel);
    expect_valid(*ext, {
                           {v, "CreateTaskResult", created},
                           {v, "GetTaskResult", got},
                           {v, "UpdateTaskResult", updated},
                           {v, "CancelTaskResult", cancelled},
                       });
}

// ---- admission --------------------------------------------------------------------------------------------

namespace rows = duet::test::admission_rows;

// Every capability, with and without tasks (whatever admission_support's full_server() advertises).
server_capabilities const& tasks_server() {
    static server_capabilities const caps = [] {
        auto c = rows::full_server();
        c.tasks = true;
        return c;
    }();
    return caps;
}

server_capabilities const& no_tasks_server() {
    static server_capabilities const caps = [] {
        auto c = rows::full_server();
        c.tasks = false;
        return c;
    }();
    return caps;
}

admission_context tasks_context(server_capabilities const& caps,
                                std::optional<version> session = std::nullopt) {
    admission_context ctx;
    ctx.session.legacy = session;
    ctx.capabilities = &caps;
    return ctx;
}

// The modern envelope of a request that declares the tasks extension.
constexpr std::string_view declaring =
    R"("_meta":{@P:"2026-07-28",@C:{"extensions":{"io.modelcontextprotocol/tasks":{}}}})";

std::string with_task_id(std::string_view envelope, std::string_view id = "t-1") {
    return "{" + std::string(envelope) + R"(,"taskId":")" + std::string(id) + "\"}";
}

constexpr rows::refused needs_extension_400{errc::missing_required_client_capability, 400};
constexpr rows::refused not_found_legacy{errc::method_not_found, 200};

TEST(TaskAdmission, ModernTasksGetWithoutTheExtensionNeedsIt) {
    auto const r = admit(rows::make_request("tasks/get", with_task_id("@M")), tasks_context(tasks_server()));
    ASSERT_TRUE(rows::matches(r, needs_extension_400));
    EXPECT_EQ(r.error().error.data,
              bj::parse(R"({"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}})"));
}

TEST(TaskAdmission, ModernTasksMethodsWithTheExtensionAreServed) {
    for (std::string_view const m : {"tasks/get", "tasks/update", "tasks/cancel"}) {
        auto const r = admit(rows::make_request(m, with_task_id(declaring)), tasks_context(tasks_server()));
        EXPECT_TRUE(rows::matches(r, rows::modern_serve)) << m;
        if (r) {
            EXPECT_EQ(r->method, find_method(m)) << m;
        }
    }
}

TEST(TaskAdmission, ModernTasksUpdateAndCancelWithoutTheExtensionNeedIt) {
    for (std::string_view const m : {"tasks/update", "tasks/cancel"})
        EXPECT_TRUE(
            rows::matches(admit(rows::make_request(m, with_task_id("@M")), tasks_context(tasks_server())),
                          needs_extension_400))
            << m;
}

TEST(TaskAdmission, ModernTasksToAServerWithoutTasksIsMethodNotFound) {
    for (std::string_view const m : {"tasks/get", "tasks/update", "tasks/cancel"})
        EXPECT_TRUE(rows::matches(
            admit(rows::make_request(m, with_task_id(declaring)), tasks_context(no_tasks_server())),
            rows::not_found_404))
            << m;
}

TEST(TaskAdmission, ModernTasksResultAndListAreMethodNotFound) {
    for (std::string_view const m : {"tasks/result", "tasks/list"}) {
        EXPECT_TRUE(rows::matches(
            admit(rows::make_request(m, with_task_id(declaring)), tasks_context(tasks_server())),
            rows::not_found_404))
            << m;
        EXPECT_TRUE(rows::matches(admit(rows::make_request(m, "{@M}"), tasks_context(tasks_server())),
                                  rows::not_found_404))
            << m;
    }
}

TEST(TaskAdmission, LegacyTasksMethodsAreServedIn20251125Only) {
    for (std::string_view const m : {"tasks/get", "tasks/cancel", "tasks/result"})
        EXPECT_TRUE(rows::matches(admit(rows::make_request(m, R"({"taskId":"t-1"})"),
                                        tasks_context(tasks_server(), rows::v2025_11)),
                                  rows::legacy_serve(rows::v2025_11)))
            << m;
    EXPECT_TRUE(rows::matches(
        admit(rows::make_request("tasks/list", "{}"), tasks_context(tasks_server(), rows::v2025_11)),
        rows::legacy_serve(rows::v2025_11)));
    EXPECT_TRUE(rows::matches(admit(rows::make_request("tasks/update", R"({"taskId":"t-1"})"),
                                    tasks_context(tasks_server(), rows::v2025_11)),
                              not_found_legacy));
    for (auto v : {rows::v2025_06, rows::v2025_03})
        for (std::string_view const m : {"tasks/get", "tasks/cancel", "tasks/result", "tasks/list"})
            EXPECT_TRUE(rows::matches(
                admit(rows::make_request(m, R"({"taskId":"t-1"})"), tasks_context(tasks_server(), v)),
                not_found_legacy))
                << m << " in " << to_string(v);
    EXPECT_TRUE(rows::matches(admit(rows::make_request("tasks/get", R"({"taskId":"t-1"})"),
                                    tasks_context(no_tasks_server(), rows::v2025_11)),
                              not_found_legacy))
        << "a server without tasks has no tasks/get";
}

struct http_case {
    std::vector<http_header> headers;
    rows::outcome expected;
    std::string_view why;
};

TEST(TaskAdmission, HttpMcpNameMustMirrorTheTaskId) {
    auto const pv = http_header{"MCP-Protocol-Version", "2026-07-28"};
    auto const mm = http_header{"Mcp-Method", "tasks/get"};
    std::vector<http_case> const cases{
        {{pv, mm, {"Mcp-Name", "t-1"}}, rows::modern_serve, "matching"},
        {{pv, mm, {"mcp-name", "t-1"}}, rows::modern_serve, "header names are case-insensitive"},
        {{pv, mm, {"Mcp-Name", "t-2"}}, rows::refused{errc::header_mismatch, 400}, "another task"},
        {{pv, mm, {"Mcp-Name", "T-1"}},
         rows::refused{errc::header_mismatch, 400},
         "values are case-sensitive"},
        {{pv, mm}, rows::refused{errc::header_mismatch, 400}, "missing"},
    };
    for (auto const& c : cases) {
        http_facts const http{c.headers};
        auto ctx = tasks_context(tasks_server());
        ctx.http = &http;
        EXPECT_TRUE(
            rows::matches(admit(rows::make_request("tasks/get", with_task_id(declaring)), ctx), c.expected))
            << c.why;
    }
}

TEST(TaskAdmission, HttpMismatchIsCheckedBeforeTheExtension) {
    http_facts const http{
        {{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "tasks/cancel"}, {"Mcp-Name", "other"}}};
    auto ctx = tasks_context(tasks_server());
    ctx.http = &http;
    EXPECT_TRUE(rows::matches(admit(rows::make_request("tasks/cancel", with_task_id("@M")), ctx),
                              rows::refused{errc::header_mismatch, 400}));
}

} // namespace duet::test::tasks_unit
