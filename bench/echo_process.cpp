// bench_echo_process: the cheapest possible stdio "server", used to measure bench_stdio_driver's own ceiling.
//
// For every input line that carries an "id", it writes one line with that id and a canned echo result; lines
// without an id (notifications) get nothing. It parses no JSON: it copies the id's text as it appears, which
// is enough for the driver's requests (integer ids, "id" written once). Exits at end of input.
#include <unistd.h>

#include <cstring>
#include <string>
#include <string_view>

namespace {

// The raw text of the id value in a request line ("42" or "\"a\""), empty when there is none.
std::string_view id_text(std::string_view line) {
    auto key = line.find("\"id\":");
    if (key == std::string_view::npos)
        return {};
    auto start = key + 5;
    auto end = line.find_first_of(",}", start);
    return end == std::string_view::npos ? std::string_view{} : line.substr(start, end - start);
}

bool write_all(std::string const& out) {
    std::size_t done = 0;
    while (done < out.size()) {
        auto n = ::write(1, out.data() + done, out.size() - done);
        if (n <= 0)
            return false;
        done += std::size_t(n);
    }
    return true;
}

} // namespace

int main() {
    std::string in;
    std::string out;
    char buf[65536];
    for (;;) {
        auto n = ::read(0, buf, sizeof buf);
        if (n <= 0)
            return 0;
        in.append(buf, std::size_t(n));
        std::size_t start = 0;
        for (auto nl = in.find('\n'); nl != std::string::npos; nl = in.find('\n', start)) {
            auto id = id_text(std::string_view(in).substr(start, nl - start));
            if (!id.empty()) {
                out += R"({"jsonrpc":"2.0","id":)";
                out += id;
                out += R"(,"result":{"content":[{"type":"text","text":"hello"}]}})";
                out += '\n';
            }
            start = nl + 1;
        }
        in.erase(0, start);
        // Answer everything read so far before blocking again, as a real server would.
        if (!out.empty() && !write_all(out))
            return 1;
        out.clear();
    }
}
