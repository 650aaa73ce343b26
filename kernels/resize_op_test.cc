// Resize's planar path (float tensors resized in their last two dims) against its general
// path (which doubles take): the same values for every mode, coordinate transformation and
// nearest mode, upsampling and downsampling, with leading dims kept.
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "kernels/kernel_test_util.h"

namespace sluice {
namespace {

struct ResizeCase {
  std::string mode, transform, nearest_mode = "round_prefer_floor";
  std::vector<int64_t> in;
  std::vector<float> scales;
  int64_t exclude_outside = 0;
};

template <typename T>
absl::StatusOr<Tensor> RunResize(const ResizeCase& c, const std::vector<double>& values) {
  KernelTester t("Onnx>Resize");
  t.Attr("mode", c.mode).Attr("coordinate_transformation_mode", c.transform).Attr("nearest_mode", c.nearest_mode);
  t.Attr("exclude_outside", c.exclude_outside);
  Tensor x(DataTypeToEnum<T>::value, TensorShape(DimVector(c.in.begin(), c.in.end())));
  for (int64_t i = 0; i < x.NumElements(); ++i) x.flat<T>()[i] = static_cast<T>(values[i]);
  Tensor scales(DT_FLOAT, TensorShape({static_cast<int64_t>(c.scales.size())}));
  for (size_t i = 0; i < c.scales.size(); ++i) scales.flat<float>()[i] = c.scales[i];
  t.Input(x).Input(scales).ArgSizes({1, 0, 1, 0});
  SL_RETURN_IF_ERROR(t.Run());
  return t.output(0);
}

TEST(ResizeTest, PlanarPathMatchesTheGeneralOne) {
  std::vector<ResizeCase> cases;
  for (const char* transform : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}) {
    for (const char* mode : {"nearest", "linear", "cubic"}) {
      cases.push_back({mode, transform, "round_prefer_floor", {2, 3, 5, 7}, {1, 1, 2.0f, 1.5f}});
      cases.push_back({mode, transform, "round_prefer_floor", {1, 2, 9, 8}, {1, 1, 0.5f, 0.75f}});
      cases.push_back({mode, transform, "round_prefer_floor", {3, 11}, {1, 2.5f}});  // A signal.
    }
  }
  for (const char* nearest : {"round_prefer_ceil", "floor", "ceil"}) {
    cases.push_back({"nearest", "asymmetric", nearest, {1, 2, 4, 6}, {1, 1, 3.0f, 0.5f}});
  }
  cases.push_back({"cubic", "half_pixel", "round_prefer_floor", {1, 1, 6, 6}, {1, 1, 1.7f, 0.6f}, 1});
  cases.push_back({"linear", "half_pixel", "round_prefer_floor", {1, 2, 3, 3, 4}, {1, 1, 1, 2, 2}});  // 3-D, depth kept.
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> value(-4, 4);
  for (const ResizeCase& c : cases) {
    SCOPED_TRACE(c.mode + " " + c.transform + " " + c.nearest_mode + " " + ::testing::PrintToString(c.in));
    int64_t n = 1;
    for (int64_t d : c.in) n *= d;
    std::vector<double> values(n);
    for (double& v : values) v = static_cast<float>(value(rng));
    auto f = RunResize<float>(c, values);
    auto d = RunResize<double>(c, values);
    ASSERT_OK(f);
    ASSERT_OK(d);
    ASSERT_EQ(f->shape(), d->shape());
    for (int64_t i = 0; i < d->NumElements(); ++i) {
      ASSERT_NEAR(f->flat<float>()[i], d->flat<double>()[i], 1e-5) << "at " << i;
    }
  }
}

// An infinite input stays infinite where the output lands on it exactly, and does not turn
// neighbouring outputs (whose weight for it is zero) into NaN.
TEST(ResizeTest, InfinityIsNotMultipliedByZeroWeights) {
  const double inf = std::numeric_limits<double>::infinity();
  ResizeCase c{"linear", "align_corners", "round_prefer_floor", {1, 1, 2, 2}, {1, 1, 2, 2}};
  // align_corners, 2 -> 4: outputs at 0, 1/3, 2/3, 1 of the input's span.
  auto f = RunResize<float>(c, {inf, 1, 1, 1});
  ASSERT_OK(f);
  EXPECT_EQ(f->flat<float>()[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(f->flat<float>()[15], 1.0f);  // The far corner reads only the finite input.
  for (int64_t i = 0; i < f->NumElements(); ++i) EXPECT_FALSE(std::isnan(f->flat<float>()[i])) << "at " << i;
}

}  // namespace
}  // namespace sluice
