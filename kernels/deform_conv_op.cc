// DeformConv (ONNX 19), 2-D: each output point sums, over its group's input channels and the
// kernel's taps, weight * mask * the input sampled bilinearly (zero outside) at the tap's
// place plus its offset. The samples go into a column buffer per image and offset group
// ([channel][tap][output point]), then each group's weights multiply it.
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "kernels/kernel_registry.h"
#include "kernels/numeric_cast.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

// The input plane at (y, x), bilinearly, with zeros outside; NaN and huge coordinates read 0.
template <typename T>
double Bilinear(const T* p, int64_t height, int64_t width, double y, double x) {
  if (!(y > -1 && y < height && x > -1 && x < width)) return 0.0;
  const double y0 = std::floor(y), x0 = std::floor(x);
  const double ly = y - y0, lx = x - x0;
  const int64_t iy = static_cast<int64_t>(y0), ix = static_cast<int64_t>(x0);
  auto at = [&](int64_t r, int64_t c) {
    return r >= 0 && r < height && c >= 0 && c < width ? ToDouble(p[r * width + c]) : 0.0;
  };
  double acc = 0;
  // Zero weights skip their value: 0 * inf would be NaN.
  if ((1 - ly) * (1 - lx) != 0) acc += (1 - ly) * (1 - lx) * at(iy, ix);
  if ((1 - ly) * lx != 0) acc += (1 - ly) * lx * at(iy, ix + 1);
  if (ly * (1 - lx) != 0) acc += ly * (1 - lx) * at(iy + 1, ix);
  if (ly * lx != 0) acc += ly * lx * at(iy + 1, ix + 1);
  return acc;
}

template <typename T>
class DeformConvOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    DataTypeVector b, mask;
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tb", &b));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tmask", &mask));
    has_bias_ = !b.empty();
    has_mask_ = !mask.empty();
    SL_RETURN_IF_ERROR(ctx->GetAttr("dilations", &dilations_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("group", &group_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("kernel_shape", &kernel_shape_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("offset_group", &offset_group_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("pads", &pads_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("strides", &strides_));
    if (group_ < 1 || offset_group_ < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("DeformConv: group (", group_, ") and offset_group (", offset_group_, ") must be positive"));
    }
    auto check = [](const std::vector<int64_t>& v, size_t n, const char* name, int64_t min) -> absl::Status {
      if (!v.empty() && v.size() != n) {
        return absl::InvalidArgumentError(absl::StrCat("DeformConv: ", name, " needs ", n, " values, got ", v.size()));
      }
      for (int64_t x : v) {
        if (x < min || x > (int64_t{1} << 31)) {
          return absl::InvalidArgumentError(absl::StrCat("DeformConv: ", name, " value ", x, " is out of range"));
        }
      }
      return absl::OkStatus();
    };
    SL_RETURN_IF_ERROR(check(dilations_, 2, "dilations", 1));
    SL_RETURN_IF_ERROR(check(kernel_shape_, 2, "kernel_shape", 1));
    SL_RETURN_IF_ERROR(check(pads_, 4, "pads", 0));
    SL_RETURN_IF_ERROR(check(strides_, 2, "strides", 1));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& w = ctx->input(1);
    const Tensor& offset = ctx->input(2);
    int next = 3;
    const Tensor* bias = has_bias_ ? &ctx->input(next++) : nullptr;
    const Tensor* mask = has_mask_ ? &ctx->input(next++) : nullptr;
    if (x.dims() != 4) {
      return absl::UnimplementedError(absl::StrCat("DeformConv: only 2-D input (N x C x H x W) is supported, got ",
                                                   x.shape().DebugString()));
    }
    const int64_t n_size = x.dim_size(0), in_c = x.dim_size(1), height = x.dim_size(2), width = x.dim_size(3);
    if (w.dims() != 4 || w.dim_size(1) * group_ != in_c || w.dim_size(0) % group_ != 0) {
      return absl::InvalidArgumentError(absl::StrCat("DeformConv: W ", w.shape().DebugString(), " does not fit X ",
                                                     x.shape().DebugString(), " with group ", group_));
    }
    const int64_t out_c = w.dim_size(0), in_per_group = w.dim_size(1), out_per_group = out_c / group_;
    const int64_t kh = w.dim_size(2), kw = w.dim_size(3);
    if (!kernel_shape_.empty() && (kernel_shape_[0] != kh || kernel_shape_[1] != kw)) {
      return absl::InvalidArgumentError("DeformConv: kernel_shape differs from W's spatial dims");
    }
    if (in_c % offset_group_ != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("DeformConv: ", in_c, " input channels do not split into ", offset_group_, " offset groups"));
    }
    const int64_t dh = dilations_.empty() ? 1 : dilations_[0], dw = dilations_.empty() ? 1 : dilations_[1];
    const int64_t sh = strides_.empty() ? 1 : strides_[0], sw = strides_.empty() ? 1 : strides_[1];
    const int64_t pt = pads_.empty() ? 0 : pads_[0], pl = pads_.empty() ? 0 : pads_[1];
    const int64_t pb = pads_.empty() ? 0 : pads_[2], pr = pads_.empty() ? 0 : pads_[3];
    // Attrs are at most 2^31 and dims fit in a tensor, so these stay far from overflow.
    const int64_t span_h = (kh - 1) * dh + 1, span_w = (kw - 1) * dw + 1;
    const int64_t out_h = (height + pt + pb - span_h) / sh + 1, out_w = (width + pl + pr - span_w) / sw + 1;
    if (height + pt + pb < span_h || width + pl + pr < span_w) {
      return absl::InvalidArgumentError("DeformConv: the kernel is larger than the padded input");
    }
    const int64_t taps = kh * kw;
    SL_ASSIGN_OR_RETURN(int64_t offset_c, ShapeElements({offset_group_, taps, 2}), "DeformConv");
    if (offset.dims() != 4 || offset.dim_size(0) != n_size || offset.dim_size(1) != offset_c ||
        offset.dim_size(2) != out_h || offset.dim_size(3) != out_w) {
      return absl::InvalidArgumentError(absl::StrCat("DeformConv: offset must be [", n_size, ", ", offset_c, ", ",
                                                     out_h, ", ", out_w, "], got ", offset.shape().DebugString()));
    }
    if (mask != nullptr && (mask->dims() != 4 || mask->dim_size(0) != n_size || mask->dim_size(1) != offset_c / 2 ||
                            mask->dim_size(2) != out_h || mask->dim_size(3) != out_w)) {
      return absl::InvalidArgumentError(absl::StrCat("DeformConv: mask must be [", n_size, ", ", offset_c / 2, ", ",
                                                     out_h, ", ", out_w, "], got ", mask->shape().DebugString()));
    }
    if (bias != nullptr && (bias->dims() != 1 || bias->dim_size(0) != out_c)) {
      return absl::InvalidArgumentError(
          absl::StrCat("DeformConv: B must be [", out_c, "], got ", bias->shape().DebugString()));
    }
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({n_size, out_c, out_h, out_w}), &y));
    if (y->NumElements() == 0) return absl::OkStatus();
    const int64_t points = out_h * out_w;
    // A tensor, so that its size is checked and charged to the step's memory budget.
    SL_ASSIGN_OR_RETURN(int64_t col_size, ShapeElements({in_c, taps, points}), "DeformConv column buffer");
    SL_ASSIGN_OR_RETURN(Tensor col_tensor, Tensor::Allocate(DT_DOUBLE, TensorShape({col_size})),
                        "DeformConv column buffer");
    double* col = col_tensor.data<double>();
    const int64_t in_per_offset_group = in_c / offset_group_;
    const T* xd = x.data<T>();
    const T* wd = w.data<T>();
    const T* od = offset.data<T>();
    T* yd = y->data<T>();
    for (int64_t n = 0; n < n_size; ++n) {
      for (int64_t c = 0; c < in_c; ++c) {
        const int64_t og = c / in_per_offset_group;
        const T* plane = xd + (n * in_c + c) * height * width;
        for (int64_t k = 0; k < taps; ++k) {
          const int64_t ki = k / kw, kj = k % kw;
          // offset[n][og][k][0 = dy, 1 = dx][oy][ox]; mask[n][og][k][oy][ox].
          const T* dy = od + ((n * offset_group_ + og) * taps + k) * 2 * points;
          const T* dx = dy + points;
          const T* m = mask == nullptr ? nullptr : mask->data<T>() + ((n * offset_group_ + og) * taps + k) * points;
          double* out = col + (c * taps + k) * points;
          for (int64_t oy = 0; oy < out_h; ++oy) {
            for (int64_t ox = 0; ox < out_w; ++ox) {
              const int64_t p = oy * out_w + ox;
              const double scale = m == nullptr ? 1.0 : ToDouble(m[p]);
              const double sy = static_cast<double>(oy * sh - pt + ki * dh) + ToDouble(dy[p]);
              const double sx = static_cast<double>(ox * sw - pl + kj * dw) + ToDouble(dx[p]);
              out[p] = scale == 0 ? 0.0 : scale * Bilinear(plane, height, width, sy, sx);
            }
          }
        }
      }
      for (int64_t oc = 0; oc < out_c; ++oc) {
        const int64_t g = oc / out_per_group;
        std::vector<double> acc(points, bias == nullptr ? 0.0 : ToDouble(bias->data<T>()[oc]));
        for (int64_t ic = 0; ic < in_per_group; ++ic) {
          for (int64_t k = 0; k < taps; ++k) {
            const double wv = ToDouble(wd[(oc * in_per_group + ic) * taps + k]);
            const double* src = col + ((g * in_per_group + ic) * taps + k) * points;
            for (int64_t p = 0; p < points; ++p) acc[p] += wv * src[p];
          }
        }
        T* dst = yd + (n * out_c + oc) * points;
        for (int64_t p = 0; p < points; ++p) dst[p] = FromDouble<T>(acc[p]);
      }
      SL_RETURN_IF_ERROR(ctx->CheckCancelled());
    }
    return absl::OkStatus();
  }

 private:
  bool has_bias_ = false, has_mask_ = false;
  std::vector<int64_t> dilations_, kernel_shape_, pads_, strides_;
  int64_t group_ = 1, offset_group_ = 1;
};

struct RegisterDeformConvKernels {
  RegisterDeformConvKernels() {
    RegisterCpuKernels("Onnx>DeformConv", "T", FloatTypes{}, [](auto t) -> std::unique_ptr<OpKernel> {
      return std::make_unique<DeformConvOp<typename decltype(t)::type>>();
    });
  }
} register_deform_conv_kernels;

}  // namespace
}  // namespace sluice
