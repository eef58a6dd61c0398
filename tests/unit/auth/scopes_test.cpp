// Which scopes an authorization asks for: the challenge's, else the protected resource's, else none; a
// step-up asks for the union of what is held and what the 403 names; scope strings split and joined.
//
// Requirement tags: MCP 2025-11-25 basic/authorization "Scope Selection Strategy" and "Step-Up Authorization
// Flow" https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization; RFC 6749 §3.3 (a
// space-delimited, order-free list of scopes) https://www.rfc-editor.org/rfc/rfc6749#section-3.3; RFC 6750
// §3.1 (insufficient_scope with the scope needed).
#include <duet/auth/scopes.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace {

using namespace duet::auth;
using scope_list = std::vector<std::string>;

// ---------------------------------------------------------------------------------------------------------------
// RFC 6749 §3.3: a space-separated list; duplicates and empty pieces dropped, order kept.

struct split_case {
    std::string name;
    std::string text;
    scope_list scopes;

    friend void PrintTo(split_case const& row, std::ostream* os) { *os << row.name; }
};

class ScopesSplit : public ::testing::TestWithParam<split_case> {};

TEST_P(ScopesSplit, KeepsEachScopeOnceInOrder) {
    EXPECT_EQ(split_scopes(GetParam().text), GetParam().scopes);
}

using SP = split_case;

INSTANTIATE_TEST_SUITE_P(Scopes, ScopesSplit,
                         ::testing::Values(SP{"Empty", "", {}}, SP{"OnlySpaces", "   ", {}},
                                           SP{"One", "files:read", {"files:read"}},
                                           SP{"Two", "files:read files:write", {"files:read", "files:write"}},
                                           SP{"ExtraSpaces", "  a   b  ", {"a", "b"}},
                                           SP{"Duplicates", "a b a c b", {"a", "b", "c"}},
                                           SP{"OrderKept", "z y x", {"z", "y", "x"}},
                                           SP{"CaseMatters", "Read read", {"Read", "read"}}),
                         [](auto const& row) { return row.param.name; });

TEST(Scopes, JoinSeparatesWithOneSpace) {
    EXPECT_EQ(join_scopes(scope_list{}), "");
    EXPECT_EQ(join_scopes(scope_list{"a"}), "a");
    EXPECT_EQ(join_scopes(scope_list{"files:read", "files:write", "openid"}),
              "files:read files:write openid");
}

TEST(Scopes, SplitThenJoinNormalizes) {
    EXPECT_EQ(join_scopes(split_scopes(" b  a b ")), "b a");
}

// ---------------------------------------------------------------------------------------------------------------
// The spec's Scope Selection Strategy.

struct select_case {
    std::string name;
    std::optional<std::string> challenged;
    std::optional<scope_list> resource_scopes;
    std::optional<scope_list> selected;

    friend void PrintTo(select_case const& row, std::ostream* os) { *os << row.name; }
};

class ScopesSelect : public ::testing::TestWithParam<select_case> {};

TEST_P(ScopesSelect, PrefersChallengeThenResourceMetadata) {
    auto const& row = GetParam();
    std::optional<std::string_view> challenged;
    if (row.challenged)
        challenged = *row.challenged;
    EXPECT_EQ(select_scopes(challenged, row.resource_scopes), row.selected);
}

using SE = select_case;

INSTANTIATE_TEST_SUITE_P(
    Scopes, ScopesSelect,
    ::testing::Values(
        SE{"ChallengeWinsOverResource", "files:read", scope_list{"a", "b"}, scope_list{"files:read"}},
        SE{"ChallengeAlone", "a b", std::nullopt, scope_list{"a", "b"}},
        SE{"ChallengeDuplicatesDropped", "a  a b", std::nullopt, scope_list{"a", "b"}},
        SE{"ResourceScopesWithoutChallenge", std::nullopt, scope_list{"a", "b"}, scope_list{"a", "b"}},
        SE{"ResourceDuplicatesDropped", std::nullopt, scope_list{"a", "b", "a"}, scope_list{"a", "b"}},
        SE{"EmptyResourceList", std::nullopt, scope_list{}, scope_list{}},
        SE{"NeitherMeansNoScopeParameter", std::nullopt, std::nullopt, std::nullopt}),
    [](auto const& row) { return row.param.name; });

// ---------------------------------------------------------------------------------------------------------------
// The spec's step-up: what is held, then what the challenge adds.

struct step_up_case {
    std::string name;
    scope_list held;
    std::string challenged;
    scope_list wanted;

    friend void PrintTo(step_up_case const& row, std::ostream* os) { *os << row.name; }
};

class ScopesStepUp : public ::testing::TestWithParam<step_up_case> {};

TEST_P(ScopesStepUp, IsTheUnionHeldFirst) {
    auto const& row = GetParam();
    auto const wanted = step_up_scopes(row.held, row.challenged);
    EXPECT_EQ(wanted, row.wanted);
    EXPECT_TRUE(covers(wanted, row.held));
    EXPECT_TRUE(covers(wanted, split_scopes(row.challenged)));
}

using STEP = step_up_case;

INSTANTIATE_TEST_SUITE_P(Scopes, ScopesStepUp,
                         ::testing::Values(STEP{"AddsNewScopes", {"a"}, "a b", {"a", "b"}},
                                           STEP{"UnionOrder", {"a", "b"}, "c a d", {"a", "b", "c", "d"}},
                                           STEP{"NothingHeld", {}, "x y", {"x", "y"}},
                                           STEP{"NothingNew", {"a", "b"}, "b", {"a", "b"}},
                                           STEP{"EmptyChallenge", {"a"}, "", {"a"}},
                                           STEP{"HeldDuplicatesDropped", {"a", "a"}, "b b", {"a", "b"}}),
                         [](auto const& row) { return row.param.name; });

TEST(Scopes, CoversNeedsEveryWantedScope) {
    scope_list const held{"a", "b", "c"};
    EXPECT_TRUE(covers(held, scope_list{}));
    EXPECT_TRUE(covers(held, scope_list{"a"}));
    EXPECT_TRUE(covers(held, scope_list{"c", "a"}));
    EXPECT_FALSE(covers(held, scope_list{"a", "d"}));
    EXPECT_FALSE(covers(held, scope_list{"A"}));
    EXPECT_FALSE(covers(scope_list{}, scope_list{"a"}));
    EXPECT_TRUE(covers(scope_list{}, scope_list{}));
}

} // namespace
