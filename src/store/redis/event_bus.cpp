// The event bus over Redis pub/sub (duet/store/redis.hpp): two connections on one strand, one publishing, one
// subscribed to a channel per topic some handler of this process listens on.
#include <duet/store/redis.hpp>

#include "connection.hpp"

#include <boost/asio/post.hpp>

#include <csignal>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace duet::store {

namespace asio = boost::asio;

namespace {

// What a process holds back while its subscriptions are unconfirmed: past it, publishes are dropped.
constexpr std::size_t max_held_publishes = 10000;

void log_line(std::string const& s) {
    std::fprintf(stderr, "duet: %s\n", s.c_str());
}

class redis_event_bus final : public event_bus, public std::enable_shared_from_this<redis_event_bus> {
public:
    redis_event_bus(asio::any_io_executor executor, redis_options where)
        : strand_(asio::make_strand(std::move(executor))), where_(std::move(where)) {}

    ~redis_event_bus() override {
        if (publisher_)
            publisher_->stop();
        if (subscriber_)
            subscriber_->stop();
    }

    void start() {
        std::weak_ptr<redis_event_bus> weak = weak_from_this();
        publisher_ = redis::connection::create(strand_, where_,
                                               {.ready =
                                                    [weak] {
                                                        if (auto self = weak.lock())
                                                            self->publisher_back();
                                                    },
                                                .lost =
                                                    [weak](std::string_view why) {
                                                        if (auto self = weak.lock())
                                                            self->publisher_lost(why);
                                                    },
                                                .message = nullptr,
                                                .subscribed = nullptr});
        subscriber_ =
            redis::connection::create(strand_, where_,
                                      {.ready =
                                           [weak] {
                                               if (auto self = weak.lock())
                                                   self->subscriber_back();
                                           },
                                       .lost = nullptr,
                                       .message =
                                           [weak](std::string_view channel, std::string_view payload) {
                                               if (auto self = weak.lock())
                                                   self->heard(channel, payload);
                                           },
                                       .subscribed =
                                           [weak](std::string_view channel) {
                                               if (auto self = weak.lock())
                                                   self->confirmed(channel);
                                           }});
        publisher_->start();
        subscriber_->start();
    }

    std::uint64_t subscribe(std::string topic, handler h) override {
        auto channel = where_.key_prefix + topic;
        std::uint64_t token = 0;
        bool first = false;
        {
            std::lock_guard lock(mutex_);
            token = next_token_++;
            first = ++listeners_[topic] == 1;
            subscriptions_.emplace(
                token, std::make_shared<subscription const>(subscription{std::move(topic), std::move(h)}));
        }
        if (first)
            asio::post(strand_, [self = shared_from_this(), channel = std::move(channel)] {
                if (self->subscriber_->ready())
                    self->unconfirmed_.insert(channel);
                self->subscriber_->subscribe(channel);
            });
        return token;
    }

    void unsubscribe(std::uint64_t token) override {
        std::string channel;
        {
            std::lock_guard lock(mutex_);
            auto it = subscriptions_.find(token);
            if (it == subscriptions_.end())
                return;
            auto const& topic = it->second->topic;
            if (--listeners_[topic] == 0) {
                listeners_.erase(topic);
                channel = where_.key_prefix + topic;
            }
            subscriptions_.erase(it);
        }
        if (!channel.empty())
            asio::post(strand_, [self = shared_from_this(), channel = std::move(channel)] {
                self->subscriber_->unsubscribe(channel);
            });
    }

    void publish(std::string_view topic, std::string_view payload) override {
        asio::post(strand_, [self = shared_from_this(), channel = where_.key_prefix + std::string(topic),
                             payload = std::string(payload)]() mutable {
            if (self->started_ && self->unconfirmed_.empty())
                return self->send(channel, payload);
            if (self->held_.size() < max_held_publishes)
                self->held_.emplace_back(std::move(channel), std::move(payload));
            else
                self->dropped(1);
        });
    }

private:
    struct subscription {
        std::string topic;
        handler h;
    };

    // ---- on the strand
    // --------------------------------------------------------------------------------------

    void send(std::string const& channel, std::string const& payload) {
        publisher_->command({"PUBLISH", channel, payload},
                            [weak = weak_from_this()](std::optional<redis::reply> r) {
                                if (auto self = weak.lock(); self && (!r || r->is_error()))
                                    self->dropped(1);
                            });
    }

    void dropped(std::size_t n) {
        dropped_ += n;
        if (!outage_reported_) {
            outage_reported_ = true;
            log_line("Redis at " + where_.host + ':' + std::to_string(where_.port) +
                     " cannot be reached: announcements are dropped until it is back");
        }
    }

    void publisher_lost(std::string_view why) {
        if (!outage_reported_ && publisher_was_up_) {
            outage_reported_ = true;
            log_line("lost Redis at " + where_.host + ':' + std::to_string(where_.port) + " (" +
                     std::string(why) + "); reconnecting, announcements are dropped meanwhile");
        }
        publisher_was_up_ = false;
    }

    void publisher_back() {
        if (outage_reported_)
            log_line("Redis at " + where_.host + ':' + std::to_string(where_.port) + " is back" +
                     (dropped_ ? " (" + std::to_string(dropped_) + " announcements were dropped)" : ""));
        outage_reported_ = false;
        publisher_was_up_ = true;
        dropped_ = 0;
        release_held();
    }

    // The connection renewed every subscription: publishes wait until Redis confirmed them.
    void subscriber_back() {
        {
            std::lock_guard lock(mutex_);
            unconfirmed_.clear();
            for (auto const& [topic, n] : listeners_)
                unconfirmed_.insert(where_.key_prefix + topic);
        }
        subscriber_was_up_ = true;
        release_held();
    }

    void confirmed(std::string_view channel) {
        if (auto it = unconfirmed_.find(std::string(channel)); it != unconfirmed_.end())
            unconfirmed_.erase(it);
        release_held();
    }

    // Publishes wait for the bus to come up the first time (both connections) and for this process's
    // subscriptions to be confirmed, so that what this process publishes after subscribing, it hears.
    void release_held() {
        started_ = started_ || (publisher_was_up_ && subscriber_was_up_);
        if (!started_ || !unconfirmed_.empty())
            return;
        auto held = std::exchange(held_, {});
        for (auto& [c, p] : held)
            send(c, p);
    }

    void heard(std::string_view channel, std::string_view payload) {
        if (!channel.starts_with(where_.key_prefix))
            return;
        auto const topic = channel.substr(where_.key_prefix.size());
        // Copied under the lock, called outside it: a handler may subscribe or publish in turn.
        std::vector<std::shared_ptr<subscription const>> to;
        {
            std::lock_guard lock(mutex_);
            for (auto const& [token, s] : subscriptions_)
                if (s->topic == topic)
                    to.push_back(s);
        }
        for (auto const& s : to)
            s->h(payload);
    }

    redis::strand strand_;
    redis_options const where_;
    std::shared_ptr<redis::connection> publisher_;
    std::shared_ptr<redis::connection> subscriber_;

    std::mutex mutex_; // guards the three below, which any thread may touch
    std::map<std::uint64_t, std::shared_ptr<subscription const>> subscriptions_;
    std::map<std::string, std::size_t> listeners_; ///< subscriptions per topic
    std::uint64_t next_token_ = 1;

    std::set<std::string>
        unconfirmed_; ///< strand only: a channel subscribed twice before its confirmation waits once
    std::deque<std::pair<std::string, std::string>> held_;
    std::size_t dropped_ = 0;
    bool outage_reported_ = false;
    bool publisher_was_up_ = false;
    bool subscriber_was_up_ = false;
    bool started_ = false;
};

} // namespace

std::shared_ptr<event_bus> make_redis_event_bus(asio::any_io_executor executor, redis_options where) {
    // hiredis writes with write(2): a Redis gone away must not kill the process.
    std::signal(SIGPIPE, SIG_IGN);
    auto bus = std::make_shared<redis_event_bus>(std::move(executor), std::move(where));
    bus->start();
    return bus;
}

} // namespace duet::store
