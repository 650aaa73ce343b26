// GridSample (ONNX 16): samples 2-D input at normalized grid locations, as PyTorch's
// grid_sample does (bilinear, nearest or bicubic; zeros, border or reflection padding).
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"

namespace sluice {
namespace {

enum class SampleMode { kBilinear, kNearest, kBicubic };
enum class PaddingMode { kZeros, kBorder, kReflection };

// Mirrors `x` into [low, high] (both given doubled, to allow half-pixel bounds).
double Reflect(double x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0.0;
  const double low = twice_low / 2, span = (twice_high - twice_low) / 2;
  x = std::fabs(x - low);
  const double extra = std::fmod(x, span);
  const bool even_flips = std::fmod(std::floor(x / span), 2.0) == 0.0;
  return even_flips ? low + extra : low + span - extra;
}

// Cubic convolution weights for the four taps around a point at fraction t (A = -0.75).
void CubicWeights(double t, double w[4]) {
  constexpr double A = -0.75;
  auto near = [](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };      // |x| <= 1
  auto far = [](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };  // 1 < |x| < 2
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

template <typename T>
class GridSampleOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    std::string mode, padding;
    int64_t align_corners;
    SL_RETURN_IF_ERROR(ctx->GetAttr("mode", &mode));
    SL_RETURN_IF_ERROR(ctx->GetAttr("padding_mode", &padding));
    SL_RETURN_IF_ERROR(ctx->GetAttr("align_corners", &align_corners));
    mode_ = mode == "nearest" ? SampleMode::kNearest
          : mode == "bicubic" ? SampleMode::kBicubic : SampleMode::kBilinear;
    padding_ = padding == "border" ? PaddingMode::kBorder
             : padding == "reflection" ? PaddingMode::kReflection : PaddingMode::kZeros;
    align_corners_ = align_corners != 0;
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& grid = ctx->input(1);
    if (x.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("GridSample: x must be N x C x H x W, got ", x.shape().DebugString()));
    }
    if (grid.dims() != 4 || grid.dim_size(0) != x.dim_size(0) || grid.dim_size(3) != 2) {
      return absl::InvalidArgumentError(absl::StrCat("GridSample: grid must be [", x.dim_size(0),
                                                     ", H_out, W_out, 2], got ", grid.shape().DebugString()));
    }
    const int64_t n_size = x.dim_size(0), channels = x.dim_size(1);
    const int64_t height = x.dim_size(2), width = x.dim_size(3);
    const int64_t out_h = grid.dim_size(1), out_w = grid.dim_size(2);
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({n_size, channels, out_h, out_w}), &y));
    std::vector<double> g(grid.NumElements());
    VisitDataType(grid.dtype(), [&](auto tag) {
      using G = typename decltype(tag)::type;
      if constexpr (std::is_same_v<G, float> || std::is_same_v<G, double> || std::is_same_v<G, half>) {
        const G* p = grid.data<G>();
        for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<double>(p[i]);
      }
    });
    const T* in = x.data<T>();
    T* out = y->data<T>();
    const int64_t plane = height * width, out_plane = out_h * out_w;
    for (int64_t n = 0; n < n_size; ++n) {
      for (int64_t i = 0; i < out_plane; ++i) {
        const double gx = g[(n * out_plane + i) * 2], gy = g[(n * out_plane + i) * 2 + 1];
        const double fx = Unnormalize(gx, width), fy = Unnormalize(gy, height);
        for (int64_t c = 0; c < channels; ++c) {
          const T* p = in + (n * channels + c) * plane;
          out[(n * channels + c) * out_plane + i] = static_cast<T>(Sample(p, fx, fy, height, width));
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  // Grid value in [-1, 1] to a pixel coordinate.
  double Unnormalize(double v, int64_t size) const {
    return align_corners_ ? (v + 1) / 2 * (size - 1) : ((v + 1) * size - 1) / 2;
  }

  // Applies border or reflection padding to a coordinate; zeros padding leaves it.
  double Pad(double v, int64_t size) const {
    if (padding_ == PaddingMode::kZeros) return v;
    if (padding_ == PaddingMode::kReflection) {
      v = align_corners_ ? Reflect(v, 0, 2.0 * (size - 1)) : Reflect(v, -1, 2.0 * size - 1);
    }
    return std::clamp(v, 0.0, static_cast<double>(size - 1));
  }

  // The pixel at integral (x, y), or 0 outside the plane (checked before the cast, so huge
  // and NaN coordinates read 0 too).
  static double At(const T* p, double x, double y, int64_t height, int64_t width) {
    if (!(x >= 0 && x < width && y >= 0 && y < height)) return 0.0;
    return static_cast<double>(p[static_cast<int64_t>(y) * width + static_cast<int64_t>(x)]);
  }

  double Sample(const T* p, double fx, double fy, int64_t height, int64_t width) const {
    if (mode_ == SampleMode::kBicubic) {
      // Taps come from the unpadded point; padding applies to each tap.
      const double x0 = std::floor(fx), y0 = std::floor(fy);
      double wx[4], wy[4];
      CubicWeights(fx - x0, wx);
      CubicWeights(fy - y0, wy);
      double acc = 0.0;
      for (int j = 0; j < 4; ++j) {
        for (int i = 0; i < 4; ++i) {
          const double tx = Pad(x0 - 1 + i, width), ty = Pad(y0 - 1 + j, height);
          acc += wy[j] * wx[i] * At(p, std::trunc(tx), std::trunc(ty), height, width);
        }
      }
      return acc;
    }
    fx = Pad(fx, width);
    fy = Pad(fy, height);
    if (mode_ == SampleMode::kNearest) {
      // Halves round to even, as std::nearbyint does in the default rounding mode.
      return At(p, std::nearbyint(fx), std::nearbyint(fy), height, width);
    }
    const double x0 = std::floor(fx), y0 = std::floor(fy);
    const double lx = fx - x0, ly = fy - y0;
    return (1 - ly) * ((1 - lx) * At(p, x0, y0, height, width) + lx * At(p, x0 + 1, y0, height, width)) +
           ly * ((1 - lx) * At(p, x0, y0 + 1, height, width) + lx * At(p, x0 + 1, y0 + 1, height, width));
  }

  SampleMode mode_ = SampleMode::kBilinear;
  PaddingMode padding_ = PaddingMode::kZeros;
  bool align_corners_ = false;
};

REGISTER_KERNEL_BUILDER(Name("Onnx>GridSample").Device(DEVICE_CPU).TypeConstraint<float>("T1"), GridSampleOp<float>);
REGISTER_KERNEL_BUILDER(Name("Onnx>GridSample").Device(DEVICE_CPU).TypeConstraint<double>("T1"), GridSampleOp<double>);
REGISTER_KERNEL_BUILDER(Name("Onnx>GridSample").Device(DEVICE_CPU).TypeConstraint<half>("T1"), GridSampleOp<half>);

}  // namespace
}  // namespace sluice
