// The sealed requestState of modern multi round-trip requests (DIGEST §4: "treat requestState as hostile ...
// bind expiry and method/params, and reject tampering"): what a sealer seals comes back unchanged, and only
// to the same server key, method and params before the expiry; any altered byte, foreign key or malformed
// token is refused.
#include <duet/server/input_state.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace json = boost::json;
using duet::server::input_state;
using duet::server::state_sealer;
using clock_type = std::chrono::system_clock;

constexpr std::string_view key_a = "0123456789abcdef-key-a";
constexpr std::string_view key_b = "0123456789abcdef-key-b";
constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/";

// A fixed instant, so expiry is exact.
clock_type::time_point const t0 = clock_type::time_point(std::chrono::seconds(1'900'000'000));
clock_type::time_point const expiry = t0 + std::chrono::minutes(10);

json::value wizard_call_params() {
    return json::parse(R"({"name":"wizard","arguments":{"size":3,"tags":["a","b"],"opts":{"x":1,"y":null}},
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                 "io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}})");
}

input_state sample_state() {
    input_state s;
    s.answers["name"] = json::parse(R"({"action":"accept","content":{"name":"Ada"}})");
    s.handler_state["runs"] = 2;
    s.handler_state["note"] = "héllo \"quoted\"";
    s.pending.emplace_back("color");
    return s;
}

TEST(InputStateSealer, RoundTripKeepsAnswersHandlerStateAndPendingKeys) {
    state_sealer const sealer{std::string(key_a)};
    auto const token = sealer.seal("tools/call", wizard_call_params(), sample_state(), expiry);
    auto const opened = sealer.open(token, "tools/call", wizard_call_params(), t0);
    ASSERT_TRUE(opened) << opened.error().message;
    auto const want = sample_state();
    EXPECT_EQ(opened->answers, want.answers);
    EXPECT_EQ(opened->handler_state, want.handler_state);
    EXPECT_EQ(opened->pending, want.pending);
}

TEST(InputStateSealer, EmptyStateRoundTrips) {
    state_sealer const sealer{std::string(key_a)};
    auto const token = sealer.seal("prompts/get", json::object{{"name", "p"}}, input_state{}, expiry);
    auto const opened = sealer.open(token, "prompts/get", json::object{{"name", "p"}}, t0);
    ASSERT_TRUE(opened) << opened.error().message;
    EXPECT_TRUE(opened->answers.empty());
    EXPECT_TRUE(opened->handler_state.empty());
    EXPECT_TRUE(opened->pending.empty());
}

// The token is opaque printable text (it travels in JSON and, on HTTP, nowhere else): base64url and one dot.
TEST(InputStateSealer, TokenIsBase64UrlBodyDotMac) {
    state_sealer const sealer{std::string(key_a)};
    auto const token = sealer.seal("tools/call", wizard_call_params(), sample_state(), expiry);
    auto const dot = token.find('.');
    ASSERT_NE(dot, std::string::npos) << token;
    EXPECT_EQ(token.find('.', dot + 1), std::string::npos) << token;
    for (char c : token)
        EXPECT_NE(alphabet.substr(0, 65).find(c), std::string_view::npos)
            << "unexpected character in " << token;
    // Nothing of the state is readable as plain text (it is encoded, though not secret).
    EXPECT_EQ(token.find("Ada"), std::string::npos) << token;
}

// Any single changed character anywhere in the token is refused: body bytes break the MAC, MAC bytes break
// the comparison, and there is no second spelling of the same MAC (base64 padding bits included).
TEST(InputStateSealer, EveryAlteredCharacterIsRefused) {
    state_sealer const sealer{std::string(key_a)};
    auto const token = sealer.seal("tools/call", wizard_call_params(), sample_state(), expiry);
    ASSERT_TRUE(sealer.open(token, "tools/call", wizard_call_params(), t0));
    std::size_t tried = 0;
    for (std::size_t i = 0; i < token.size(); ++i) {
        for (char c : alphabet) {
            if (c == token[i])
                continue;
            std::string altered = token;
            altered[i] = c;
            ++tried;
            EXPECT_FALSE(sealer.open(altered, "tools/call", wizard_call_params(), t0))
                << "accepted with position " << i << " changed to '" << c << "'";
        }
    }
    EXPECT_GT(tried, token.size() * 60);
}

TEST(InputStateSealer, TruncatedOrExtendedTokenIsRefused) {
    state_sealer const sealer{std::string(key_a)};
    auto const token = sealer.seal("tools/call", wizard_call_params(), sample_state(), expiry);
    for (std::size_t n = 0; n < token.size(); ++n)
        EXPECT_FALSE(sealer.open(token.substr(0, n), "tools/call", wizard_call_params(), t0))
            << "prefix of length " << n;
    for (std::size_t n = 1; n < token.size(); ++n)
        EXPECT_FALSE(sealer.open(token.substr(n), "tools/call", wizard_call_params(), t0))
            << "suffix from " << n;
    // What the official conformance suite sends.
    EXPECT_FALSE(sealer.open(token + "-TAMPERED", "tools/call", wizard_call_params(), t0));
    EXPECT_FALSE(sealer.open(token + "A", "tools/call", wizard_call_params(), t0));
    EXPECT_FALSE(sealer.open(token + ".", "tools/call", wizard_call_params(), t0));
    EXPECT_FALSE(sealer.open("A" + token, "tools/call", wizard_call_params(), t0));
}

TEST(InputStateSealer, StateOfAnotherKeyIsRefused) {
    state_sealer const a{std::string(key_a)};
    state_sealer const b{std::string(key_b)};
    auto const token = a.seal("tools/call", wizard_call_params(), sample_state(), expiry);
    auto const opened = b.open(token, "tools/call", wizard_call_params(), t0);
    ASSERT_FALSE(opened);
    EXPECT_FALSE(opened.error().message.empty());
    // Two random keys differ too.
    state_sealer const r1;
    state_sealer const r2;
    EXPECT_FALSE(r2.open(r1.seal("tools/call", wizard_call_params(), sample_state(), expiry), "tools/call",
                         wizard_call_params(), t0));
    EXPECT_TRUE(r1.open(r1.seal("tools/call", wizard_call_params(), sample_state(), expiry), "tools/call",
                        wizard_call_params(), t0));
}

// Instances behind one endpoint share a configured key, so any of them opens any other's state.
TEST(InputStateSealer, SameConfiguredKeyOpensAcrossInstances) {
    state_sealer const a{std::string(key_a)};
    state_sealer const a2{std::string(key_a)};
    EXPECT_TRUE(a2.open(a.seal("tools/call", wizard_call_params(), sample_state(), expiry), "tools/call",
                        wizard_call_params(), t0));
}

TEST(InputStateSealer, StateOfAnotherMethodIsRefused) {
    state_sealer const sealer{std::string(key_a)};
    json::value const params = json::object{{"name", "wizard"}};
    auto const token = sealer.seal("tools/call", params, sample_state(), expiry);
    for (std::string_view other : {"prompts/get", "resources/read", "tools/list", "", "tools/call "}) {
        auto const opened = sealer.open(token, other, params, t0);
        EXPECT_FALSE(opened) << other;
    }
}

TEST(InputStateSealer, StateOfOtherParamsIsRefused) {
    state_sealer const sealer{std::string(key_a)};
    auto const token = sealer.seal("tools/call", wizard_call_params(), sample_state(), expiry);
    auto variant = [](auto&& change) {
        auto p = wizard_call_params();
        change(p.as_object());
        return p;
    };
    json::value const others[] = {
        variant([](json::object& p) { p["name"] = "other"; }),
        variant([](json::object& p) { p["arguments"].as_object()["size"] = 4; }),
        variant([](json::object& p) { p["arguments"].as_object()["size"] = "3"; }),
        variant([](json::object& p) {
            p["arguments"].as_object()["tags"] = json::array{"b", "a"};
        }),
        variant([](json::object& p) { p["arguments"].as_object()["opts"].as_object().erase("y"); }),
        variant([](json::object& p) { p["arguments"].as_object()["extra"] = true; }),
        variant([](json::object& p) { p.erase("arguments"); }),
        variant([](json::object& p) { p["cursor"] = "x"; }),
        json::value(nullptr),
        json::value(json::array{}),
    };
    for (auto const& other : others)
        EXPECT_FALSE(sealer.open(token, "tools/call", other, t0)) << other;
}

// Member order is not part of a request's identity: a client may re-serialize its params in any order.
TEST(InputStateSealer, ParamsWithReorderedMembersStillMatch) {
    state_sealer const sealer{std::string(key_a)};
    auto const token = sealer.seal("tools/call", wizard_call_params(), sample_state(), expiry);
    auto const reordered = json::parse(R"({"arguments":{"opts":{"y":null,"x":1},"tags":["a","b"],"size":3},
        "_meta":{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},
                 "io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"wizard"})");
    auto const opened = sealer.open(token, "tools/call", reordered, t0);
    EXPECT_TRUE(opened) << (opened ? "" : opened.error().message);
    EXPECT_EQ(state_sealer::canonical_params(wizard_call_params()),
              state_sealer::canonical_params(reordered));
}

// `_meta` (which carries per-request things such as progressToken), inputResponses and requestState change
// from round to round; they are not part of what the state is bound to.
TEST(InputStateSealer, MetaInputResponsesAndRequestStateAreNotBound) {
    state_sealer const sealer{std::string(key_a)};
    auto const token = sealer.seal("tools/call", wizard_call_params(), sample_state(), expiry);
    auto retry = wizard_call_params();
    auto& p = retry.as_object();
    p["_meta"] =
        json::object{{"progressToken", 9}, {"io.modelcontextprotocol/protocolVersion", "2026-07-28"}};
    p["inputResponses"] = json::object{{"color", {{"action", "accept"}, {"content", {{"color", "blue"}}}}}};
    p["requestState"] = token;
    auto const opened = sealer.open(token, "tools/call", retry, t0);
    EXPECT_TRUE(opened) << (opened ? "" : opened.error().message);
    p.erase("_meta");
    p.erase("inputResponses");
    p.erase("requestState");
    EXPECT_TRUE(sealer.open(token, "tools/call", retry, t0));
    EXPECT_EQ(state_sealer::canonical_params(retry), state_sealer::canonical_params(wizard_call_params()));
    // Only those three names are left out; a same-named member one level down still counts.
    auto nested = wizard_call_params();
    nested.as_object()["arguments"].as_object()["_meta"] = json::object{};
    EXPECT_FALSE(sealer.open(token, "tools/call", nested, t0));
}

TEST(InputStateSealer, CanonicalParamsSortsKeysAtEveryLevel) {
    EXPECT_EQ(state_sealer::canonical_params(json::parse(R"({"b":{"d":1,"c":[{"f":2,"e":3}]},"a":"x"})")),
              R"({"a":"x","b":{"c":[{"e":3,"f":2}],"d":1}})");
    EXPECT_EQ(state_sealer::canonical_params(json::parse(R"({"_meta":{"a":1},"requestState":"s",
        "inputResponses":{}})")),
              "{}");
}

TEST(InputStateSealer, ExpiredStateIsRefused) {
    state_sealer const sealer{std::string(key_a)};
    auto const token = sealer.seal("tools/call", wizard_call_params(), sample_state(), expiry);
    EXPECT_TRUE(sealer.open(token, "tools/call", wizard_call_params(), expiry - std::chrono::seconds(1)));
    EXPECT_TRUE(sealer.open(token, "tools/call", wizard_call_params(), expiry));
    auto const late =
        sealer.open(token, "tools/call", wizard_call_params(), expiry + std::chrono::seconds(1));
    ASSERT_FALSE(late);
    EXPECT_NE(late.error().message.find("expired"), std::string::npos) << late.error().message;
    EXPECT_FALSE(
        sealer.open(token, "tools/call", wizard_call_params(), expiry + std::chrono::hours(24 * 365)));
}

TEST(InputStateSealer, MalformedTokensAreRefusedWithoutThrowing) {
    state_sealer const sealer{std::string(key_a)};
    for (std::string_view bad : {"", ".", "..", "abc", "abc.", ".abc", "abc.def", "a.b.c", "!!!.???",
                                 "eyJ2IjoxfQ.AAAA", "\xff\xfe.\x00", "====.===="}) {
        auto const opened = sealer.open(bad, "tools/call", wizard_call_params(), t0);
        EXPECT_FALSE(opened) << bad;
        if (!opened) {
            EXPECT_FALSE(opened.error().message.empty());
        }
    }
}

// A MAC over a body that is not the sealer's JSON (here: other JSON, and not JSON at all) is still refused:
// the shape is checked after the MAC, never trusted.
TEST(InputStateSealer, MacIsCheckedBeforeTheBodyIsRead) {
    state_sealer const sealer{std::string(key_a)};
    auto const token = sealer.seal("tools/call", wizard_call_params(), sample_state(), expiry);
    auto const dot = token.find('.');
    auto const mac = token.substr(dot);
    EXPECT_FALSE(sealer.open("eyJ2IjoxfQ" + mac, "tools/call", wizard_call_params(), t0));
    EXPECT_FALSE(sealer.open("bm90IGpzb24" + mac, "tools/call", wizard_call_params(), t0));
}

TEST(InputStateSealer, ShortKeyIsRejected) {
    EXPECT_THROW(state_sealer{std::string("short")}, std::invalid_argument);
    EXPECT_THROW(state_sealer{std::string(15, 'k')}, std::invalid_argument);
    EXPECT_NO_THROW(state_sealer{std::string(16, 'k')});
    EXPECT_NO_THROW(state_sealer{});
}

// ---- key rings: processes sharing keys, a new key rolled in ahead of the old one

using duet::server::state_key;

TEST(InputStateKeyRing, AStateSealedByOneProcessOpensOnAnotherWithTheSameRing) {
    std::vector<state_key> const ring{{"k1", std::string(key_a)}};
    state_sealer const one(ring);
    state_sealer const other(ring);
    auto const token = one.seal("tools/call", wizard_call_params(), sample_state(), expiry);
    EXPECT_TRUE(token.starts_with("k1.")) << token;
    auto const opened = other.open(token, "tools/call", wizard_call_params(), t0);
    ASSERT_TRUE(opened) << opened.error().message;
    EXPECT_EQ(opened->answers, sample_state().answers);
}

TEST(InputStateKeyRing, ANewKeyRolledInStillOpensWhatTheOldOneSealed) {
    state_sealer const before(std::vector<state_key>{{"old", std::string(key_a)}});
    state_sealer const after(
        std::vector<state_key>{{"new", std::string(key_b)}, {"old", std::string(key_a)}});
    auto const in_flight = before.seal("tools/call", wizard_call_params(), sample_state(), expiry);
    EXPECT_TRUE(after.open(in_flight, "tools/call", wizard_call_params(), t0));
    auto const fresh = after.seal("tools/call", wizard_call_params(), sample_state(), expiry);
    EXPECT_TRUE(fresh.starts_with("new.")) << fresh;
    auto const refused = before.open(fresh, "tools/call", wizard_call_params(), t0);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("does not hold"), std::string::npos) << refused.error().message;
}

TEST(InputStateKeyRing, RenamingTheKeyOfASealedStateBreaksItsSeal) {
    std::vector<state_key> const ring{{"a", std::string(key_a)}, {"b", std::string(key_a)}};
    state_sealer const sealer(ring);
    auto token = sealer.seal("tools/call", wizard_call_params(), sample_state(), expiry);
    ASSERT_TRUE(token.starts_with("a."));
    token[0] = 'b'; // the same secret under another name: the MAC covers the name
    EXPECT_FALSE(sealer.open(token, "tools/call", wizard_call_params(), t0));
}

TEST(InputStateKeyRing, AStateWithoutAKeyIdIsRefusedByARing) {
    state_sealer const single{std::string(key_a)};
    state_sealer const ring(std::vector<state_key>{{"k1", std::string(key_a)}});
    auto const unnamed = single.seal("tools/call", wizard_call_params(), sample_state(), expiry);
    EXPECT_FALSE(ring.open(unnamed, "tools/call", wizard_call_params(), t0));
    auto const named = ring.seal("tools/call", wizard_call_params(), sample_state(), expiry);
    EXPECT_FALSE(single.open(named, "tools/call", wizard_call_params(), t0));
}

TEST(InputStateKeyRing, ARingThatCannotWorkIsRefusedWhenMade) {
    EXPECT_THROW(state_sealer(std::vector<state_key>{}), std::invalid_argument);
    EXPECT_THROW(state_sealer(std::vector<state_key>{{"", std::string(key_a)}}), std::invalid_argument);
    EXPECT_THROW(state_sealer(std::vector<state_key>{{"a.b", std::string(key_a)}}), std::invalid_argument);
    EXPECT_THROW(state_sealer(std::vector<state_key>{{std::string(33, 'k'), std::string(key_a)}}),
                 std::invalid_argument);
    EXPECT_THROW(state_sealer(std::vector<state_key>{{"k", "short"}}), std::invalid_argument);
    EXPECT_THROW(state_sealer(std::vector<state_key>{{"k", std::string(key_a)}, {"k", std::string(key_b)}}),
                 std::invalid_argument);
}

} // namespace
