// The heap of the duet executable (cmake/duet_allocator.cmake): mimalloc serves every allocation of the
// process, not only the ones that name it. This test executable is linked by the same recipe as `duet`, and
// is built only where that recipe uses mimalloc (not in the sanitizer builds, which keep their own heap).
#include "support/child_process.hpp"

#include <gtest/gtest.h>

#include <mimalloc.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

TEST(DuetHeap, MallocAndOperatorNewAreServedByMimalloc) {
    void* raw = std::malloc(48);
    auto boxed = std::make_unique<int>(7);
    std::string const long_text(200, 'x'); // past the inline buffer: a heap block from libstdc++
    std::vector<char> big(1 << 20);        // a large block, which glibc would mmap
    EXPECT_TRUE(mi_is_in_heap_region(raw));
    EXPECT_TRUE(mi_is_in_heap_region(boxed.get()));
    EXPECT_TRUE(mi_is_in_heap_region(long_text.data()));
    EXPECT_TRUE(mi_is_in_heap_region(big.data()));
    std::free(raw);
}

TEST(DuetHeap, TheDuetBinaryStartsWithMimalloc) {
    // mimalloc reports its start-up on stderr when asked to be verbose; glibc's malloc knows no such
    // variable.
    ::setenv("MIMALLOC_VERBOSE", "1", 1);
    duet::test::child_process child({DUET_BINARY, "versions"}, duet::test::child_process::input::null);
    ::unsetenv("MIMALLOC_VERBOSE");
    ASSERT_EQ(child.wait_exit(std::chrono::seconds(30)), 0);
    EXPECT_NE(child.stderr_text().find("mimalloc: process init"), std::string::npos) << child.stderr_text();
}

} // namespace
