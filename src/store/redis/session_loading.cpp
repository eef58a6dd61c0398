// The Redis session store's loading of a session another process opened: whether it exists, its
// subscription confirmed, then its record and streams read. Apart from the store's other members because it
// is one sequence of callbacks, from find_async() to loaded().
#include "session_store.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace duet::store::redis {

namespace asio = boost::asio;

// A session another process opened: whether it exists, then (subscribed, so that every change made
// from then on is heard) its record and its streams as Redis holds them.
void redis_store::load(std::string const& id) {
    command({"EXISTS", where_.key_prefix + session_topic(id)},
            [self = shared_from_this(), id](std::optional<reply> r) {
                if (!r || r->type != reply::kind::integer || r->integer != 1)
                    return self->loaded(id, nullptr);
                self->subscribe_then_read(self->make_session(id, nullptr));
            });
}

void redis_store::subscribe_then_read(std::shared_ptr<redis_session> s) {
    listen(s);
    // The subscription is confirmed once a publish made after it comes back (a marker of its own: the
    // bus holds it until then); then the streams as Redis holds them. Given up after the connect
    // timeout: Redis is away.
    auto settled = std::make_shared<std::atomic<bool>>(false);
    auto timer = std::make_shared<asio::steady_timer>(strand_, where_.connect_timeout);
    timer->async_wait([self = shared_from_this(), s, settled, timer](boost::system::error_code) {
        if (settled->exchange(true))
            return;
        self->bus_->unsubscribe(s->bus_token);
        self->loaded(s->id(), nullptr);
    });
    auto const marker = "R" + std::to_string(random_stream_number());
    s->on_marker(marker, [self = shared_from_this(), s, settled, timer] {
        asio::post(self->strand_, [self, s, settled, timer] {
            if (settled->load())
                return;
            self->read_streams(s, settled, timer);
        });
    });
    bus_->publish(s->topic(), marker);
}

void redis_store::read_streams(std::shared_ptr<redis_session> const& s,
                               std::shared_ptr<std::atomic<bool>> settled,
                               std::shared_ptr<asio::steady_timer> timer) {
    commands_->command({"HMGET", s->key(), "state", "home"},
                       [self = shared_from_this(), s](std::optional<reply> r) {
                           if (r && r->type == reply::kind::array && r->elements.size() == 2 &&
                               r->elements[0].type == reply::kind::string)
                               s->set_loaded_state(r->elements[0].text, r->elements[1].text == self->tag_);
                           else
                               s->mark_gone(); // ended meanwhile: loaded(), below, finds it so
                       });
    commands_->command({"HGETALL", s->streams_key()}, [self = shared_from_this(), s, settled,
                                                       timer](std::optional<reply> r) {
        std::vector<std::uint64_t> numbers{0};
        // Pairs of a stream's number and its origin ("OWNER ON_LOSS").
        for (std::size_t i = 0; r && i + 1 < r->elements.size(); i += 2) {
            auto const n = parse_u64(r->elements[i].text);
            if (n == 0)
                continue;
            numbers.push_back(n);
            auto const& origin = r->elements[i + 1].text;
            auto const space = origin.find(' ');
            s->mirror(n, true)->set_origin(origin.substr(0, space), space == std::string::npos
                                                                        ? std::string()
                                                                        : origin.substr(space + 1));
        }
        auto left = std::make_shared<std::size_t>(numbers.size());
        for (auto n : numbers) {
            s->mirror(n, true);
            self->read_stream(s, n, 0, [self, s, left, settled, timer] {
                if (--*left != 0 || settled->exchange(true))
                    return;
                timer->cancel();
                self->loaded(s->id(), s);
            });
        }
    });
}

void redis_store::loaded(std::string const& id, std::shared_ptr<redis_session> s) {
    std::vector<std::function<void(std::shared_ptr<session>)>> waiting;
    {
        std::lock_guard lock(mutex_);
        waiting = std::move(loading_[id]);
        loading_.erase(id);
        if (s)
            sessions_.emplace(id, s);
    }
    for (auto& done : waiting)
        done(s);
}

} // namespace duet::store::redis
