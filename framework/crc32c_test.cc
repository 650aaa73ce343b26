#include "framework/crc32c.h"

#include <random>
#include <string>

#include "gtest/gtest.h"

namespace sluice {
namespace {

// Check values from RFC 3720, appendix B.4, and the common "123456789" check value.
TEST(Crc32cTest, KnownVectors) {
  std::string zeros(32, '\0'), ones(32, '\xff'), up(32, '\0'), down(32, '\0');
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<char>(i);
    down[i] = static_cast<char>(31 - i);
  }
  for (auto f : {&Crc32cExtend, &Crc32cExtendPortable}) {
    EXPECT_EQ(f(0, zeros), 0x8a9136aau);
    EXPECT_EQ(f(0, ones), 0x62a8ab43u);
    EXPECT_EQ(f(0, up), 0x46dd794eu);
    EXPECT_EQ(f(0, down), 0x113fdb5cu);
    EXPECT_EQ(f(0, "123456789"), 0xe3069283u);
    EXPECT_EQ(f(0, ""), 0u);
  }
}

TEST(Crc32cTest, ExtendEqualsWholeAndPathsAgree) {
  std::mt19937 rng(7);
  for (int n : {1, 3, 7, 8, 9, 63, 64, 65, 1000}) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    const uint32_t whole = Crc32c(s);
    EXPECT_EQ(whole, Crc32cExtendPortable(0, s)) << n;
    for (int cut = 0; cut <= n; cut += 1 + n / 5) {
      EXPECT_EQ(Crc32cExtend(Crc32c(s.substr(0, cut)), s.substr(cut)), whole) << n << " " << cut;
    }
  }
}

TEST(Crc32cTest, MaskRoundTripsAndChangesTheValue) {
  for (uint32_t crc : {0u, 1u, 0xe3069283u, 0xffffffffu}) {
    EXPECT_EQ(UnmaskCrc32c(MaskCrc32c(crc)), crc);
    EXPECT_NE(MaskCrc32c(crc), crc);
  }
}

}  // namespace
}  // namespace sluice
