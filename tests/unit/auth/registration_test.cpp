// Dynamic client registration: the request body a native MCP client sends, and the authentication method it
// registers with, from what the authorization server lists.
//
// Requirement tags: RFC 7591 §2 (client metadata: redirect_uris, token_endpoint_auth_method, grant_types,
// response_types, client_name) and §3.1 (the JSON request) https://www.rfc-editor.org/rfc/rfc7591#section-2;
// OpenID Connect Dynamic Client Registration 1.0 §2 (application_type "native"); RFC 8252 §8.4 (a native
// client is public: method none); RFC 8414 §2 (client_secret_basic when no methods are listed); MCP
// 2025-11-25 basic/authorization "Dynamic Client Registration" and SEP-2207 (refresh_token asked for where
// the server lists offline_access).
#include "auth/identity.hpp"

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace {

using namespace duet::auth;
using namespace duet::auth::detail;
namespace json = boost::json;

json::object registration_json(oauth_options const& options, server_metadata const& as,
                               std::string const& m) {
    boost::system::error_code ec;
    auto v = json::parse(registration_body(options, as, m), ec);
    EXPECT_FALSE(ec) << registration_body(options, as, m);
    EXPECT_TRUE(v.is_object());
    return v.is_object() ? v.get_object() : json::object{};
}

oauth_options app_options() {
    oauth_options o;
    o.client_name = "Notes \"CLI\"";
    o.redirect_uri = "http://127.0.0.1:5555/callback";
    return o;
}

TEST(Registration, BodyDescribesANativePublicClient) {
    server_metadata as;
    auto const body = registration_json(app_options(), as, "none");
    EXPECT_EQ(body.size(), 6u) << json::serialize(body);
    EXPECT_EQ(body.at("client_name"), "Notes \"CLI\"");
    EXPECT_EQ(body.at("redirect_uris"), (json::array{"http://127.0.0.1:5555/callback"}));
    EXPECT_EQ(body.at("response_types"), (json::array{"code"}));
    EXPECT_EQ(body.at("application_type"), "native");
    EXPECT_EQ(body.at("token_endpoint_auth_method"), "none");
    EXPECT_EQ(body.at("grant_types"), (json::array{"authorization_code"}));
}

TEST(Registration, BodyCarriesTheGivenAuthMethod) {
    server_metadata as;
    auto const body = registration_json(app_options(), as, "client_secret_post");
    EXPECT_EQ(body.at("token_endpoint_auth_method"), "client_secret_post");
}

struct grant_types_case {
    std::string name;
    std::optional<std::vector<std::string>> scopes_supported;
    json::array grant_types;

    friend void PrintTo(grant_types_case const& row, std::ostream* os) { *os << row.name; }
};

class RegistrationGrantTypes : public ::testing::TestWithParam<grant_types_case> {};

TEST_P(RegistrationGrantTypes, AskForRefreshOnlyWhereOfflineAccessIsListed) {
    server_metadata as;
    as.scopes_supported = GetParam().scopes_supported;
    EXPECT_EQ(registration_json(app_options(), as, "none").at("grant_types"), GetParam().grant_types);
}

using GT = grant_types_case;
using scope_names = std::vector<std::string>;

INSTANTIATE_TEST_SUITE_P(
    Registration, RegistrationGrantTypes,
    ::testing::Values(
        GT{"NoScopesListed", std::nullopt, json::array{"authorization_code"}},
        GT{"EmptyScopeList", scope_names{}, json::array{"authorization_code"}},
        GT{"OfflineAccessAbsent", scope_names{"openid", "files:read"}, json::array{"authorization_code"}},
        GT{"OfflineAccessListed", scope_names{"openid", "offline_access"},
           json::array{"authorization_code", "refresh_token"}},
        GT{"OfflineAccessOtherCase", scope_names{"Offline_Access"}, json::array{"authorization_code"}}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// The method to register with.

struct registration_method_case {
    std::string name;
    std::optional<std::vector<std::string>> listed;
    std::string method;

    friend void PrintTo(registration_method_case const& row, std::ostream* os) { *os << row.name; }
};

class RegistrationAuthMethod : public ::testing::TestWithParam<registration_method_case> {};

TEST_P(RegistrationAuthMethod, PrefersNoneThenTheServersSecretMethod) {
    server_metadata as;
    as.token_endpoint_auth_methods_supported = GetParam().listed;
    EXPECT_EQ(registration_auth_method(as), GetParam().method);
}

using RM = registration_method_case;

INSTANTIATE_TEST_SUITE_P(
    Registration, RegistrationAuthMethod,
    ::testing::Values(RM{"NothingListedIsBasicByDefault", std::nullopt, "client_secret_basic"},
                      RM{"NoneListedFirst", scope_names{"none", "client_secret_basic"}, "none"},
                      RM{"NoneListedLast", scope_names{"client_secret_basic", "client_secret_post", "none"},
                         "none"},
                      RM{"OnlyBasic", scope_names{"client_secret_basic"}, "client_secret_basic"},
                      RM{"OnlyPost", scope_names{"client_secret_post"}, "client_secret_post"},
                      RM{"BasicAndPostPrefersBasic", scope_names{"client_secret_post", "client_secret_basic"},
                         "client_secret_basic"},
                      RM{"OnlyPrivateKeyJwtFallsBackToNone", scope_names{"private_key_jwt"}, "none"},
                      RM{"EmptyListFallsBackToNone", scope_names{}, "none"}),
    [](auto const& row) { return row.param.name; });

} // namespace
