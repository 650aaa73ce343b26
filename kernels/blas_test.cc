// GemmRowMajor's row-vector path (one row of A times a transposed B of 1 MB or more, 512 KB on a
// team of threads: DotRows)
// against the definition in double: alpha and beta, beta 0 ignoring whatever C held, lengths
// that leave a tail of columns and rows, strided B, and 1 or 2 threads.
#include "kernels/blas.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernels/tuning_cache.h"

namespace sluice {
namespace {

TEST(BlasTest, RowVectorTimesLargeTransposedMatrix) {
  struct Case { int64_t n, k, ldb; float alpha, beta; };
  // The last two take the path only on a team (kRowVectorGemvMinWeightsOnTeam): at 1 thread they
  // are oneDNN's, whose values the same check holds.
  for (const Case& t : {Case{1000, 1280, 1280, 1.0f, 0.0f}, Case{1003, 1037, 1040, 0.5f, 2.0f},
                        Case{517, 2049, 2049, -1.0f, 1.0f}, Case{1000, 400, 400, 1.0f, 0.0f},
                        Case{128, 1536, 1536, 1.0f, 1.0f}, Case{131, 1001, 1003, 2.0f, 0.0f}}) {
    SCOPED_TRACE(::testing::Message() << t.n << "x" << t.k << " alpha " << t.alpha << " beta " << t.beta);
    ASSERT_GE(t.n * t.k, kRowVectorGemvMinWeightsOnTeam);  // The path under test.
    std::mt19937 rng(17);
    std::uniform_real_distribution<float> value(-1, 1);
    std::vector<float> a(t.k), b(t.n * t.ldb), c0(t.n);
    for (float& v : a) v = value(rng);
    for (float& v : b) v = value(rng);
    for (float& v : c0) v = value(rng);
    for (int threads : {1, 2}) {
      std::vector<float> c = c0;
      if (t.beta == 0.0f) c.assign(t.n, std::numeric_limits<float>::quiet_NaN());  // Must not be read.
      GemmRowMajor<float>(false, true, 1, t.n, t.k, t.alpha, a.data(), t.k, b.data(), t.ldb, t.beta, c.data(), t.n,
                          threads);
      for (int64_t j = 0; j < t.n; ++j) {
        double dot = 0;
        for (int64_t i = 0; i < t.k; ++i) dot += double{a[i]} * b[j * t.ldb + i];
        const double want = t.alpha * dot + (t.beta == 0.0f ? 0.0 : t.beta * c0[j]);
        ASSERT_NEAR(c[j], want, 1e-3) << "column " << j << " threads " << threads;
      }
    }
  }
}

// OpenBLAS on the OpenMP team (columns of C in blocks among the threads) gives the
// definition's values: either operand transposed, beta 0 (C not read) and 1, a column count
// that leaves a partial block, 1 to 3 threads.
TEST(BlasTest, OpenBlasOnTheTeamIsTheDefinition) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-1, 1);
  const int64_t m = 13, n = 70, k = 37;
  std::vector<float> a(m * k), b(k * n), c0(m * n);
  for (auto* v : {&a, &b, &c0}) {
    for (float& f : *v) f = value(rng);
  }
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (float beta : {0.0f, 1.0f}) {
        for (int threads : {1, 2, 3}) {
          SCOPED_TRACE(::testing::Message() << "ta " << ta << " tb " << tb << " beta " << beta << " threads " << threads);
          std::vector<float> c = c0;
          if (beta == 0.0f) c.assign(m * n, std::numeric_limits<float>::quiet_NaN());  // Must not be read.
          // A is m x k (k x m stored when transposed), B k x n (n x k when transposed).
          OpenBlasSgemmOnTeam(ta, tb, m, n, k, 0.5f, a.data(), ta ? m : k, b.data(), tb ? k : n, beta, c.data(), n,
                              threads);
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              double dot = 0;
              for (int64_t p = 0; p < k; ++p) {
                dot += double{ta ? a[p * m + i] : a[i * k + p]} * double{tb ? b[j * k + p] : b[p * n + j]};
              }
              const double want = 0.5 * dot + (beta == 0.0f ? 0.0 : double{c0[i * n + j]});
              ASSERT_NEAR(c[i * n + j], want, 1e-4) << i << "," << j;
            }
          }
        }
      }
    }
  }
}

// A large float product runs on oneDNN or OpenBLAS as measured once on this machine: the
// choice and both times go to the tuning file, a later process (a second cache on the file)
// takes it without measuring, measuring leaves the caller's C as it was, and the product is
// the definition's whichever library runs it. Small products and spent budgets stay on oneDNN.
TEST(BlasTest, LibraryIsMeasuredOnceIntoACopyOfC) {
  const std::string path = ::testing::TempDir() + "/sgemm_library.tsv";
  std::remove(path.c_str());
  const int64_t m = 64, n = 256, k = 512;
  ASSERT_GE(double(m * n * k), kSgemmLibraryChoiceMinMultiplyAdds);
  std::vector<float> a(m * k, 0.5f), b(k * n, 0.25f), c(m * n, 3.0f);
  bool first = false;
  for (int process = 0; process < 2; ++process) {
    SCOPED_TRACE(::testing::Message() << "process " << process);
    TuningCache cache(path, "this machine", 1e9, true);
    const bool openblas = SgemmOnOpenBlasMeasured(cache, false, false, false, m, n, k, 1.0f, a.data(), k, b.data(), n,
                                                  1.0f, c.data(), n, 1);
    EXPECT_EQ(cache.measured(), process == 0 ? 1 : 0);
    for (float v : c) ASSERT_EQ(v, 3.0f) << "the caller's C was written";
    if (process == 0) first = openblas;
    EXPECT_EQ(openblas, first);
  }
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(absl::StrContains(text, "this machine\tsgemm-library 64,256,512,0,0,512,256,256,1,")) << text;
  EXPECT_TRUE(absl::StrContains(text, first ? "\topenblas\t" : "\tonednn\t")) << text;
  EXPECT_TRUE(absl::StrContains(text, "oneDNN ")) << text;
  EXPECT_TRUE(absl::StrContains(text, " ms, OpenBLAS ")) << text;
  GemmRowMajor<float>(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 1.0f, c.data(), n, 1);
  for (float v : c) ASSERT_FLOAT_EQ(v, 3.0f + 512 * 0.125f);

  TuningCache fresh("", "this machine", 1e9, true), spent("", "this machine", 0, true);
  EXPECT_FALSE(SgemmOnOpenBlasMeasured(fresh, false, false, false, 8, 8, 8, 1, a.data(), 8, b.data(), 8, 0, c.data(), 8,
                                       1));
  // 1024^3 multiply-adds: past the measured range (nothing runs, so small buffers do).
  ASSERT_GT(1024.0 * 1024 * 1024, kSgemmLibraryChoiceMaxMultiplyAdds);
  EXPECT_FALSE(SgemmOnOpenBlasMeasured(fresh, false, false, false, 1024, 1024, 1024, 1, a.data(), 1024, b.data(), 1024,
                                       0, c.data(), 1024, 1));
  EXPECT_EQ(fresh.measured(), 0);
  EXPECT_FALSE(SgemmOnOpenBlasMeasured(spent, false, false, false, m, n, k, 1, a.data(), k, b.data(), n, 0, c.data(),
                                       n, 1));
  EXPECT_EQ(spent.measured(), 0);
}

}  // namespace
}  // namespace sluice
