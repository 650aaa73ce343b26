// CPU kernels of TensorFlow's resizes (ops/tf_nn_ops.cc): ResizeBilinear and
// ResizeNearestNeighbor and their gradients, on NHWC images. They follow TensorFlow's
// coordinate rules (float scales, TensorFlow's floor/round for nearest), which ONNX's Resize
// does not reproduce bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "kernels/kernel_registry.h"
#include "kernels/numeric_cast.h"
#include "kernels/tf_kernel_util.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

// The checks TensorFlow's resizes share, and their float scales.
struct ResizeGeometry {
  int64_t n, in_h, in_w, c, out_h, out_w;
  float scale_h, scale_w;
};

float ResizeScale(int64_t in, int64_t out, bool align_corners) {
  return align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                  : static_cast<float>(in) / static_cast<float>(out);
}

absl::StatusOr<ResizeGeometry> CheckResize(const Tensor& images, const Tensor& size, bool align_corners,
                                           bool half_pixel_centers) {
  if (half_pixel_centers && align_corners) {
    return absl::InvalidArgumentError("if half_pixel_centers is true, align_corners must be false");
  }
  SL_RETURN_IF_ERROR(CheckRank4(images, "images"));
  if (size.dims() != 1 || size.NumElements() != 2) {
    return absl::InvalidArgumentError(absl::StrCat("size must be a vector of 2 values, got shape ", size.shape().DebugString()));
  }
  ResizeGeometry r;
  r.n = images.dim_size(0);
  r.in_h = images.dim_size(1);
  r.in_w = images.dim_size(2);
  r.c = images.dim_size(3);
  if (r.c <= 0) return absl::InvalidArgumentError("images must have at least one channel");
  if (r.in_h <= 0 || r.in_w <= 0) return absl::InvalidArgumentError("images must be of non-zero size");
  if (r.in_h > std::numeric_limits<int32_t>::max() || r.in_w > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError("image sizes must be below 2^31");
  }
  r.out_h = size.flat<int32_t>()[0];
  r.out_w = size.flat<int32_t>()[1];
  if (r.out_h <= 0 || r.out_w <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("size must be positive, got [", r.out_h, ",", r.out_w, "]"));
  }
  r.scale_h = ResizeScale(r.in_h, r.out_h, align_corners);
  r.scale_w = ResizeScale(r.in_w, r.out_w, align_corners);
  return r;
}

// Bilinear weights of one axis, TensorFlow's rules: the source coordinate in float (legacy
// x * scale, or (x + 0.5) * scale - 0.5 with half-pixel centers), its floor and ceil clamped into
// the input, and the fraction over the unclamped floor.
struct Lerp {
  int64_t lower, upper;
  float frac;
};

std::vector<Lerp> LerpsOf(int64_t out, int64_t in, float scale, bool half_pixel) {
  std::vector<Lerp> l(out);
  for (int64_t i = 0; i < out; ++i) {
    const float src = half_pixel ? (static_cast<float>(i) + 0.5f) * scale - 0.5f : static_cast<float>(i) * scale;
    const float lo = std::floor(src);
    l[i].lower = std::max<int64_t>(static_cast<int64_t>(lo), 0);
    l[i].upper = std::min<int64_t>(static_cast<int64_t>(std::ceil(src)), in - 1);
    l[i].frac = src - lo;
  }
  return l;
}

template <typename T>
class ResizeBilinearOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("align_corners", &align_corners_));
    return ctx->GetAttr("half_pixel_centers", &half_pixel_);
  }
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    SL_ASSIGN_OR_RETURN(ResizeGeometry r, CheckResize(x, ctx->input(1), align_corners_, half_pixel_));
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({r.n, r.out_h, r.out_w, r.c}), &y));
    const std::vector<Lerp> ys = LerpsOf(r.out_h, r.in_h, r.scale_h, half_pixel_);
    const std::vector<Lerp> xs = LerpsOf(r.out_w, r.in_w, r.scale_w, half_pixel_);
    const T* in = x.data<T>();
    float* out = y->data<float>();
    auto at = [&](int64_t b, int64_t i, int64_t j, int64_t ch) {
      return static_cast<float>(in[((b * r.in_h + i) * r.in_w + j) * r.c + ch]);
    };
    ForEachCancellableSlice(ctx, r.n * r.out_h, r.out_w * r.c * 8, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / r.out_h;
        const Lerp& ly = ys[row % r.out_h];
        float* dst = out + row * r.out_w * r.c;
        for (int64_t q = 0; q < r.out_w; ++q) {
          const Lerp& lx = xs[q];
          for (int64_t ch = 0; ch < r.c; ++ch) {
            const float tl = at(b, ly.lower, lx.lower, ch), tr = at(b, ly.lower, lx.upper, ch);
            const float bl = at(b, ly.upper, lx.lower, ch), br = at(b, ly.upper, lx.upper, ch);
            const float top = tl + (tr - tl) * lx.frac;
            const float bottom = bl + (br - bl) * lx.frac;
            dst[q * r.c + ch] = top + (bottom - top) * ly.frac;
          }
        }
      }
    });
    return ctx->CheckCancelled();
  }

 private:
  bool align_corners_ = false, half_pixel_ = false;
};

// The nearest source index, TensorFlow's rules: floor of x * scale (legacy) or of
// (x + 0.5) * scale (half-pixel centers), round-half-away-from-zero with align_corners;
// clamped into the input.
int64_t NearestIndex(int64_t i, int64_t in, float scale, bool align_corners, bool half_pixel) {
  const float src = half_pixel ? (static_cast<float>(i) + 0.5f) * scale : static_cast<float>(i) * scale;
  int64_t k = align_corners ? static_cast<int64_t>(std::round(src)) : static_cast<int64_t>(std::floor(src));
  k = std::min<int64_t>(k, in - 1);
  return half_pixel ? std::max<int64_t>(k, 0) : k;
}

template <typename T>
class ResizeNearestNeighborOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("align_corners", &align_corners_));
    return ctx->GetAttr("half_pixel_centers", &half_pixel_);
  }
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    SL_ASSIGN_OR_RETURN(ResizeGeometry r, CheckResize(x, ctx->input(1), align_corners_, half_pixel_));
    if (r.in_h >= (int64_t{1} << 24) || r.in_w >= (int64_t{1} << 24)) {
      return absl::InvalidArgumentError("nearest-neighbor resize takes images of at most 2^24 rows and columns");
    }
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({r.n, r.out_h, r.out_w, r.c}), &y));
    std::vector<int64_t> cols(r.out_w);
    for (int64_t q = 0; q < r.out_w; ++q) cols[q] = NearestIndex(q, r.in_w, r.scale_w, align_corners_, half_pixel_);
    const T* in = x.data<T>();
    T* out = y->data<T>();
    ForEachCancellableSlice(ctx, r.n * r.out_h, r.out_w * r.c, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / r.out_h;
        const int64_t i = NearestIndex(row % r.out_h, r.in_h, r.scale_h, align_corners_, half_pixel_);
        for (int64_t q = 0; q < r.out_w; ++q) {
          std::copy_n(in + ((b * r.in_h + i) * r.in_w + cols[q]) * r.c, r.c, out + (row * r.out_w + q) * r.c);
        }
      }
    });
    return ctx->CheckCancelled();
  }

 private:
  bool align_corners_ = false, half_pixel_ = false;
};

// The checks the resize gradients share: grads [n, out_h, out_w, c] against the original
// image's [n, in_h, in_w, c], and the forward's scales.
absl::StatusOr<ResizeGeometry> CheckResizeGrad(const Tensor& grads, int64_t n, int64_t in_h, int64_t in_w, int64_t c,
                                               bool align_corners, bool half_pixel_centers) {
  if (half_pixel_centers && align_corners) {
    return absl::InvalidArgumentError("if half_pixel_centers is true, align_corners must be false");
  }
  SL_RETURN_IF_ERROR(CheckRank4(grads, "grads"));
  if (grads.dim_size(0) != n || grads.dim_size(3) != c) {
    return absl::InvalidArgumentError(absl::StrCat("grads ", grads.shape().DebugString(),
                                                   " must have the original image's batch ", n, " and channels ", c));
  }
  if (in_h <= 0 || in_w <= 0 || grads.dim_size(1) <= 0 || grads.dim_size(2) <= 0) {
    return absl::InvalidArgumentError("the original image and grads must be of non-zero size");
  }
  if (in_h >= (int64_t{1} << 24) || in_w >= (int64_t{1} << 24)) {
    return absl::InvalidArgumentError("resize gradients take images of at most 2^24 rows and columns");
  }
  ResizeGeometry r{n, in_h, in_w, c, grads.dim_size(1), grads.dim_size(2), 0, 0};
  r.scale_h = ResizeScale(r.in_h, r.out_h, align_corners);
  r.scale_w = ResizeScale(r.in_w, r.out_w, align_corners);
  return r;
}

// ResizeBilinearGrad(grads, original_image): each output's gradient shared out over the four
// inputs it interpolated, with the forward's own weights (LerpsOf): top-left (1 - fy)(1 - fx),
// top-right (1 - fy) fx, bottom-left fy (1 - fx), bottom-right fy fx.
template <typename T>
class ResizeBilinearGradOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("align_corners", &align_corners_));
    return ctx->GetAttr("half_pixel_centers", &half_pixel_);
  }
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& grads = ctx->input(0);
    const Tensor& image = ctx->input(1);
    SL_RETURN_IF_ERROR(CheckRank4(image, "original_image"));
    SL_ASSIGN_OR_RETURN(ResizeGeometry r, CheckResizeGrad(grads, image.dim_size(0), image.dim_size(1), image.dim_size(2),
                                                          image.dim_size(3), align_corners_, half_pixel_));
    const std::vector<Lerp> ys = LerpsOf(r.out_h, r.in_h, r.scale_h, half_pixel_);
    const std::vector<Lerp> xs = LerpsOf(r.out_w, r.in_w, r.scale_w, half_pixel_);
    std::vector<double> acc(image.NumElements(), 0.0);
    const float* g = grads.data<float>();
    auto at = [&](int64_t b, int64_t i, int64_t j) { return ((b * r.in_h + i) * r.in_w + j) * r.c; };
    for (int64_t b = 0; b < r.n; ++b) {
      SL_RETURN_IF_ERROR(ctx->CheckCancelled());
      for (int64_t p = 0; p < r.out_h; ++p) {
        const Lerp& ly = ys[p];
        for (int64_t q = 0; q < r.out_w; ++q) {
          const Lerp& lx = xs[q];
          const double fy = ly.frac, fx = lx.frac;
          const float* src = g + ((b * r.out_h + p) * r.out_w + q) * r.c;
          double* tl = &acc[at(b, ly.lower, lx.lower)];
          double* tr = &acc[at(b, ly.lower, lx.upper)];
          double* bl = &acc[at(b, ly.upper, lx.lower)];
          double* br = &acc[at(b, ly.upper, lx.upper)];
          for (int64_t ch = 0; ch < r.c; ++ch) {
            const double v = src[ch];
            tl[ch] += v * (1 - fy) * (1 - fx);
            tr[ch] += v * (1 - fy) * fx;
            bl[ch] += v * fy * (1 - fx);
            br[ch] += v * fy * fx;
          }
        }
      }
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, image.shape(), &out));
    T* o = out->data<T>();
    for (size_t k = 0; k < acc.size(); ++k) o[k] = FromDouble<T>(acc[k]);
    return absl::OkStatus();
  }

 private:
  bool align_corners_ = false, half_pixel_ = false;
};

// ResizeNearestNeighborGrad(grads, size): each output's gradient added onto the input pixel
// it copied (NearestIndex, the forward's rule); `size` is the original [height, width].
template <typename T>
class ResizeNearestNeighborGradOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("align_corners", &align_corners_));
    return ctx->GetAttr("half_pixel_centers", &half_pixel_);
  }
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& grads = ctx->input(0);
    const Tensor& size = ctx->input(1);
    SL_RETURN_IF_ERROR(CheckRank4(grads, "grads"));
    if (size.dims() != 1 || size.NumElements() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("size must be a vector of 2 values, got shape ", size.shape().DebugString()));
    }
    const int64_t in_h = size.flat<int32_t>()[0], in_w = size.flat<int32_t>()[1];
    SL_ASSIGN_OR_RETURN(ResizeGeometry r, CheckResizeGrad(grads, grads.dim_size(0), in_h, in_w, grads.dim_size(3),
                                                          align_corners_, half_pixel_));
    std::vector<int64_t> cols(r.out_w);
    for (int64_t q = 0; q < r.out_w; ++q) cols[q] = NearestIndex(q, r.in_w, r.scale_w, align_corners_, half_pixel_);
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({r.n, r.in_h, r.in_w, r.c}), &out));
    std::vector<double> acc(out->NumElements(), 0.0);
    const T* g = grads.data<T>();
    for (int64_t b = 0; b < r.n; ++b) {
      SL_RETURN_IF_ERROR(ctx->CheckCancelled());
      for (int64_t p = 0; p < r.out_h; ++p) {
        const int64_t i = NearestIndex(p, r.in_h, r.scale_h, align_corners_, half_pixel_);
        for (int64_t q = 0; q < r.out_w; ++q) {
          const T* src = g + ((b * r.out_h + p) * r.out_w + q) * r.c;
          double* dst = &acc[((b * r.in_h + i) * r.in_w + cols[q]) * r.c];
          for (int64_t ch = 0; ch < r.c; ++ch) dst[ch] += ToDouble(src[ch]);
        }
      }
    }
    T* o = out->data<T>();
    for (size_t k = 0; k < acc.size(); ++k) o[k] = FromDouble<T>(acc[k]);
    return absl::OkStatus();
  }

 private:
  bool align_corners_ = false, half_pixel_ = false;
};

using ImageTypes = TypeList<int8_t, uint8_t, int16_t, uint16_t, int32_t, int64_t, bfloat16, half, float, double>;

const bool registered = [] {
  RegisterCpuKernelTemplate<ResizeBilinearOp>("ResizeBilinear", ImageTypes{});
  RegisterCpuKernelTemplate<ResizeNearestNeighborOp>("ResizeNearestNeighbor", ImageTypes{});
  RegisterCpuKernelTemplate<ResizeBilinearGradOp>("ResizeBilinearGrad", FloatTypes{});
  RegisterCpuKernelTemplate<ResizeNearestNeighborGradOp>("ResizeNearestNeighborGrad",
                                                         TypeList<uint8_t, int8_t, int32_t, half, float, double, bfloat16>{});
  return true;
}();

}  // namespace
}  // namespace sluice
