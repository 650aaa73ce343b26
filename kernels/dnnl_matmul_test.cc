#include "kernels/dnnl_matmul.h"

#include <random>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace {

Tensor Random(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  Tensor t(DT_FLOAT, TensorShape({rows, cols}));
  for (int64_t i = 0; i < rows * cols; ++i) t.flat<float>()[i] = dist(gen);
  return t;
}

// c = a * b^T, b the `n` rows of `owner` from row `first`, against a plain loop.
void ExpectProduct(const DnnlConstMatmul& matmul, int64_t m, int64_t n, int64_t k, const Tensor& owner,
                   int64_t first) {
  SCOPED_TRACE(testing::Message() << "m=" << m << " n=" << n << " k=" << k << " first=" << first);
  const float* b = owner.flat<float>().data() + first * k;
  auto prepared = matmul.Prepare(m, n, k, owner, b, 1);
  ASSERT_NE(prepared, nullptr);
  DnnlConstMatmul::Call call(*prepared);
  for (uint32_t round = 0; round < 2; ++round) {  // One Call, several inputs.
    const Tensor a = Random(m, k, 100 + round);
    std::vector<float> c(m * n, -7.0f);
    ASSERT_TRUE(call.Run(a.flat<float>().data(), c.data()));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (int64_t p = 0; p < k; ++p) want += double(a.flat<float>()[i * k + p]) * b[j * k + p];
        ASSERT_NEAR(c[i * n + j], want, 1e-4) << "at " << i << "," << j;
      }
    }
  }
}

TEST(DnnlConstMatmulTest, Shapes) {
  DnnlConstMatmul matmul;
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {8, 1024, 256}, {3, 17, 5}, {1, 48, 33}}) {
    const Tensor owner = Random(2 * n, k, 1);
    ExpectProduct(matmul, m, n, k, owner, 0);
    ExpectProduct(matmul, m, n, k, owner, n);  // The second half: another prepared product.
  }
}

// New values in a new buffer of the same shape are prepared again, also when the cache
// holds the old ones.
TEST(DnnlConstMatmulTest, NewBuffer) {
  DnnlConstMatmul matmul;
  for (uint32_t seed = 1; seed < 4; ++seed) ExpectProduct(matmul, 4, 12, 6, Random(12, 6, seed), 0);
}

TEST(DnnlConstMatmulTest, EmptyIsNotTaken) {
  DnnlConstMatmul matmul;
  const Tensor owner = Random(2, 2, 1);
  EXPECT_EQ(matmul.Prepare(0, 2, 2, owner, owner.flat<float>().data(), 1), nullptr);
}

}  // namespace
}  // namespace sluice
