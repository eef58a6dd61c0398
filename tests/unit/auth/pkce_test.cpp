// PKCE with S256 and the random values of an authorization request: the challenge is the unpadded base64url
// of the verifier's SHA-256; verifiers are 43 characters of the unreserved alphabet, fresh each time.
//
// Requirement tags: RFC 7636 §4.1 (verifier: 43-128 unreserved characters), §4.2 (S256), Appendix B (the
// worked example used below) https://www.rfc-editor.org/rfc/rfc7636; RFC 4648 §5 (base64url) and §3.2
// (padding omitted where the length is known) https://www.rfc-editor.org/rfc/rfc4648#section-5; MCP
// 2025-11-25 basic/authorization "Authorization Code Protection" (S256 required).
#include <duet/auth/pkce.hpp>

#include <gtest/gtest.h>

#include <ostream>
#include <set>
#include <string>

namespace {

using namespace duet::auth;

bool is_base64url_unpadded(std::string const& text) {
    for (unsigned char c : text)
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
              c == '_'))
            return false;
    return true;
}

// The expected challenges were computed apart from Duet, with Python's standard library:
//   base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
// The second verifier is RFC 7636 Appendix B's example, whose challenge the RFC also prints.
TEST(Pkce, S256ChallengeOfKnownVerifiers) {
    EXPECT_EQ(s256_challenge("dBjftJeZ4CVP-mJ92K9GfbOTCkmbhlr_pUV7JEzJ0Z8"),
              "QhV9T2DE3xFOBkzUyB7fkvGBhcxgLzmvhwet64Kkyvo");
    EXPECT_EQ(s256_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
              "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    EXPECT_EQ(s256_challenge(std::string(43, 'a')), "ZtNPunH49FD35FWYhT5Tv8I7vRKQJ8uxMaL0_9eHjNA");
}

TEST(Pkce, MakePkceGivesFreshVerifiersWithMatchingChallenges) {
    std::set<std::string> verifiers;
    for (int i = 0; i < 8; ++i) {
        auto const p = make_pkce();
        ASSERT_TRUE(p.has_value()) << p.error().message;
        EXPECT_EQ(p->verifier.size(), 43u) << p->verifier;
        EXPECT_TRUE(is_base64url_unpadded(p->verifier)) << p->verifier;
        EXPECT_EQ(p->challenge, s256_challenge(p->verifier));
        EXPECT_EQ(p->challenge.size(), 43u);
        EXPECT_TRUE(is_base64url_unpadded(p->challenge)) << p->challenge;
        verifiers.insert(p->verifier);
    }
    EXPECT_EQ(verifiers.size(), 8u);
}

TEST(Pkce, RandomUrlTokenHasTheLengthOfItsBytes) {
    auto const a = random_url_token(16);
    auto const b = random_url_token(16);
    ASSERT_TRUE(a.has_value());
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(a->size(), 22u); // 16 bytes = 128 bits = 22 characters of 6 bits
    EXPECT_TRUE(is_base64url_unpadded(*a)) << *a;
    EXPECT_NE(*a, *b);
    auto const c = random_url_token();
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->size(), 43u);
}

// ---------------------------------------------------------------------------------------------------------------
// RFC 4648 §5 without padding: '-' and '_' for '+' and '/', no '='.

struct base64url_case {
    std::string name;
    std::string bytes;
    std::string text;

    friend void PrintTo(base64url_case const& row, std::ostream* os) { *os << row.name; }
};

class PkceBase64url : public ::testing::TestWithParam<base64url_case> {};

TEST_P(PkceBase64url, UsesUrlAlphabetWithoutPadding) {
    auto const text = base64url(GetParam().bytes);
    EXPECT_EQ(text, GetParam().text);
    EXPECT_EQ(text.find_first_of("+/="), std::string::npos) << text;
}

using B64 = base64url_case;

INSTANTIATE_TEST_SUITE_P(Pkce, PkceBase64url,
                         ::testing::Values(B64{"Empty", "", ""}, B64{"OneByte", "f", "Zg"},
                                           B64{"TwoBytes", "fo", "Zm8"}, B64{"ThreeBytes", "foo", "Zm9v"},
                                           B64{"SixBytes", "foobar", "Zm9vYmFy"},
                                           B64{"PlusAndSlashReplaced", "\xfb\xff\xfe", "-__-"},
                                           B64{"PlusAndSlashWithPadding", "\xfb\xff", "-_8"}),
                         [](auto const& row) { return row.param.name; });

} // namespace
