// Kernels of ops/tf_misc_ops.cc: IsInf, Diag, DepthToSpace (NHWC), BroadcastArgs, EluGrad.
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "kernels/cwise_ops.h"
#include "kernels/kernel_registry.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

template <typename T>
class IsInfOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    Tensor* y;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &y));
    const T* px = x.data<T>();
    bool* py = y->data<bool>();
    for (int64_t i = 0, n = x.NumElements(); i < n; ++i) py[i] = std::isinf(static_cast<double>(px[i]));
    return absl::OkStatus();
  }
};

template <typename T>
class DiagOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& d = ctx->input(0);
    if (d.shape().dims() < 1) {
      return absl::InvalidArgumentError(absl::StrCat("Diag: input must be at least 1-D, got ", d.shape().DebugString()));
    }
    const int64_t n = d.NumElements();
    int64_t total;
    if (!CheckedMul(n, n, &total)) return absl::ResourceExhaustedError("Diag: the output's size overflows");
    SL_RETURN_IF_ERROR(TensorBytes(d.dtype(), total).status(), "Diag");
    TensorShape shape = d.shape();
    for (int64_t dim : d.shape().dim_sizes()) shape.AddDim(dim);
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, shape, &out));
    T* po = out->data<T>();
    std::fill(po, po + total, T());
    const T* pd = d.data<T>();
    for (int64_t i = 0; i < n; ++i) po[i * n + i] = pd[i];
    return absl::OkStatus();
  }
};

class DepthToSpaceOp : public OpKernel {
 public:
  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr("block_size", &block_));
    std::string format;
    SL_RETURN_IF_ERROR(ctx->GetAttr("data_format", &format));
    if (format != "NHWC") {
      return absl::UnimplementedError(absl::StrCat("DepthToSpace: data_format ", format, " on CPU (only NHWC)"));
    }
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    if (x.shape().dims() != 4) {
      return absl::InvalidArgumentError(absl::StrCat("DepthToSpace: input must be 4-D, got ", x.shape().DebugString()));
    }
    const int64_t b = x.shape().dim_size(0), h = x.shape().dim_size(1), w = x.shape().dim_size(2);
    const int64_t c = x.shape().dim_size(3), bs = block_;
    if (c % (bs * bs) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("DepthToSpace: input depth ", c,
                                                     " must be divisible by block_size * block_size = ", bs * bs));
    }
    const int64_t oc = c / (bs * bs);
    int64_t oh, ow;
    if (!CheckedMul(h, bs, &oh) || !CheckedMul(w, bs, &ow)) {
      return absl::InvalidArgumentError("DepthToSpace: the output's size overflows");
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({b, oh, ow, oc}), &out));
    const int64_t elem = DataTypeSize(x.dtype());
    if (x.dtype() == DT_STRING || elem <= 0) {
      return absl::UnimplementedError(absl::StrCat("DepthToSpace of ", DataTypeString(x.dtype())));
    }
    const char* px = static_cast<const char*>(x.raw_data());
    char* po = static_cast<char*>(out->raw_data());
    const int64_t run = oc * elem;  // One output pixel's channels are contiguous in the input.
    for (int64_t n = 0; n < b; ++n) {
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t xx = 0; xx < ow; ++xx) {
          const int64_t in_c = ((y % bs) * bs + (xx % bs)) * oc;
          const char* src = px + (((n * h + y / bs) * w + xx / bs) * c + in_c) * elem;
          std::memcpy(po + ((n * oh + y) * ow + xx) * run, src, run);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  int64_t block_ = 2;
};

// The values are plain integers, as TensorFlow's BCast reads them: a -1 (an unknown dim) paired
// with 1 stays -1, with -1 too, and with any other value is incompatible.
template <typename T>
class BroadcastArgsOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    if (a.shape().dims() != 1 || b.shape().dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat("BroadcastArgs: shapes must be vectors, got ",
                                                     a.shape().DebugString(), " and ", b.shape().DebugString()));
    }
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    const int64_t na = a.NumElements(), nb = b.NumElements(), n = std::max(na, nb);
    std::vector<T> r(n);
    for (int64_t i = 0; i < n; ++i) {
      const T da = i < n - na ? 1 : pa[i - (n - na)];
      const T db = i < n - nb ? 1 : pb[i - (n - nb)];
      if (da != db && da != 1 && db != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("BroadcastArgs: Incompatible shapes: dimension ", i, " is ", da, " and ", db));
      }
      r[i] = da == 1 ? db : da;
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape({n}), &out));
    std::copy(r.begin(), r.end(), out->data<T>());
    return absl::OkStatus();
  }
};

template <typename T>
class EluGradOp : public OpKernel {
 public:
  using C = typename sluice::Compute<T>::type;
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& g = ctx->input(0);
    const Tensor& y = ctx->input(1);
    if (g.shape() != y.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("EluGrad: gradients ", g.shape().DebugString(),
                                                     " and outputs ", y.shape().DebugString(), " differ"));
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, g.shape(), &out));
    const T* pg = g.data<T>();
    const T* py = y.data<T>();
    T* po = out->data<T>();
    for (int64_t i = 0, n = g.NumElements(); i < n; ++i) {
      const C yi = static_cast<C>(py[i]);
      po[i] = static_cast<T>(yi < C(0) ? static_cast<C>(pg[i]) * (yi + C(1)) : static_cast<C>(pg[i]));
    }
    return absl::OkStatus();
  }
};

[[maybe_unused]] const bool kRegistered = [] {
  RegisterCpuKernelTemplate<IsInfOp>("IsInf", FloatTypes{});
  RegisterCpuKernelTemplate<DiagOp>("Diag", TypeList<bfloat16, half, float, double, int32_t, int64_t, complex64,
                                                     complex128>{});
  RegisterCpuKernelTemplate<BroadcastArgsOp>("BroadcastArgs", TypeList<int32_t, int64_t>{});
  RegisterCpuKernelTemplate<EluGradOp>("EluGrad", FloatTypes{});
  KernelRegistry::Global()->Register(Name("DepthToSpace").Device(DEVICE_CPU).Build(), "DepthToSpaceOp",
                                     [] { return std::make_unique<DepthToSpaceOp>(); });
  return true;
}();

}  // namespace
}  // namespace sluice
