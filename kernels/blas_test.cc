// GemmRowMajor's row-vector path (one row of A times a transposed B of 2 MB or more, DotRows)
// against the definition in double: alpha and beta, beta 0 ignoring whatever C held, lengths
// that leave a tail of columns and rows, strided B, and 1 or 2 threads.
#include "kernels/blas.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(BlasTest, RowVectorTimesLargeTransposedMatrix) {
  struct Case { int64_t n, k, ldb; float alpha, beta; };
  for (const Case& t : {Case{1000, 1280, 1280, 1.0f, 0.0f}, Case{1003, 1037, 1040, 0.5f, 2.0f},
                        Case{517, 2049, 2049, -1.0f, 1.0f}}) {
    SCOPED_TRACE(::testing::Message() << t.n << "x" << t.k << " alpha " << t.alpha << " beta " << t.beta);
    ASSERT_GE(t.n * t.k, kRowVectorGemvMinWeights);  // The path under test.
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

}  // namespace
}  // namespace sluice
