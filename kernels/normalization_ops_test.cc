// Float fast paths against the general paths that doubles take: LayerNormalization (rows over
// the pool, partial sums: values and statistics, with and without a bias, over several axes
// and row lengths) and Softmax over contiguous rows (FastExp).
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
  KernelTester t("Onnx>LayerNormalization");
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

TEST(SoftmaxTest, FloatRowsMatchTheGeneralPath) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> value(-30, 30);
  for (int64_t n : {1, 7, 197, 1000}) {
    SCOPED_TRACE(n);
    Tensor xf(DT_FLOAT, TensorShape({3, n})), xd(DT_DOUBLE, TensorShape({3, n}));
    for (int64_t i = 0; i < xf.NumElements(); ++i) xd.flat<double>()[i] = xf.flat<float>()[i] = static_cast<float>(value(rng));
    KernelTester f("Onnx>Softmax"), d("Onnx>Softmax");
    f.Attr("axis", int64_t{-1}).Input(xf);
    d.Attr("axis", int64_t{-1}).Input(xd);
    ASSERT_OK(f.Run());
    ASSERT_OK(d.Run());
    for (int64_t i = 0; i < xf.NumElements(); ++i) {
      const double want = d.output(0).flat<double>()[i];
      ASSERT_NEAR(f.output(0).flat<float>()[i], want, 1e-6 + 4e-6 * want) << "at " << i;
    }
  }
}

}  // namespace
}  // namespace sluice
