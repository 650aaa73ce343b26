// LayerNormalization's float path (rows over the pool, partial sums) against its general
// path, which doubles take: the same values and statistics, with and without a bias, over
// several axes and row lengths (remainders of the eight-way sums included).
#include <cmath>
#include <random>

#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

template <typename T>
absl::Status RunLayerNorm(const std::vector<int64_t>& dims, int64_t axis, bool with_bias, uint32_t seed,
                          std::vector<Tensor>* out) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-3, 5);
  KernelTester t("LayerNormalization");
  t.Attr("axis", axis).Attr("epsilon", 1e-5f);
  Tensor x(DataTypeToEnum<T>::value, TensorShape(DimVector(dims.begin(), dims.end())));
  for (T& v : x.flat<T>()) v = static_cast<T>(static_cast<float>(value(rng)));
  DimVector norm(dims.begin() + (axis < 0 ? axis + dims.size() : axis), dims.end());
  Tensor scale(DataTypeToEnum<T>::value, TensorShape(norm)), bias(DataTypeToEnum<T>::value, TensorShape(norm));
  for (T& v : scale.flat<T>()) v = static_cast<T>(static_cast<float>(value(rng)));
  for (T& v : bias.flat<T>()) v = static_cast<T>(static_cast<float>(value(rng)));
  t.Input(x).Input(scale);
  if (with_bias) {
    t.Input(bias);
  } else {
    t.ArgSizes({1, 1, 0});
  }
  SL_RETURN_IF_ERROR(t.Run());
  out->clear();
  for (int i = 0; i < 3; ++i) out->push_back(t.output(i));
  return absl::OkStatus();
}

TEST(LayerNormTest, FloatPathMatchesTheGeneralOne) {
  struct Case {
    std::vector<int64_t> dims;
    int64_t axis;
  };
  for (const Case& c : {Case{{4, 384}, -1}, Case{{2, 7, 13}, -1}, Case{{3, 5, 6}, 1}, Case{{1, 197, 768}, 2},
                        Case{{6, 3}, 0}}) {
    for (bool with_bias : {true, false}) {
      SCOPED_TRACE(::testing::PrintToString(c.dims) + " axis " + std::to_string(c.axis) + (with_bias ? " bias" : ""));
      std::vector<Tensor> f, d;
      ASSERT_OK(RunLayerNorm<float>(c.dims, c.axis, with_bias, 9, &f));
      ASSERT_OK(RunLayerNorm<double>(c.dims, c.axis, with_bias, 9, &d));
      for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(f[i].NumElements(), d[i].NumElements());
        for (int64_t j = 0; j < f[i].NumElements(); ++j) {
          const double want = i == 0 ? d[i].flat<double>()[j] : d[i].flat<float>()[j];
          ASSERT_NEAR(f[i].flat<float>()[j], want, 2e-5 * (1 + std::fabs(want))) << "output " << i << " at " << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace sluice
