// Several `duet serve` processes behind one endpoint share a requestState key ring (--state-key-file): a
// modern input round that one process began completes on another, which refuses it when it holds another key.
// The file holds secrets: one others may read, or that says nothing usable, is a usage error before anything
// listens.
#include "http/mcp_http.hpp"
#include "http/servers.hpp"
#include "stdio/checks.hpp"
#include "stdio/messages.hpp"
#include "unit/server/mrtr_support.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace json = boost::json;
using namespace duet::test;
using namespace duet::test::http;
using namespace std::chrono_literals;

json::object const sk_elicitation_caps{{"elicitation", json::object{}}};

// A key file of the test's own, 0600 unless told otherwise; removed with the object.
struct key_file {
    explicit key_file(std::string const& text, mode_t mode = 0600)
        : path(std::string(::testing::TempDir()) + "duet-state-keys-" + std::to_string(::getpid()) + "-" +
               std::to_string(++count)) {
        std::ofstream(path) << text;
        ::chmod(path.c_str(), mode);
    }
    ~key_file() { std::remove(path.c_str()); }
    key_file(key_file const&) = delete;
    key_file& operator=(key_file const&) = delete;
    std::string path;
    static inline int count = 0;
};

// The demo's ask_name begun on `first` and answered on `second`: the retry's reply.
reply answer_elsewhere(child_server const& first, child_server const& second) {
    auto const params = call_params("ask_name");
    mcp_http a(first.ep());
    auto const asked = a.post(modern_request(1, "tools/call", params, sk_elicitation_caps));
    EXPECT_EQ(asked.status, 200u) << asked.body;
    auto const round = expect_input_required(asked.json());
    mcp_http b(second.ep());
    return b.post(modern_request(2, "tools/call", retry(params, {{"name", accepted("name", "Ada")}}, round),
                                 sk_elicitation_caps));
}

TEST(SharedStateKey, AnInputRoundBegunOnOneProcessCompletesOnAnother) {
    key_file keys(
        "# rolled in 2026-12\nnew=an-entirely-new-secret-of-32-bytes\nold=the-previous-secret-16+\n");
    child_server one({"--state-key-file", keys.path});
    child_server two({"--state-key-file", keys.path});
    auto const done = answer_elsewhere(one, two);
    ASSERT_EQ(done.status, 200u) << done.body;
    EXPECT_EQ(first_text(result_of(done.json())), "Hello, Ada!") << done.body;
}

TEST(SharedStateKey, ARoundSealedWithAKeyTheOtherProcessLacksIsRefused) {
    key_file mine("mine=a-secret-only-this-process-has\n");
    key_file theirs("theirs=a-secret-only-that-process-has\n");
    child_server one({"--state-key-file", mine.path});
    child_server two({"--state-key-file", theirs.path});
    auto const refused = answer_elsewhere(one, two);
    auto const message = refused.json();
    ASSERT_TRUE(message.as_object().contains("error")) << refused.body;
    EXPECT_EQ(message.at("error").at("code"), -32602) << refused.body;
    EXPECT_NE(refused.body.find("does not hold"), std::string::npos) << refused.body;
}

TEST(SharedStateKey, WithoutAKeyFileEachProcessHasItsOwnKey) {
    child_server one;
    child_server two;
    auto const refused = answer_elsewhere(one, two);
    EXPECT_EQ(refused.json().at("error").at("code"), -32602) << refused.body;
}

duet_exit serve_with_keys(std::string const& path) {
    return run_duet_to_exit({"serve", "--port", "0", "--state-key-file", path});
}

TEST(SharedStateKey, AKeyFileThatCannotBeUsedIsAUsageError) {
    key_file readable("k=a-secret-of-enough-length\n", 0644);
    auto r = serve_with_keys(readable.path);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("may be read by others"), std::string::npos) << r.err;

    key_file short_secret("k=short\n");
    r = serve_with_keys(short_secret.path);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("at least 16 bytes"), std::string::npos) << r.err;

    key_file no_id("a-secret-without-an-id-at-all\n");
    r = serve_with_keys(no_id.path);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("line 1"), std::string::npos) << r.err;

    key_file empty("# nothing but a comment\n\n");
    r = serve_with_keys(empty.path);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("holds no key"), std::string::npos) << r.err;

    key_file twice("k=a-secret-of-enough-length\nk=another-secret-of-length\n");
    r = serve_with_keys(twice.path);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("two requestState keys"), std::string::npos) << r.err;
}

} // namespace
