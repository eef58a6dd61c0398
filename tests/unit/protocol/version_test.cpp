// Tests for duet/protocol/version.hpp: the one registry of protocol versions and the lists derived from it.
//
// Requirements: ERA-POLICY "Version lists" (one ordered registry, derived lists, latest handshake =
// 2025-11-25, never compare version strings); STYLE §6 rule 3 (an unknown string parses to nothing);
// DIGEST §0 (the five versions) and §2 (-32022 `supported` = `server/discover` `supportedVersions`).
#include <duet/protocol/errors.hpp>
#include <duet/protocol/version.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace duet::protocol;

// ---- the registry -----------------------------------------------------------------------------------------

// ERA-POLICY "Version lists": five versions, oldest first, each in its era.
TEST(Version, RegistryListsEveryVersionOldestFirstWithItsEra) {
    struct expected_row {
        version id;
        std::string_view name;
        era e;
    };
    constexpr expected_row expected[] = {
        {version::v2024_11_05, "2024-11-05", era::legacy}, {version::v2025_03_26, "2025-03-26", era::legacy},
        {version::v2025_06_18, "2025-06-18", era::legacy}, {version::v2025_11_25, "2025-11-25", era::legacy},
        {version::v2026_07_28, "2026-07-28", era::modern},
    };
    ASSERT_EQ(version_registry.size(), std::size(expected));
    for (std::size_t i = 0; i < version_registry.size(); ++i) {
        SCOPED_TRACE(expected[i].name);
        EXPECT_EQ(version_registry[i].id, expected[i].id);
        EXPECT_EQ(version_registry[i].name, expected[i].name);
        EXPECT_EQ(version_registry[i].era, expected[i].e);
        EXPECT_EQ(to_string(expected[i].id), expected[i].name);
        EXPECT_EQ(era_of(expected[i].id), expected[i].e);
        EXPECT_EQ(&info(expected[i].id), &version_registry[i]);
    }
}

// ERA-POLICY "compare versions by their place in this ordered registry": the enum order is the release order.
TEST(Version, ComparesByReleaseOrder) {
    static_assert(version::v2024_11_05 < version::v2025_03_26);
    static_assert(version::v2025_03_26 < version::v2025_06_18);
    static_assert(version::v2025_06_18 < version::v2025_11_25);
    static_assert(version::v2025_11_25 < version::v2026_07_28);
    for (std::size_t i = 1; i < version_registry.size(); ++i)
        EXPECT_LT(version_registry[i - 1].id, version_registry[i].id) << version_registry[i].name;
}

// STYLE §6 rule 3: every registered name parses back to its version.
TEST(Version, ParsesEveryRegisteredName) {
    for (auto const& row : version_registry) {
        auto const parsed = parse_version(row.name);
        ASSERT_TRUE(parsed.has_value()) << row.name;
        EXPECT_EQ(*parsed, row.id);
    }
    static_assert(parse_version("2025-06-18") == version::v2025_06_18);
}

struct unknown_version_row {
    std::string_view name;
    std::string_view text;
};

void PrintTo(unknown_version_row const& row, std::ostream* os) {
    *os << row.name;
}

class UnknownVersionString : public ::testing::TestWithParam<unknown_version_row> {};

// STYLE §6 rule 3: an unknown string is unknown, never "newer" or "close enough".
TEST_P(UnknownVersionString, ParsesToNothing) {
    EXPECT_EQ(parse_version(GetParam().text), std::nullopt);
}

INSTANTIATE_TEST_SUITE_P(
    Version, UnknownVersionString,
    ::testing::Values(
        unknown_version_row{"Empty", ""}, unknown_version_row{"MonthOnly", "2026-08"},
        unknown_version_row{"TrailingSpace", "2025-11-25 "},
        unknown_version_row{"LeadingSpace", " 2026-07-28"}, unknown_version_row{"FutureDate", "2027-01-01"},
        unknown_version_row{"NextDay", "2026-07-29"}, unknown_version_row{"UnpaddedDay", "2025-11-5"},
        unknown_version_row{"OtherSeparator", "2025/11/25"}, unknown_version_row{"Placeholder", "v999"},
        unknown_version_row{"Draft", "DRAFT-2026-v1"},
        unknown_version_row{"EmbeddedNul", std::string_view("2025-11-25\0", 11)},
        unknown_version_row{"Latest", "latest"}),
    [](auto const& p) { return std::string(p.param.name); });

// ---- derived lists ----------------------------------------------------------------------------------------

// ERA-POLICY "Version lists": handshake versions, newest first.
TEST(Version, HandshakeVersionsAreTheFourLegacyVersionsNewestFirst) {
    std::vector<version> const expected{version::v2025_11_25, version::v2025_06_18, version::v2025_03_26,
                                        version::v2024_11_05};
    EXPECT_EQ(std::vector<version>(handshake_versions.begin(), handshake_versions.end()), expected);
    for (auto v : handshake_versions) {
        EXPECT_TRUE(is_handshake_version(v)) << to_string(v);
        EXPECT_FALSE(is_modern_version(v)) << to_string(v);
    }
}

// ERA-POLICY "Version lists": the modern list is 2026-07-28 alone.
TEST(Version, ModernVersionsAre20260728Only) {
    std::vector<version> const expected{version::v2026_07_28};
    EXPECT_EQ(std::vector<version>(modern_versions.begin(), modern_versions.end()), expected);
    EXPECT_TRUE(is_modern_version(version::v2026_07_28));
    EXPECT_FALSE(is_handshake_version(version::v2026_07_28));
}

// ERA-POLICY "latest handshake = 2025-11-25": what initialize counter-offers.
TEST(Version, LatestHandshakeVersionIs20251125) {
    static_assert(latest_handshake_version == version::v2025_11_25);
    static_assert(latest_modern_version == version::v2026_07_28);
    EXPECT_EQ(to_string(latest_handshake_version), "2025-11-25");
}

// ERA-POLICY "derived so they cannot drift": every registered version is in exactly one of the two lists.
TEST(Version, HandshakeAndModernListsPartitionTheRegistry) {
    EXPECT_EQ(handshake_versions.size() + modern_versions.size(), version_registry.size());
    for (auto const& row : version_registry) {
        auto const in = [&](auto const& list) {
            return std::ranges::count(list, row.id);
        };
        EXPECT_EQ(in(handshake_versions) + in(modern_versions), 1) << row.name;
        EXPECT_EQ(in(handshake_versions), row.era == era::legacy ? 1 : 0) << row.name;
    }
}

TEST(Version, EraNamesAreLegacyAndModern) {
    EXPECT_EQ(to_string(era::legacy), "legacy");
    EXPECT_EQ(to_string(era::modern), "modern");
}

TEST(Version, ToJsonKeepsTheGivenOrder) {
    EXPECT_EQ(boost::json::value(to_json(handshake_versions)),
              boost::json::parse(R"(["2025-11-25","2025-06-18","2025-03-26","2024-11-05"])"));
    EXPECT_EQ(boost::json::value(to_json({})), boost::json::parse("[]"));
}

// ERA-POLICY "Consequences": `server/discover` lists supportedVersions = the modern list, identical to
// -32022's `supported` (DIGEST §2 (conf): every `supported` entry must be in `supportedVersions`).
TEST(Version, AdvertisedModernVersionsEqualUnsupportedVersionSupportedList) {
    EXPECT_EQ(boost::json::value(advertised_modern_versions()), boost::json::parse(R"(["2026-07-28"])"));
    auto const error = unsupported_protocol_version("2027-01-01");
    ASSERT_TRUE(error.data.is_object());
    EXPECT_EQ(error.data.as_object().at("supported"), boost::json::value(advertised_modern_versions()));
}

// ---- what a version allows
// ---------------------------------------------------------------------------------

// DIGEST §0: JSON-RPC batches came with 2025-03-26 and went with 2025-06-18; SEP-1699's SSE polling came with
// 2025-11-25. One row per registered version.
TEST(Version, FeaturesFollowTheVersionThatIntroducedThem) {
    struct feature_row {
        version v;
        bool batches;
        bool sse_polling;
    };
    constexpr feature_row rows[] = {
        {version::v2024_11_05, false, false}, {version::v2025_03_26, true, false},
        {version::v2025_06_18, false, false}, {version::v2025_11_25, false, true},
        {version::v2026_07_28, false, true},
    };
    ASSERT_EQ(std::size(rows), version_registry.size());
    for (std::size_t i = 0; i < std::size(rows); ++i) {
        SCOPED_TRACE(to_string(rows[i].v));
        EXPECT_EQ(rows[i].v, version_registry[i].id);
        EXPECT_EQ(batches_allowed(rows[i].v), rows[i].batches);
        EXPECT_EQ(sse_polling(rows[i].v), rows[i].sse_polling);
    }
    static_assert(batches_allowed(version::v2025_03_26) && !sse_polling(version::v2025_06_18));
}

} // namespace
