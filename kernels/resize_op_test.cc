// Resize's planar path (float tensors resized in their last two dims) against its general
// path (which doubles take): the same values for every mode, coordinate transformation and
// nearest mode, upsampling and downsampling, with leading dims kept.
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

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

// Resize-18's axes: scales per named dim, in the order named (dim 3 doubled, dim 2 kept).
TEST(ResizeTest, AxesNameTheScaledDims) {
  KernelTester t("Onnx>Resize");
  t.Attr("mode", std::string("nearest")).Attr("coordinate_transformation_mode", std::string("asymmetric"));
  t.Attr("nearest_mode", std::string("floor")).Attr("axes", std::vector<int64_t>{3, -2});
  t.Input<float>({1, 1, 2, 2}, {1, 2, 3, 4}).Input<float>({2}, {2, 1}).ArgSizes({1, 0, 1, 0});
  ASSERT_OK(t.Run());
  t.ExpectOutput<float>(0, {1, 1, 2, 4}, {1, 1, 2, 2, 3, 3, 4, 4});
  for (auto [axes, message] : std::vector<std::pair<std::vector<int64_t>, std::string>>{
           {{4, 2}, "out of range"}, {{2, -2}, "twice"}}) {
    KernelTester bad("Onnx>Resize");
    bad.Attr("axes", axes).Input<float>({1, 1, 2, 2}, {1, 2, 3, 4}).Input<float>({2}, {2, 1}).ArgSizes({1, 0, 1, 0});
    ExpectInvalid(bad, message);
  }
}

// keep_aspect_ratio_policy: sizes [3, 3] of a 2 x 4 input ask for scales 1.5 and 0.75;
// not_larger takes 0.75 for both (2 x 4 -> round(1.5) x 3), not_smaller 1.5 (3 x 6).
TEST(ResizeTest, KeepAspectRatioPolicy) {
  std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7};
  {
    // half_pixel at scale 0.75: rows (o + 0.5) / 0.75 - 0.5 = 1/6, 3/2 -> 0, 1 (ties to
    // the floor); columns 1/6, 3/2, 17/6 -> 0, 1, 3.
    KernelTester t("Onnx>Resize");
    t.Attr("keep_aspect_ratio_policy", std::string("not_larger")).Attr("axes", std::vector<int64_t>{2, 3});
    t.Input<float>({1, 1, 2, 4}, x).Input<int64_t>({2}, {3, 3}).ArgSizes({1, 0, 0, 1});
    ASSERT_OK(t.Run());
    t.ExpectOutput<float>(0, {1, 1, 2, 3}, {0, 1, 3, 4, 5, 7});
  }
  {
    KernelTester t("Onnx>Resize");
    t.Attr("keep_aspect_ratio_policy", std::string("not_smaller"));
    t.Input<float>({1, 2, 4}, x).Input<int64_t>({3}, {1, 3, 3}).ArgSizes({1, 0, 0, 1});
    ASSERT_OK(t.Run());
    EXPECT_EQ(t.output(0).shape(), TensorShape({2, 3, 6}));  // Dim 0 scales by 1.5 too.
  }
}

// Antialiased linear downsampling by 2 of [0, 1, 2, 3]: the triangle filter stretched to
// radius 2. Output 0 sits at 0.5: taps -1, 0, 1, 2 at distances 1.5, 0.5, 0.5, 1.5 weigh
// 0.25, 0.75, 0.75, 0.25 (normalized: 1/8, 3/8, 3/8, 1/8; tap -1 reads the edge, 0):
// 3/8 + 2/8 = 0.625. Output 1 sits at 2.5: taps 1..4 (4 reads 3): 1/8 + 6/8 + 9/8 + 3/8.
// Without antialias: 0.5 and 2.5. Both paths (float planar, double general) agree.
TEST(ResizeTest, AntialiasWidensTheLinearFilter) {
  for (int64_t antialias : {0, 1}) {
    KernelTester f("Onnx>Resize"), d("Onnx>Resize");
    for (KernelTester* t : {&f, &d}) t->Attr("mode", std::string("linear")).Attr("antialias", antialias);
    f.Input<float>({1, 4}, {0, 1, 2, 3}).Input<float>({2}, {1, 0.5f}).ArgSizes({1, 0, 1, 0});
    d.Input<double>({1, 4}, {0, 1, 2, 3}).Input<float>({2}, {1, 0.5f}).ArgSizes({1, 0, 1, 0});
    ASSERT_OK(f.Run());
    ASSERT_OK(d.Run());
    if (antialias) {
      f.ExpectOutput<float>(0, {1, 2}, {0.625f, 2.375f});
      d.ExpectOutput<double>(0, {1, 2}, {0.625, 2.375});
    } else {
      f.ExpectOutput<float>(0, {1, 2}, {0.5f, 2.5f});
    }
  }
}

// Antialiased cubic at scale 0.5 of a constant stays constant (weights sum to 1). Of a ramp:
// output 1 sits at 2.5 and takes taps -1..6 at distances 1.75, 1.25, 0.75, 0.25 (times 0.5)
// either side, cubic weights (A = -0.75) -0.03515625, -0.10546875, 0.26171875, 0.87890625,
// summing to 2 over the eight. The ramp would give 2.5, but tap -1 reads the edge (0, not
// -1): 2.5 - 0.03515625 / 2. Output 2 (at 4.5) likewise reads 7 for tap 8: 4.5 + 0.03515625 / 2.
TEST(ResizeTest, AntialiasCubicKeepsConstantsAndWidensTheFilter) {
  KernelTester t("Onnx>Resize");
  t.Attr("mode", std::string("cubic")).Attr("antialias", int64_t{1});
  t.Input<double>({8}, {0, 1, 2, 3, 4, 5, 6, 7}).Input<float>({1}, {0.5f}).ArgSizes({1, 0, 1, 0});
  ASSERT_OK(t.Run());
  EXPECT_NEAR(t.output(0).flat<double>()[1], 2.5 - 0.017578125, 1e-12);
  EXPECT_NEAR(t.output(0).flat<double>()[2], 4.5 + 0.017578125, 1e-12);
  KernelTester c("Onnx>Resize");
  c.Attr("mode", std::string("cubic")).Attr("antialias", int64_t{1});
  c.Input<double>({8}, std::vector<double>(8, 3.0)).Input<float>({1}, {0.5f}).ArgSizes({1, 0, 1, 0});
  ASSERT_OK(c.Run());
  c.ExpectOutput<double>(0, {4}, {3, 3, 3, 3});
}

// half_pixel_symmetric, 5 -> floor(2.5) = 2 at scale 0.5: the output canvas (2 of the 2.5
// scaled points) is centred on the input's centre, offset 2.5 * (1 - 2 / 2.5) = 0.5, so the
// outputs sit at 1 and 3 (half_pixel puts them at 0.5 and 2.5).
TEST(ResizeTest, HalfPixelSymmetric) {
  for (const char* mode : {"half_pixel_symmetric", "half_pixel"}) {
    KernelTester t("Onnx>Resize");
    t.Attr("mode", std::string("linear")).Attr("coordinate_transformation_mode", std::string(mode));
    t.Input<float>({1, 5}, {0, 10, 20, 30, 40}).Input<float>({2}, {1, 0.5f}).ArgSizes({1, 0, 1, 0});
    ASSERT_OK(t.Run());
    if (std::string(mode) == "half_pixel") {
      t.ExpectOutput<float>(0, {1, 2}, {5, 25});
    } else {
      t.ExpectOutput<float>(0, {1, 2}, {10, 30});
    }
  }
}

}  // namespace
}  // namespace sluice
