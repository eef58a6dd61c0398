#include "support/files.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace duet::test {

std::string read_file(std::string const& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return std::move(text).str();
}

std::string take_file(std::string const& path) {
    auto text = read_file(path);
    std::remove(path.c_str());
    return text;
}

} // namespace duet::test
