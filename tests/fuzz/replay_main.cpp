// Runs every file of the corpus directory, and of the finds directory where fuzzing runs keep the inputs that
// failed, through the fuzz target once, without libFuzzer, so ordinary builds (and the sanitizer build) check
// them on every `make test`: a kept find fails until its bug is fixed (then it moves to the corpus).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size);

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR [FINDS_DIR...]\n", argv[0]);
        return 2;
    }
    std::size_t count = 0;
    for (int i = 1; i < argc; ++i) {
        std::error_code ec;
        // The finds directory exists only once a fuzzing run kept an input that failed (make fuzz).
        if (i > 1 && !std::filesystem::is_directory(argv[i], ec))
            continue;
        for (auto const& entry : std::filesystem::directory_iterator(argv[i])) {
            if (!entry.is_regular_file())
                continue;
            std::ifstream in(entry.path(), std::ios::binary);
            std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            std::fprintf(stderr, "%s\n", entry.path().c_str());
            LLVMFuzzerTestOneInput(reinterpret_cast<std::uint8_t const*>(bytes.data()), bytes.size());
            ++count;
        }
    }
    std::printf("replayed %zu inputs\n", count);
    return count > 0 ? 0 : 1;
}
