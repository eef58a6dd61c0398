// The notes a shared session hears on its channel (redis_session::heard): what every process holding it
// learns from another, each a letter and its words. Apart from the session's operations (session.cpp): this
// is the receiving end of the notes they and the mirrors publish.
#include "session_store.hpp"

namespace duet::store::redis {

// "E<n> <seq> <kind> <data>", "B<payload>", "S<tag> <state>", "H<tag>", "O<n> <owner> <on_loss>" (opened),
// "A<n> <tag> <0|1>", "D<n> <tag>", "C<n>", "F<n>", "X" (ended), "K" (a holder let go of it).
void redis_session::heard(std::string_view text) {
    if (text.empty())
        return;
    auto const what = text.front();
    auto rest = text.substr(1);
    auto word = [&rest]() {
        auto const space = rest.find(' ');
        auto const w = rest.substr(0, space);
        rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
        return w;
    };
    switch (what) {
    case 'E': {
        auto const number = parse_u64(word());
        auto const seq = parse_u64(word());
        auto const kind = word();
        if (auto m = mirror(number, true); m && kind.size() == 1)
            m->take(seq, kind[0], std::string(rest), true);
        break;
    }
    case 'B':
        if (auto* l = local())
            l->on_broadcast(rest);
        break;
    case 'S': {
        auto const from = word();
        if (from == tag_)
            break;
        {
            std::lock_guard lock(mutex_);
            state_ = std::string(rest);
            state_noted_ = true;
        }
        if (auto* l = local())
            l->on_state(rest);
        break;
    }
    case 'H': {
        bool const here = rest == tag_;
        {
            std::lock_guard lock(mutex_);
            home_noted_ = true;
        }
        if (events_here_.exchange(here) != here)
            if (auto* l = local())
                l->on_events_here(here);
        break;
    }
    case 'A': {
        auto const number = parse_u64(word());
        auto const from = std::string(word());
        if (auto m = mirror(number, false))
            m->reader_attached(from, rest == "1");
        break;
    }
    case 'D': {
        auto const number = parse_u64(word());
        if (auto m = mirror(number, false))
            m->reader_detached(std::string(rest));
        break;
    }
    case 'O': {
        auto const number = parse_u64(word());
        auto const owner = std::string(word());
        if (auto m = mirror(number, true); m && number != 0)
            m->set_origin(owner, std::string(rest));
        break;
    }
    case 'C':
        if (auto m = mirror(parse_u64(rest), false))
            m->close_requested();
        break;
    case 'F': {
        std::lock_guard lock(mutex_);
        auto const number = parse_u64(rest);
        streams_.erase(number);
        std::erase(opened_, number);
        break;
    }
    case 'R': {
        std::function<void()> then;
        {
            std::lock_guard lock(mutex_);
            if (text != marker_)
                break;
            then = std::move(marker_then_);
            marker_then_ = nullptr;
        }
        if (then)
            then();
        break;
    }
    case 'X':
        if (!gone_.exchange(true)) { // not already known gone here (ended by this process, or expired)
            end();
            if (auto* l = local())
                l->on_ended();
        }
        note("K"); // let go of: the process ending it answers its client once every holder has
        break;
    case 'K':
        if (auto store = store_.lock())
            store->removal_acknowledged(id_);
        break;
    default:
        break; // a marker of the bus's, or a note of a later build
    }
}

} // namespace duet::store::redis
