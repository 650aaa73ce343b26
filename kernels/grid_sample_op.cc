// GridSample: samples N-D input (2-D only for cubic) at normalized grid locations, as
// PyTorch's grid_sample does (linear, nearest or cubic; zeros, border or reflection padding).
// GridSample-16 named the modes bilinear and bicubic and took 2-D input only.
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
    // GridSample-20 renamed bilinear and bicubic to linear and cubic (they now cover N-D).
    mode_ = mode == "nearest" ? SampleMode::kNearest
          : (mode == "bicubic" || mode == "cubic") ? SampleMode::kBicubic : SampleMode::kBilinear;
    padding_ = padding == "border" ? PaddingMode::kBorder
             : padding == "reflection" ? PaddingMode::kReflection : PaddingMode::kZeros;
    align_corners_ = align_corners != 0;
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& grid = ctx->input(1);
    const int rank = x.dims();
    const int spatial = rank - 2;
    if (rank < 3) {
      return absl::InvalidArgumentError(
          absl::StrCat("GridSample: x must be N x C x D1 x ... x Dr, got ", x.shape().DebugString()));
    }
    if (mode_ == SampleMode::kBicubic && spatial != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("GridSample: cubic mode needs 2-D input (N x C x H x W), got ", x.shape().DebugString()));
    }
    if (grid.dims() != rank || grid.dim_size(0) != x.dim_size(0) || grid.dim_size(rank - 1) != spatial) {
      return absl::InvalidArgumentError(absl::StrCat("GridSample: grid must be [", x.dim_size(0), ", ",
                                                     "D1_out, ..., Dr_out, ", spatial, "] for x of ",
                                                     x.shape().DebugString(), ", got ", grid.shape().DebugString()));
    }
    const int64_t n_size = x.dim_size(0), channels = x.dim_size(1);
    DimVector out_dims = {n_size, channels};
    std::vector<int64_t> dims(spatial);
    int64_t plane = 1, out_plane = 1;
    for (int d = 0; d < spatial; ++d) {
      dims[d] = x.dim_size(d + 2);
      plane *= dims[d];  // x exists, so the product fits.
      out_dims.push_back(grid.dim_size(d + 1));
      out_plane *= grid.dim_size(d + 1);
    }
    SL_ASSIGN_OR_RETURN(TensorShape out_shape, TensorShape::FromDims(out_dims), "GridSample");
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &y));
    if (y->NumElements() == 0) return absl::OkStatus();
    std::vector<double> g(grid.NumElements());
    VisitDataType(grid.dtype(), [&](auto tag) {
      using G = typename decltype(tag)::type;
      if constexpr (std::is_same_v<G, float> || std::is_same_v<G, double> || std::is_same_v<G, half>) {
        const G* p = grid.data<G>();
        for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<double>(p[i]);
      }
    });
    std::vector<int64_t> strides(spatial, 1);
    for (int d = spatial - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
    const T* in = x.data<T>();
    T* out = y->data<T>();
    std::vector<double> point(spatial);
    std::vector<std::vector<Tap>> taps(spatial);
    for (int64_t n = 0; n < n_size; ++n) {
      for (int64_t i = 0; i < out_plane; ++i) {
        // The grid's last dim lists coordinates innermost dim first: (x, y, z).
        const double* gp = &g[(n * out_plane + i) * spatial];
        for (int d = 0; d < spatial; ++d) point[d] = Unnormalize(gp[spatial - 1 - d], dims[d]);
        for (int d = 0; d < spatial; ++d) taps[d] = TapsFor(point[d], dims[d]);
        for (int64_t c = 0; c < channels; ++c) {
          const T* p = in + (n * channels + c) * plane;
          out[(n * channels + c) * out_plane + i] = static_cast<T>(Sum(p, taps, strides));
        }
      }
      SL_RETURN_IF_ERROR(ctx->CheckCancelled());
    }
    return absl::OkStatus();
  }

 private:
  // An input index along one dim (-1: outside, reads 0) and its weight.
  struct Tap {
    int64_t index;
    double weight;
  };

  // Grid value in [-1, 1] to a pixel coordinate.
  double Unnormalize(double v, int64_t size) const {
    return align_corners_ ? (v + 1) / 2 * (size - 1) : ((v + 1) * size - 1) / 2;
  }

  // The bounds that reflection mirrors at, doubled: pixel centres with align_corners, else
  // pixel edges.
  double TwiceLow() const { return align_corners_ ? 0.0 : -1.0; }
  double TwiceHigh(int64_t size) const { return align_corners_ ? 2.0 * (size - 1) : 2.0 * size - 1; }

  // Border or reflection padding of a point outside the bounds (zeros leaves it).
  double PadPoint(double v, int64_t size) const {
    if (padding_ == PaddingMode::kZeros || size == 0 || (v >= TwiceLow() / 2 && v <= TwiceHigh(size) / 2)) return v;
    if (padding_ == PaddingMode::kReflection) return Reflect(v, TwiceLow(), TwiceHigh(size));
    return std::clamp(v, 0.0, static_cast<double>(size - 1));
  }

  // The input index a tap at integral `i` reads, or -1 for a zero; checked before the casts,
  // so huge coordinates clamp or read 0 and NaN reads 0.
  int64_t PadIndex(double i, int64_t size) const {
    if (i >= 0 && i < size) return static_cast<int64_t>(i);
    if (padding_ == PaddingMode::kZeros || std::isnan(i) || size == 0) return -1;
    if (padding_ == PaddingMode::kBorder) return i < 0 ? 0 : size - 1;
    const double r = std::trunc(Reflect(i, TwiceLow(), TwiceHigh(size)));  // NaN for infinities.
    if (std::isnan(r)) return -1;
    if (r < 0) return 0;
    return r < size ? static_cast<int64_t>(r) : size - 1;
  }

  // Taps along one dim for the point v. Linear pads the point first, then each tap's index;
  // cubic pads only the taps, around the point as it is, as PyTorch's grid_sample and ONNX
  // Runtime do (padding the point first, as ONNX's GridSample-20 reference reads, collapses the
  // taps of a point past the border onto one pixel: up to 0.4 off on values of magnitude 1;
  // with reflection both give the same, the mirror being an isometry).
  std::vector<Tap> TapsFor(double v, int64_t size) const {
    if (mode_ == SampleMode::kNearest) {
      // Halves round to even, as std::nearbyint does in the default rounding mode.
      return {{PadIndex(PadPoint(std::nearbyint(v), size), size), 1.0}};
    }
    if (mode_ != SampleMode::kBicubic) v = PadPoint(v, size);
    if (std::isnan(v)) return {{-1, 1.0}};
    v = std::clamp(v, -1e15, 1e15);
    const double v0 = std::floor(v);
    if (mode_ == SampleMode::kBilinear) {
      return {{PadIndex(v0, size), 1 - (v - v0)}, {PadIndex(v0 + 1, size), v - v0}};
    }
    double w[4];
    CubicWeights(v - v0, w);
    std::vector<Tap> taps;
    for (int k = 0; k < 4; ++k) taps.push_back({PadIndex(v0 - 1 + k, size), w[k]});
    return taps;
  }

  // The sum over every combination of one tap per dim of the weights' product times the input.
  static double Sum(const T* p, const std::vector<std::vector<Tap>>& taps, const std::vector<int64_t>& strides) {
    const int spatial = static_cast<int>(taps.size());
    std::vector<size_t> pick(spatial, 0);
    double acc = 0;
    for (;;) {
      double w = 1;
      int64_t offset = 0;
      bool zero = false;
      for (int d = 0; d < spatial; ++d) {
        const Tap& t = taps[d][pick[d]];
        if (t.index < 0) zero = true;
        w *= t.weight;
        offset += t.index * strides[d];
      }
      // A zero weight must not multiply its value: 0 * inf would be NaN.
      if (!zero && w != 0) acc += w * static_cast<double>(p[offset]);
      int d = spatial - 1;
      for (; d >= 0; --d) {
        if (++pick[d] < taps[d].size()) break;
        pick[d] = 0;
      }
      if (d < 0) break;
    }
    return acc;
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
