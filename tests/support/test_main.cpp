// File: tests/support/test_main.cpp
//
// The main of every GoogleTest suite: GoogleTest's own, plus a listener that appends each skipped test and
// its reason to the file named by $DUET_SKIP_LOG, one line "Suite.Test<TAB>reason". scripts/run-tests reads
// it so that `make test` can tell a skip the project allows (a reason starting "optional:", such as the
// official schemas of ../shared/ not being beside the clone) from one that means a broken install, which
// fails the run. ctest itself only knows that a test was skipped, not why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace {

class skip_log : public testing::EmptyTestEventListener {
public:
    explicit skip_log(char const* path) : path_(path) {}

    void OnTestEnd(testing::TestInfo const& test) override {
        auto const* result = test.result();
        if (result == nullptr || !result->Skipped())
            return;
        std::string line = std::string(test.test_suite_name()) + "." + test.name() + "\t";
        std::string reason;
        for (int i = 0; i < result->total_part_count(); ++i) {
            auto const& part = result->GetTestPartResult(i);
            if (part.skipped() && reason.empty())
                reason = part.message();
        }
        for (char& c : reason)
            if (c == '\n' || c == '\t')
                c = ' ';
        line += reason.empty() ? "(no reason given)" : reason;
        line += '\n';
        // One write with O_APPEND: ctest runs suites in parallel, and each line must land whole.
        int const fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
            return;
        [[maybe_unused]] auto const written = ::write(fd, line.data(), line.size());
        ::close(fd);
    }

private:
    std::string path_;
};

} // namespace

int main(int argc, char** argv) {
    testing::InitGoogleMock(&argc, argv);
    if (char const* path = std::getenv("DUET_SKIP_LOG"); path != nullptr && *path != '\0')
        testing::UnitTest::GetInstance()->listeners().Append(new skip_log(path));
    return RUN_ALL_TESTS();
}
