#include <duet/protocol/schema/describe.hpp>

#include <boost/describe/class.hpp>
#include <boost/describe/enum.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace schema_describe_test {

enum class level { low, high };
BOOST_DESCRIBE_ENUM(level, low, high)

struct place {
    std::string name;
    std::optional<std::string> note;
};
BOOST_DESCRIBE_STRUCT(place, (), (name, note))

struct order {
    std::string customer;
    std::optional<std::string> coupon;
    std::int8_t quantity;
    double weight;
    bool gift;
    level priority;
    std::vector<std::string> tags;
    std::map<std::string, int> counts;
    place destination;
    boost::json::value extra;
};
BOOST_DESCRIBE_STRUCT(order, (),
                      (customer, coupon, quantity, weight, gift, priority, tags, counts, destination, extra))

using duet::schema::decode;
using duet::schema::encode;
using duet::schema::schema_of;

boost::json::value parsed(char const* text) {
    return boost::json::parse(text);
}

constexpr char const* full_order =
    R"({"customer":"Ada","coupon":"SPRING","quantity":3,"weight":1.5,"gift":true,
    "priority":"high","tags":["a","b"],"counts":{"x":1},"destination":{"name":"Paris","note":"door 2"},
    "extra":{"any":[1,null]}})";

TEST(SchemaDescribe, SchemaListsEveryMemberAndRequiresTheNonOptionalOnes) {
    auto const s = schema_of<order>();
    EXPECT_EQ(s.at("type"), "object");
    auto const& props = s.at("properties").as_object();
    EXPECT_EQ(props.at("customer"), parsed(R"({"type":"string"})"));
    EXPECT_EQ(props.at("coupon"), parsed(R"({"type":"string"})"));
    EXPECT_EQ(props.at("quantity"), parsed(R"({"type":"integer"})"));
    EXPECT_EQ(props.at("weight"), parsed(R"({"type":"number"})"));
    EXPECT_EQ(props.at("gift"), parsed(R"({"type":"boolean"})"));
    EXPECT_EQ(props.at("priority"), parsed(R"({"type":"string","enum":["low","high"]})"));
    EXPECT_EQ(props.at("tags"), parsed(R"({"type":"array","items":{"type":"string"}})"));
    EXPECT_EQ(props.at("counts"), parsed(R"({"type":"object","additionalProperties":{"type":"integer"}})"));
    EXPECT_EQ(props.at("destination"),
              parsed(R"({"type":"object","properties":{"name":{"type":"string"},"note":{"type":"string"}},
                       "required":["name"]})"));
    EXPECT_EQ(props.at("extra"), parsed("{}"));
    EXPECT_EQ(s.at("required"), parsed(R"(["customer","quantity","weight","gift","priority","tags","counts",
                                         "destination","extra"])"));
}

TEST(SchemaDescribe, DecodesStringsOptionalStringsAndEveryOtherKind) {
    auto const o = decode<order>(parsed(full_order));
    ASSERT_TRUE(o) << o.error().to_string();
    EXPECT_EQ(o->customer, "Ada");
    EXPECT_EQ(o->coupon, "SPRING");
    EXPECT_EQ(o->quantity, 3);
    EXPECT_EQ(o->weight, 1.5);
    EXPECT_TRUE(o->gift);
    EXPECT_EQ(o->priority, level::high);
    EXPECT_EQ(o->tags, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(o->counts, (std::map<std::string, int>{{"x", 1}}));
    EXPECT_EQ(o->destination.name, "Paris");
    EXPECT_EQ(o->destination.note, "door 2");
    EXPECT_EQ(o->extra, parsed(R"({"any":[1,null]})"));
}

TEST(SchemaDescribe, AnAbsentOrNullOptionalStringIsEmpty) {
    auto const absent = decode<place>(parsed(R"({"name":"Oslo"})"));
    ASSERT_TRUE(absent);
    EXPECT_FALSE(absent->note);
    auto const null = decode<place>(parsed(R"({"name":"Oslo","note":null})"));
    ASSERT_TRUE(null);
    EXPECT_FALSE(null->note);
    auto const alone = decode<std::string>(parsed(R"("just text")"));
    ASSERT_TRUE(alone);
    EXPECT_EQ(*alone, "just text");
}

TEST(SchemaDescribe, EveryBadInputNamesItsPath) {
    struct bad_case {
        char const* input;
        char const* error;
    };
    bad_case const cases[] = {
        {R"([])", "expected an object"},
        {R"({"customer":"Ada"})", "quantity: is required"},
        {R"({"customer":7})", "customer: expected a string"},
        {R"({"customer":"A","coupon":5})", "coupon: expected a string"},
        {R"({"customer":"A","quantity":300})", "quantity: integer out of range"},
        {R"({"customer":"A","quantity":1.5})", "quantity: expected an integer"},
        {R"({"customer":"A","quantity":1,"weight":"heavy"})", "weight: expected a number"},
        {R"({"customer":"A","quantity":1,"weight":1,"gift":"yes"})", "gift: expected a boolean"},
        {R"({"customer":"A","quantity":1,"weight":1,"gift":true,"priority":"urgent"})",
         R"(priority: "urgent" is not one of the allowed values)"},
        {R"({"customer":"A","quantity":1,"weight":1,"gift":true,"priority":"low","tags":["a",2]})",
         "tags[1]: expected a string"},
        {R"({"customer":"A","quantity":1,"weight":1,"gift":true,"priority":"low","tags":[],"counts":{"k":"v"}})",
         "counts.k: expected an integer"},
        {R"({"customer":"A","quantity":1,"weight":1,"gift":true,"priority":"low","tags":[],"counts":{},
             "destination":{"note":"x"}})",
         "destination.name: is required"},
    };
    for (auto const& c : cases) {
        auto const o = decode<order>(parsed(c.input));
        ASSERT_FALSE(o) << c.input;
        EXPECT_EQ(o.error().to_string(), c.error) << c.input;
    }
}

TEST(SchemaDescribe, EncodeLeavesEmptyOptionalsOutAndRoundTrips) {
    auto o = decode<order>(parsed(full_order));
    ASSERT_TRUE(o);
    o->coupon.reset();
    auto const written = encode(*o);
    EXPECT_FALSE(written.as_object().contains("coupon"));
    EXPECT_EQ(written.at("priority"), "high");
    EXPECT_EQ(written.at("destination"), parsed(R"({"name":"Paris","note":"door 2"})"));
    auto const again = decode<order>(written);
    ASSERT_TRUE(again) << again.error().to_string();
    EXPECT_EQ(encode(*again), written);
}

} // namespace schema_describe_test
