#include "connection.hpp"

#include <boost/asio/post.hpp>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

namespace duet::store::redis {

namespace asio = boost::asio;

// Asio's view of one hiredis context's socket. It watches a duplicate of hiredis' descriptor, so each side
// closes its own and neither outlives the other's: hiredis frees its context whenever the connection breaks.
struct connection::watch : std::enable_shared_from_this<watch> {
    watch(strand const& s, int fd, redisAsyncContext* c) : descriptor(s, fd), ac(c) {}

    asio::posix::stream_descriptor descriptor;
    redisAsyncContext* ac; ///< null once hiredis cleaned the context up
    bool reading = false;
    bool writing = false;
    bool read_armed = false;
    bool write_armed = false;

    void arm_read() {
        if (read_armed || !ac)
            return;
        read_armed = true;
        descriptor.async_wait(asio::posix::descriptor_base::wait_read,
                              [self = shared_from_this()](boost::system::error_code ec) {
                                  self->read_armed = false;
                                  if (ec || !self->ac || !self->reading)
                                      return;
                                  redisAsyncHandleRead(self->ac); // may free the context
                                  if (self->ac && self->reading)
                                      self->arm_read();
                              });
    }
    void arm_write() {
        if (write_armed || !ac)
            return;
        write_armed = true;
        descriptor.async_wait(asio::posix::descriptor_base::wait_write,
                              [self = shared_from_this()](boost::system::error_code ec) {
                                  self->write_armed = false;
                                  if (ec || !self->ac || !self->writing)
                                      return;
                                  redisAsyncHandleWrite(self->ac);
                                  if (self->ac && self->writing)
                                      self->arm_write();
                              });
    }

    // hiredis' event hooks: `privdata` is the watch.
    static void add_read(void* p) {
        auto* w = static_cast<watch*>(p);
        w->reading = true;
        w->arm_read();
    }
    static void del_read(void* p) { static_cast<watch*>(p)->reading = false; }
    static void add_write(void* p) {
        auto* w = static_cast<watch*>(p);
        w->writing = true;
        w->arm_write();
    }
    static void del_write(void* p) { static_cast<watch*>(p)->writing = false; }
    static void cleanup(void* p) {
        auto* w = static_cast<watch*>(p);
        w->ac = nullptr;
        w->reading = w->writing = false;
        boost::system::error_code ignored;
        w->descriptor.close(ignored); // our duplicate; pending waits end with operation_aborted
    }
};

std::shared_ptr<connection> connection::create(strand s, redis_options where, events e) {
    return std::shared_ptr<connection>(new connection(std::move(s), std::move(where), std::move(e)));
}

connection::connection(strand s, redis_options where, events e)
    : strand_(std::move(s)), where_(std::move(where)), events_(std::move(e)), timer_(strand_),
      backoff_(where_.min_backoff) {}

connection::~connection() {
    // stop() frees the context on the strand; this is for an executor that stopped before running it.
    if (auto* ac = std::exchange(ac_, nullptr))
        redisAsyncFree(ac);
}

void connection::start() {
    asio::post(strand_, [self = shared_from_this()] { self->connect(); });
}

void connection::stop() {
    asio::post(strand_, [self = shared_from_this()] {
        self->stopped_ = true;
        self->ready_ = false;
        self->timer_.cancel();
        self->channels_.clear();
        if (auto* ac = std::exchange(self->ac_, nullptr))
            redisAsyncFree(ac); // pending commands' callbacks run with no reply
    });
}

void connection::connect() {
    if (stopped_)
        return;
    auto* ac = redisAsyncConnect(where_.host.c_str(), where_.port);
    if (!ac)
        return on_disconnected("cannot allocate a Redis connection");
    if (ac->err) {
        std::string why = ac->errstr;
        redisAsyncFree(ac);
        return on_disconnected(std::move(why));
    }
    int const copy = ::dup(ac->c.fd);
    if (copy < 0) {
        redisAsyncFree(ac);
        return on_disconnected("cannot watch the Redis socket (dup failed)");
    }
    watch_ = std::make_shared<watch>(strand_, copy, ac);
    ac->ev.data = watch_.get();
    ac->ev.addRead = &watch::add_read;
    ac->ev.delRead = &watch::del_read;
    ac->ev.addWrite = &watch::add_write;
    ac->ev.delWrite = &watch::del_write;
    ac->ev.cleanup = &watch::cleanup;
    ac->data = this;
    redisAsyncSetConnectCallback(ac, &connection::on_connect);
    redisAsyncSetDisconnectCallback(ac, &connection::on_disconnect);
    ac_ = ac;

    // The handshake, pipelined behind the connect: the database first when one is named, then PING, whose
    // answer makes the connection ready.
    if (where_.database != 0) {
        auto* select = new done([](std::optional<reply>) {});
        send({"SELECT", std::to_string(where_.database)}, &connection::on_reply, select);
    }
    auto* ping = new done([self = shared_from_this(), ac](std::optional<reply> r) {
        if (self->ac_ != ac)
            return;
        if (r && !r->is_error())
            return self->on_connected();
        // A refused SELECT (no such database) or PING (e.g. authentication required): nothing will work.
        std::string why = r ? r->text : std::string("no answer to PING");
        self->ac_ = nullptr;
        redisAsyncFree(ac);
        self->on_disconnected(std::move(why));
    });
    send({"PING"}, &connection::on_reply, ping);

    auto const attempt = ac;
    timer_.expires_after(where_.connect_timeout);
    timer_.async_wait([self = shared_from_this(), attempt](boost::system::error_code ec) {
        if (ec || self->ac_ != attempt || self->ready_)
            return;
        self->ac_ = nullptr;
        redisAsyncFree(attempt);
        self->on_disconnected("no answer within " + std::to_string(self->where_.connect_timeout.count()) +
                              " ms");
    });
}

void connection::on_connected() {
    ready_ = true;
    backoff_ = where_.min_backoff;
    timer_.cancel();
    for (auto const& channel : channels_)
        send({"SUBSCRIBE", channel}, &connection::on_pubsub, this);
    if (events_.ready)
        events_.ready();
}

void connection::on_disconnected(std::string why) {
    ready_ = false;
    if (events_.lost)
        events_.lost(why);
    retry_later();
}

void connection::retry_later() {
    if (stopped_)
        return;
    auto const wait = backoff_;
    backoff_ = std::min(backoff_ * 2, where_.max_backoff);
    timer_.expires_after(wait);
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (!ec && !self->ac_)
            self->connect();
    });
}

void connection::send(std::vector<std::string> const& args, void (*fn)(redisAsyncContext*, void*, void*),
                      void* data) {
    std::vector<char const*> argv;
    std::vector<std::size_t> lengths;
    argv.reserve(args.size());
    lengths.reserve(args.size());
    for (auto const& a : args) {
        argv.push_back(a.data());
        lengths.push_back(a.size());
    }
    if (!ac_ || redisAsyncCommandArgv(ac_, fn, data, static_cast<int>(argv.size()), argv.data(),
                                      lengths.data()) != REDIS_OK) {
        // Not taken: the callback will never run, so it runs now, with no reply.
        fn(nullptr, nullptr, data);
    }
}

void connection::command(std::vector<std::string> const& args, done d) {
    if (!ready_ || !ac_)
        return d(std::nullopt);
    send(args, &connection::on_reply, new done(std::move(d)));
}

void connection::subscribe(std::string const& channel) {
    if (channels_.insert(channel).second && ready_)
        send({"SUBSCRIBE", channel}, &connection::on_pubsub, this);
}

void connection::unsubscribe(std::string const& channel) {
    if (channels_.erase(channel) && ready_)
        send({"UNSUBSCRIBE", channel}, &connection::on_pubsub, this);
}

void connection::on_reply(redisAsyncContext*, void* r, void* data) {
    std::unique_ptr<done> const d(static_cast<done*>(data));
    if (!r)
        return (*d)(std::nullopt);
    (*d)(reply::from(*static_cast<redisReply*>(r)));
}

void connection::on_pubsub(redisAsyncContext* ac, void* r, void* data) {
    auto* self = static_cast<connection*>(data);
    auto const* message = static_cast<redisReply*>(r);
    if (!ac || !message || self->ac_ != ac || message->type != REDIS_REPLY_ARRAY || message->elements < 3)
        return;
    auto text = [&](std::size_t i) {
        auto const* e = message->element[i];
        return e->type == REDIS_REPLY_STRING ? std::string_view(e->str, e->len) : std::string_view();
    };
    auto const kind = text(0);
    if (kind == "message" && self->events_.message)
        self->events_.message(text(1), text(2));
    else if (kind == "subscribe" && self->events_.subscribed)
        self->events_.subscribed(text(1));
}

void connection::on_connect(redisAsyncContext const* ac, int status) {
    if (status == REDIS_OK)
        return; // ready once PING is answered
    auto* self = static_cast<connection*>(ac->data);
    if (self->ac_ != ac)
        return;
    self->ac_ = nullptr; // hiredis frees a context whose connect failed
    self->on_disconnected(ac->errstr[0] ? ac->errstr : "connection refused");
}

void connection::on_disconnect(redisAsyncContext const* ac, int status) {
    auto* self = static_cast<connection*>(ac->data);
    if (self->ac_ != ac)
        return; // we freed it ourselves
    self->ac_ = nullptr;
    self->on_disconnected(status == REDIS_OK ? std::string("Redis closed the connection")
                                             : std::string(ac->errstr));
}

} // namespace duet::store::redis
