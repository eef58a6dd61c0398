// Tests for duet/client/elicitation_form.hpp: the fields of a form elicitation's requestedSchema.
#include <duet/client/elicitation_form.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

namespace {

using duet::client::requested_fields;
namespace json = boost::json;

TEST(RequestedFields, ListsPropertiesInOrderWithTypeAndDefault) {
    auto const params = json::parse(R"({"message":"Who?","requestedSchema":{"type":"object","properties":{
        "name":{"type":"string","default":"Ada"},"age":{"type":"integer"},"ok":{"type":"boolean","default":false}}}})")
                            .as_object();
    auto const fields = requested_fields(params);
    ASSERT_EQ(fields.size(), 3u);
    EXPECT_EQ(fields[0].name, "name");
    EXPECT_EQ(fields[0].type, "string");
    ASSERT_NE(fields[0].default_value, nullptr);
    EXPECT_EQ(*fields[0].default_value, "Ada");
    EXPECT_EQ(fields[1].name, "age");
    EXPECT_EQ(fields[1].type, "integer");
    EXPECT_EQ(fields[1].default_value, nullptr);
    EXPECT_EQ(fields[2].type, "boolean");
    ASSERT_NE(fields[2].default_value, nullptr);
    EXPECT_EQ(*fields[2].default_value, false);
}

TEST(RequestedFields, PropertyWithoutTypeOrNotAnObjectIsAPlainString) {
    auto const params =
        json::parse(R"({"requestedSchema":{"properties":{"a":{},"b":7,"c":{"type":3}}}})").as_object();
    auto const fields = requested_fields(params);
    ASSERT_EQ(fields.size(), 3u);
    for (auto const& f : fields) {
        EXPECT_EQ(f.type, "string") << f.name;
        EXPECT_EQ(f.default_value, nullptr) << f.name;
    }
}

TEST(RequestedFields, NoSchemaOrMalformedSchemaAsksNothing) {
    EXPECT_TRUE(requested_fields(json::object{}).empty());
    EXPECT_TRUE(requested_fields(json::parse(R"({"requestedSchema":"x"})").as_object()).empty());
    EXPECT_TRUE(
        requested_fields(json::parse(R"({"requestedSchema":{"properties":[1]}})").as_object()).empty());
    EXPECT_TRUE(
        requested_fields(json::parse(R"({"mode":"url","url":"http://127.0.0.1/"})").as_object()).empty());
}

} // namespace
