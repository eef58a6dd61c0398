#include "support/schema_validator.hpp"

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>
#include <utility>

extern char** environ;

namespace duet::test {

namespace {

namespace fs = std::filesystem;

// How long one batch may go without any progress before the validator counts as hung.
constexpr int stall_timeout_ms = 120'000;

bool is_executable(fs::path const& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

fs::path find_node(fs::path const& configured) {
    if (!configured.empty())
        return is_executable(configured) ? configured : fs::path{};
    if (char const* env = std::getenv("DUET_NODE"); env && *env)
        return is_executable(env) ? fs::path(env) : fs::path{};
    char const* path = std::getenv("PATH");
    std::string_view rest = path ? path : "";
    while (!rest.empty()) {
        auto const colon = rest.find(':');
        auto const dir = rest.substr(0, colon);
        rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
        if (dir.empty())
            continue;
        if (auto candidate = fs::path(dir) / "node"; is_executable(candidate))
            return candidate;
    }
    return {};
}

fs::path script_path(schema_validator_paths const& p) {
    return p.source_dir / "tests" / "support" / "validate_schema.mjs";
}

fs::path spec_dir(schema_validator_paths const& p) {
    return p.shared_dir / "spec";
}

schema_verdict parse_verdict(std::string_view line) {
    boost::system::error_code ec;
    auto const v = boost::json::parse(line, ec);
    auto const* o = ec ? nullptr : v.if_object();
    auto const* ok = o ? o->if_contains("ok") : nullptr;
    if (!ok || !ok->is_bool())
        return {.ok = false, .bad_check = true, .errors = "validator answered: " + std::string(line)};
    schema_verdict r{.ok = ok->get_bool()};
    if (auto const* e = o->if_contains("errors"); e && e->is_string())
        r.errors = e->get_string();
    if (auto const* b = o->if_contains("badCheck"); b && b->is_bool())
        r.bad_check = b->get_bool();
    return r;
}

} // namespace

schema_validator::schema_validator()
    : schema_validator(schema_validator_paths{.shared_dir = DUET_SHARED_DIR, .source_dir = DUET_SOURCE_DIR}) {
}

schema_validator::schema_validator(schema_validator_paths paths) : paths_(std::move(paths)) {
    std::error_code ec;
    paths_.node = find_node(paths_.node);
    auto const modules = paths_.source_dir / "tests" / "interop" / "node_modules";
    if (!fs::is_directory(spec_dir(paths_), ec))
        unavailable_ = std::string(optional_skip) + "no official schemas at " + spec_dir(paths_).string() +
                       " (../shared is not beside the project)";
    else if (paths_.node.empty())
        unavailable_ = "schema checks cannot run: node is not installed (or $DUET_NODE is not executable)";
    else if (!fs::is_regular_file(script_path(paths_), ec))
        unavailable_ = "schema checks cannot run: no validator script at " + script_path(paths_).string();
    else if (!fs::is_regular_file(modules / "ajv" / "package.json", ec) ||
             !fs::is_regular_file(modules / "ajv-formats" / "package.json", ec))
        unavailable_ = "schema checks cannot run: ajv is not installed in " + modules.string() +
                       " (run scripts/bootstrap)";
}

schema_validator::~schema_validator() {
    stop();
}

schema_validator& schema_validator::shared() {
    static schema_validator instance;
    return instance;
}

bool schema_validator::start() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        broken_ = std::string("socketpair: ") + std::strerror(errno);
        return false;
    }
    // The child's end becomes its stdin and stdout (dup2 clears close-on-exec on the copies); stderr is
    // shared, so a crash of the validator shows in the test log.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);

    std::string const node = paths_.node.string();
    std::string const script = script_path(paths_).string();
    std::string const spec = spec_dir(paths_).string();
    std::string flag = "--spec-dir";
    std::vector<char*> argv{const_cast<char*>(node.c_str()), const_cast<char*>(script.c_str()), flag.data(),
                            const_cast<char*>(spec.c_str()), nullptr};
    pid_t pid = -1;
    int const rc = ::posix_spawn(&pid, node.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
        ::close(fds[0]);
        broken_ = "cannot start " + node + ": " + std::strerror(rc);
        return false;
    }
    fd_ = fds[0];
    pid_ = pid;
    return true;
}

void schema_validator::stop() noexcept {
    if (fd_ >= 0) {
        ::close(fd_); // end of input: the validator exits
        fd_ = -1;
    }
    if (pid_ > 0) {
        int status = 0;
        auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (::waitpid(pid_, &status, WNOHANG) == 0) {
            if (std::chrono::steady_clock::now() > deadline) {
                ::kill(pid_, SIGKILL);
                ::waitpid(pid_, &status, 0);
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        pid_ = -1;
    }
    pending_.clear();
}

std::vector<schema_verdict> schema_validator::fail_all(std::size_t n, std::string const& why) const {
    return std::vector<schema_verdict>(n, schema_verdict{.ok = false, .bad_check = true, .errors = why});
}

schema_verdict schema_validator::validate(std::string_view version, std::string_view type,
                                          boost::json::value const& value, schema_mode mode) {
    schema_check const check{std::string(version), std::string(type), value, mode};
    return validate(std::span<schema_check const>(&check, 1)).front();
}

namespace {
void skip_calling_test(std::string const& reason) {
    GTEST_SKIP() << reason;
}
} // namespace

schema_validator* schemas_or_skip() {
    auto& validator = schema_validator::shared();
    if (validator.available())
        return &validator;
    skip_calling_test(validator.unavailable_reason());
    return nullptr;
}

std::vector<schema_verdict> schema_validator::validate(std::span<schema_check const> checks) {
    if (checks.empty())
        return {};
    if (!available())
        return fail_all(checks.size(), "schema validation unavailable: " + unavailable_);
    if (!broken_.empty())
        return fail_all(checks.size(), broken_);
    if (fd_ < 0 && !start())
        return fail_all(checks.size(), broken_);

    std::string request;
    for (auto const& c : checks) {
        boost::json::object line;
        line["version"] = c.version;
        line["type"] = c.type;
        line["value"] = c.value;
        line["closed"] = c.mode == schema_mode::closed;
        request += boost::json::serialize(line);
        request += '\n';
    }

    // Write and read at once: the validator answers while it reads, and both socket buffers are finite.
    std::vector<schema_verdict> out;
    out.reserve(checks.size());
    std::size_t written = 0;
    char buffer[65536];
    while (out.size() < checks.size()) {
        pollfd p{.fd = fd_,
                 .events = static_cast<short>(POLLIN | (written < request.size() ? POLLOUT : 0)),
                 .revents = 0};
        int const n = ::poll(&p, 1, stall_timeout_ms);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            broken_ =
                n == 0 ? "the validator stopped answering" : std::string("poll: ") + std::strerror(errno);
            break;
        }
        if ((p.revents & POLLOUT) && written < request.size()) {
            auto const sent = ::send(fd_, request.data() + written,
                                     std::min<std::size_t>(request.size() - written, sizeof buffer),
                                     MSG_NOSIGNAL | MSG_DONTWAIT);
            if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                broken_ = std::string("writing to the validator: ") + std::strerror(errno);
                break;
            }
            if (sent > 0)
                written += static_cast<std::size_t>(sent);
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            auto const got = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
            if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                continue;
            if (got <= 0) {
                broken_ = got == 0 ? "the validator exited (see its stderr above)"
                                   : std::string("reading from the validator: ") + std::strerror(errno);
                break;
            }
            pending_.append(buffer, static_cast<std::size_t>(got));
            std::size_t start = 0;
            for (auto nl = pending_.find('\n'); nl != std::string::npos; nl = pending_.find('\n', start)) {
                out.push_back(parse_verdict(std::string_view(pending_).substr(start, nl - start)));
                start = nl + 1;
            }
            pending_.erase(0, start);
        }
    }
    if (out.size() < checks.size()) {
        stop();
        auto rest = fail_all(checks.size() - out.size(), broken_);
        out.insert(out.end(), rest.begin(), rest.end());
    }
    return out;
}

} // namespace duet::test
