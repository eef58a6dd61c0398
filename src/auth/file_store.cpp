#include <duet/auth/file_store.hpp>
#include <duet/jsonrpc/json_text.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace duet::auth {

namespace json = boost::json;
using clock = std::chrono::system_clock;

namespace {

client::error store_error(std::string const& why) {
    return client::make_error(client::errc::usage, why);
}

std::string errno_text() {
    return std::strerror(errno);
}

std::string octal(mode_t mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
    return text;
}

// What a file or directory of ours must be: owned by this user, not writable (nor, for the file, readable)
// by anyone else.
client::result<void> check_private(std::string const& path, struct stat const& st, bool directory) {
    if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
        return store_error(path + " is not a " + (directory ? "directory" : "regular file"));
    if (st.st_uid != ::geteuid())
        return store_error(path + " belongs to another user (uid " + std::to_string(st.st_uid) +
                           "): not reading or writing credentials there");
    mode_t const forbidden = directory ? 022 : 077;
    if ((st.st_mode & forbidden) != 0)
        return store_error(path + " is open to other users (mode " + octal(st.st_mode) + "): chmod " +
                           (directory ? "700 " : "600 ") + path);
    return {};
}

client::result<void> make_dirs(std::string const& dir) {
    std::string partial;
    for (std::size_t i = 0; i <= dir.size(); ++i) {
        if (i != dir.size() && dir[i] != '/') {
            continue;
        }
        partial = dir.substr(0, i);
        if (partial.empty())
            continue;
        if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST)
            return store_error("cannot create " + partial + ": " + errno_text());
    }
    return {};
}

std::int64_t seconds_of(clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

json::object to_json(token_set const& t) {
    json::array scopes;
    for (auto const& s : t.scopes)
        scopes.emplace_back(s);
    json::object o{
        {"issuer", t.issuer},         {"resource", t.resource},           {"access_token", t.access_token},
        {"token_type", t.token_type}, {"refresh_token", t.refresh_token}, {"scopes", std::move(scopes)}};
    if (t.expires_at)
        o["expires_at"] = seconds_of(*t.expires_at);
    if (!t.client_id.empty())
        o["client_id"] = t.client_id;
    if (t.obtained_at)
        o["obtained_at"] = seconds_of(*t.obtained_at);
    return o;
}

json::object to_json(client_registration const& r) {
    json::object o{{"issuer", r.issuer},
                   {"client_id", r.client_id},
                   {"client_secret", r.client_secret},
                   {"token_endpoint_auth_method", r.token_endpoint_auth_method}};
    if (r.secret_expires_at)
        o["secret_expires_at"] = seconds_of(*r.secret_expires_at);
    return o;
}

// The string members of `o` named in `fields`, into `into`; false when one is missing or not a string.
bool read_strings(json::object const& o, std::initializer_list<std::pair<char const*, std::string*>> fields) {
    for (auto const& f : fields) {
        auto const* v = o.if_contains(f.first);
        if (!v || !v->is_string())
            return false;
        *f.second = std::string(v->get_string());
    }
    return true;
}

std::optional<clock::time_point> read_time(json::object const& o, char const* name, bool& ok) {
    auto const* v = o.if_contains(name);
    if (!v)
        return std::nullopt;
    if (!v->is_int64()) {
        ok = false;
        return std::nullopt;
    }
    return clock::time_point(std::chrono::seconds(v->get_int64()));
}

std::optional<token_set> token_from(json::value const& v) {
    auto const* o = v.if_object();
    if (!o)
        return std::nullopt;
    token_set t;
    if (!read_strings(*o, {{"issuer", &t.issuer},
                           {"resource", &t.resource},
                           {"access_token", &t.access_token},
                           {"token_type", &t.token_type},
                           {"refresh_token", &t.refresh_token}}))
        return std::nullopt;
    bool ok = true;
    t.expires_at = read_time(*o, "expires_at", ok);
    t.obtained_at = read_time(*o, "obtained_at", ok);
    if (auto const* id = o->if_contains("client_id")) {
        if (!id->is_string())
            return std::nullopt;
        t.client_id = std::string(id->get_string());
    }
    auto const* scopes = o->if_contains("scopes");
    if (!ok || !scopes || !scopes->is_array())
        return std::nullopt;
    for (auto const& s : scopes->get_array()) {
        if (!s.is_string())
            return std::nullopt;
        t.scopes.emplace_back(s.get_string());
    }
    return t;
}

std::optional<client_registration> registration_from(json::value const& v) {
    auto const* o = v.if_object();
    if (!o)
        return std::nullopt;
    client_registration r;
    if (!read_strings(*o, {{"issuer", &r.issuer},
                           {"client_id", &r.client_id},
                           {"client_secret", &r.client_secret},
                           {"token_endpoint_auth_method", &r.token_endpoint_auth_method}}))
        return std::nullopt;
    bool ok = true;
    r.secret_expires_at = read_time(*o, "secret_expires_at", ok);
    if (!ok)
        return std::nullopt;
    return r;
}

} // namespace

client::result<std::string> default_credentials_dir() {
    if (char const* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg == '/')
        return std::string(xdg) + "/duet";
    if (char const* home = std::getenv("HOME"); home && *home)
        return std::string(home) + "/.config/duet";
    return store_error("neither XDG_CONFIG_HOME nor HOME is set: nowhere to keep credentials");
}

client::result<std::shared_ptr<file_store>> file_store::open(std::string dir) {
    while (dir.size() > 1 && dir.back() == '/')
        dir.pop_back();
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
        if (errno != ENOENT)
            return store_error("cannot use " + dir + ": " + errno_text());
        if (auto made = make_dirs(dir); !made)
            return made.error();
        if (::stat(dir.c_str(), &st) != 0)
            return store_error("cannot use " + dir + ": " + errno_text());
    }
    if (auto checked = check_private(dir, st, true); !checked)
        return checked.error();
    auto store = std::make_shared<file_store>(dir + "/credentials.json");
    if (auto readable = store->read(); !readable)
        return readable.error();
    return store;
}

client::result<file_store::contents> file_store::read() const {
    contents c;
    int const fd = ::open(path_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return c;
        return store_error("cannot read " + path_ + ": " + errno_text());
    }
    struct stat st {};
    std::string text;
    bool fine = ::fstat(fd, &st) == 0;
    if (fine) {
        if (auto checked = check_private(path_, st, false); !checked) {
            ::close(fd);
            return checked.error();
        }
        char buffer[8192];
        for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
            if (n < 0) {
                fine = false;
                break;
            }
            text.append(buffer, static_cast<std::size_t>(n));
        }
    }
    ::close(fd);
    if (!fine)
        return store_error("cannot read " + path_ + ": " + errno_text());
    auto const corrupt = [&](std::string const& why) {
        return store_error(path_ + " is not a Duet credentials file (" + why +
                           "): move it away or delete it to start afresh");
    };
    boost::system::error_code ec;
    auto doc = json::parse(text, ec);
    auto const* o = ec ? nullptr : doc.if_object();
    if (!o)
        return corrupt("not a JSON object");
    auto const* tokens = o->if_contains("tokens");
    auto const* registrations = o->if_contains("registrations");
    if (!tokens || !tokens->is_array() || !registrations || !registrations->is_array())
        return corrupt("no tokens and registrations lists");
    for (auto const& t : tokens->get_array()) {
        auto read = token_from(t);
        if (!read)
            return corrupt("a token entry is malformed");
        c.tokens.push_back(std::move(*read));
    }
    for (auto const& r : registrations->get_array()) {
        auto read = registration_from(r);
        if (!read)
            return corrupt("a registration entry is malformed");
        c.registrations.push_back(std::move(*read));
    }
    return c;
}

client::result<void> file_store::write(contents const& c) const {
    json::array tokens;
    for (auto const& t : c.tokens)
        tokens.emplace_back(to_json(t));
    json::array registrations;
    for (auto const& r : c.registrations)
        registrations.emplace_back(to_json(r));
    json::object doc{{"tokens", std::move(tokens)}, {"registrations", std::move(registrations)}};
    auto const text = jsonrpc::to_json_text(doc) + "\n";
    auto const temporary = path_ + ".tmp-" + std::to_string(::getpid());
    int const fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return store_error("cannot write " + temporary + ": " + errno_text());
    std::size_t done = 0;
    bool fine = true;
    while (fine && done < text.size()) {
        auto const n = ::write(fd, text.data() + done, text.size() - done);
        fine = n > 0;
        if (fine)
            done += static_cast<std::size_t>(n);
    }
    fine = fine && ::fsync(fd) == 0;
    auto const why = fine ? std::string() : errno_text();
    ::close(fd);
    if (!fine || ::rename(temporary.c_str(), path_.c_str()) != 0) {
        auto const reason = fine ? errno_text() : why;
        ::unlink(temporary.c_str());
        return store_error("cannot write " + path_ + ": " + reason);
    }
    return {};
}

client::result<std::optional<token_set>> file_store::load_tokens(std::string const& resource) {
    auto c = read();
    if (!c)
        return c.error();
    for (auto& t : c->tokens)
        if (t.resource == resource)
            return std::optional<token_set>(std::move(t));
    return std::optional<token_set>{};
}

client::result<void> file_store::save_tokens(token_set const& tokens) {
    auto c = read();
    if (!c)
        return c.error();
    std::erase_if(c->tokens, [&](auto const& t) { return t.resource == tokens.resource; });
    c->tokens.push_back(tokens);
    return write(*c);
}

client::result<void> file_store::erase_tokens(std::string const& resource) {
    auto c = read();
    if (!c)
        return c.error();
    auto const removed = std::erase_if(c->tokens, [&](auto const& t) { return t.resource == resource; });
    if (removed == 0)
        return {};
    return write(*c);
}

client::result<std::optional<client_registration>> file_store::load_registration(std::string const& issuer) {
    auto c = read();
    if (!c)
        return c.error();
    for (auto& r : c->registrations)
        if (r.issuer == issuer)
            return std::optional<client_registration>(std::move(r));
    return std::optional<client_registration>{};
}

client::result<void> file_store::save_registration(client_registration const& registration) {
    auto c = read();
    if (!c)
        return c.error();
    std::erase_if(c->registrations, [&](auto const& r) { return r.issuer == registration.issuer; });
    c->registrations.push_back(registration);
    return write(*c);
}

client::result<std::vector<token_set>> file_store::all_tokens() {
    auto c = read();
    if (!c)
        return c.error();
    return std::move(c->tokens);
}

client::result<void> file_store::erase_all_tokens() {
    auto c = read();
    if (!c)
        return c.error();
    if (c->tokens.empty())
        return {};
    c->tokens.clear();
    return write(*c);
}

} // namespace duet::auth
