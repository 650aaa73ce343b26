// Kernels of the ops backward graphs use: SumToShape, ReluGrad and ClipGrad.
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "kernels/kernel_registry.h"
#include "kernels/typed_registration.h"

namespace sluice {
namespace {

template <typename T>
class SumToShapeOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    const Tensor& shape = ctx->input(1);
    DimVector target(shape.flat<int64_t>().begin(), shape.flat<int64_t>().end());
    TensorShape out_shape(target);
    if (out_shape == in.shape()) return ctx->set_output(0, in);
    const int rank = in.dims(), offset = rank - static_cast<int>(target.size());
    if (offset < 0) {
      return absl::InvalidArgumentError(absl::StrCat("cannot sum ", in.shape().DebugString(), " to ",
                                                     out_shape.DebugString()));
    }
    for (int i = 0; i < static_cast<int>(target.size()); ++i) {
      if (target[i] != 1 && target[i] != in.dim_size(offset + i)) {
        return absl::InvalidArgumentError(absl::StrCat(out_shape.DebugString(), " does not broadcast to ",
                                                       in.shape().DebugString()));
      }
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
    std::vector<double> acc(out->NumElements(), 0.0);
    // Output strides over the input's dims: 0 where the target broadcasts.
    std::vector<int64_t> stride(rank, 0);
    int64_t s = 1;
    for (int i = rank - 1; i >= offset; --i) {
      const int64_t t = target[i - offset];
      stride[i] = t == 1 ? 0 : s;
      s *= t;
    }
    const T* src = in.data<T>();
    // Trailing dims that all sum into one output element (a bias gradient's H and W) make
    // contiguous blocks: each is summed in one pass, and the index walk moves block by block.
    int lead = rank;
    int64_t block = 1;
    while (lead > 0 && stride[lead - 1] == 0) block *= in.dim_size(--lead);
    if (block > 1 && in.NumElements() > 0) {
      std::vector<int64_t> idx(lead, 0);
      int64_t at = 0;
      for (int64_t k = 0; k < in.NumElements(); k += block) {
        // Four running sums, so the adds do not wait on each other (one sum was bound by the
        // add's latency: 55 ms of EfficientNet-B0's training step).
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        const T* b = src + k;
        int64_t j = 0;
        for (; j + 4 <= block; j += 4) {
          s0 += static_cast<double>(b[j]);
          s1 += static_cast<double>(b[j + 1]);
          s2 += static_cast<double>(b[j + 2]);
          s3 += static_cast<double>(b[j + 3]);
        }
        for (; j < block; ++j) s0 += static_cast<double>(b[j]);
        acc[at] += (s0 + s1) + (s2 + s3);
        for (int d = lead - 1; d >= 0; --d) {
          at += stride[d];
          if (++idx[d] < in.dim_size(d)) break;
          at -= stride[d] * in.dim_size(d);
          idx[d] = 0;
        }
      }
      T* dst = out->data<T>();
      for (int64_t i = 0; i < out->NumElements(); ++i) dst[i] = static_cast<T>(acc[i]);
      return absl::OkStatus();
    }
    // Trailing dims kept whole (a MatMul bias's gradient summed over batch and rows): rows of
    // the input add into contiguous runs of the output, row by row.
    int keep = rank;
    int64_t row = 1;
    while (keep > offset && stride[keep - 1] != 0) row *= in.dim_size(--keep);
    if (row > 1 && in.NumElements() > 0) {
      std::vector<int64_t> idx(keep, 0);
      int64_t at = 0;
      for (int64_t k = 0; k < in.NumElements(); k += row) {
        const T* r = src + k;
        double* a = acc.data() + at;
        for (int64_t j = 0; j < row; ++j) a[j] += static_cast<double>(r[j]);
        for (int d = keep - 1; d >= 0; --d) {
          at += stride[d];
          if (++idx[d] < in.dim_size(d)) break;
          at -= stride[d] * in.dim_size(d);
          idx[d] = 0;
        }
      }
      T* dst = out->data<T>();
      for (int64_t i = 0; i < out->NumElements(); ++i) dst[i] = static_cast<T>(acc[i]);
      return absl::OkStatus();
    }
    std::vector<int64_t> idx(rank, 0);
    int64_t at = 0;
    for (int64_t k = 0; k < in.NumElements(); ++k) {
      if constexpr (std::is_same_v<T, double> || std::is_integral_v<T>) {
        acc[at] += static_cast<double>(src[k]);
      } else {
        acc[at] += static_cast<float>(src[k]);
      }
      for (int d = rank - 1; d >= 0; --d) {
        at += stride[d];
        if (++idx[d] < in.dim_size(d)) break;
        at -= stride[d] * in.dim_size(d);
        idx[d] = 0;
      }
    }
    for (int64_t i = 0; i < out->NumElements(); ++i) out->data<T>()[i] = static_cast<T>(acc[i]);
    return absl::OkStatus();
  }
};

// out[i] = lo < x[i] < hi ? dy[i] : 0; without `bounded_above`, lo < x[i] (ReLU: +inf passes). out may be dy (the
// kernels write in place): GCC's vectorized loop checked for overlap and ran its scalar
// fallback, a branch per element, whenever it did (4x PyTorch's time on MobileNetV2's ReLU6),
// so floats go through vectors of 8 explicitly, each loaded before it is stored.
template <typename T>
void KeepGradientInside(const T* x, const T* dy, T* out, int64_t n, T lo, T hi, bool bounded_above) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
    typedef float V __attribute__((vector_size(32)));
    typedef int32_t M __attribute__((vector_size(32)));
    const V vlo = V{} + lo, vhi = V{} + hi;
    for (; i + 8 <= n; i += 8) {
      V xv;
      M dv;  // dY's bits.
      std::memcpy(&xv, x + i, sizeof(V));
      std::memcpy(&dv, dy + i, sizeof(M));
      const M keep = bounded_above ? M(xv > vlo) & M(xv < vhi) : M(xv > vlo);
      const M kept = dv & keep;
      std::memcpy(out + i, &kept, sizeof(V));
    }
  }
  for (; i < n; ++i) out[i] = x[i] > lo && (!bounded_above || x[i] < hi) ? dy[i] : T(0);
}

// out[i] = f(y[i], dy[i]), out possibly dy: floats in explicit vectors (see above) of 4, the
// SSE width the build targets (f returns one; a wider return would change the ABI).
template <typename T, typename F>
void MapPairs(const T* y, const T* dy, T* out, int64_t n, F f) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
    typedef float V __attribute__((vector_size(16)));
    for (; i + 4 <= n; i += 4) {
      V a, b;
      std::memcpy(&a, y + i, sizeof(V));
      std::memcpy(&b, dy + i, sizeof(V));
      const V r = f(a, b);
      std::memcpy(out + i, &r, sizeof(V));
    }
  }
  for (; i < n; ++i) out[i] = f(y[i], dy[i]);
}

// TensorFlow's SigmoidGrad and TanhGrad: (y, dy) -> the gradient at the activation's input, in
// one pass into dY's buffer (the spelled-out form filled a tensor of ones, then Sub, Mul, Mul:
// EfficientNet-B0's 49 Swish activations spent ~200 ms of a 0.9 s step there).
struct SigmoidGradFn {
  template <typename V>
  V operator()(V y, V dy) const { return dy * y * (1.0f - y); }
};
struct TanhGradFn {
  template <typename V>
  V operator()(V y, V dy) const { return dy * (1.0f - y * y); }
};

template <typename Fn>
struct ActivationGrad {
  template <typename T>
  class Op : public OpKernel {
   public:
    absl::Status Compute(OpKernelContext* ctx) const override {
      const Tensor& y = ctx->input(0);
      const Tensor& dy = ctx->input(1);
      if (dy.shape() != y.shape()) {
        return absl::InvalidArgumentError(absl::StrCat("y ", y.shape().DebugString(), " and dy ",
                                                       dy.shape().DebugString(), " differ"));
      }
      Tensor* out;
      SL_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output(1, 0, y.shape(), &out));
      MapPairs<T>(y.data<T>(), dy.data<T>(), out->data<T>(), y.NumElements(), Fn());
      return absl::OkStatus();
    }
  };
};

template <typename T>
class ReluGradOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1);
    if (dy.shape() != x.shape()) return absl::InvalidArgumentError("ReluGrad inputs differ in shape");
    Tensor* out;
    // Into dY's buffer when nothing else reads it (the usual case in a backward pass): no new
    // buffer to fault in, one stream fewer through memory.
    SL_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output(0, 0, x.shape(), &out));
    const T* xp = x.data<T>();
    const T* dyp = dy.data<T>();
    T* op = out->data<T>();
    const int64_t n = x.NumElements();
    KeepGradientInside<T>(xp, dyp, op, n, T(0), T(0), /*bounded_above=*/false);
    return absl::OkStatus();
  }
};

// dY where min < Y < max, else 0 (Y: Clip's output): Clip's gradient, one pass instead of two compares, an And
// and a broadcasting Where (MobileNetV2's 35 ReLU6 took 145 ms of a 540 ms training step).
template <typename T>
class ClipGradOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1);
    if (dy.shape() != x.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("ClipGrad: gradients ", dy.shape().DebugString(),
                                                     " and features ", x.shape().DebugString(), " differ"));
    }
    for (int i : {2, 3}) {
      if (ctx->input(i).NumElements() != 1) {
        return absl::InvalidArgumentError(absl::StrCat("ClipGrad: ", i == 2 ? "min" : "max", " must be a scalar, got ",
                                                       ctx->input(i).shape().DebugString()));
      }
    }
    const T lo = ctx->input(2).data<T>()[0], hi = ctx->input(3).data<T>()[0];
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output(0, 0, x.shape(), &out));
    const T* xp = x.data<T>();
    const T* dyp = dy.data<T>();
    T* op = out->data<T>();
    const int64_t n = x.NumElements();
    KeepGradientInside<T>(xp, dyp, op, n, lo, hi, /*bounded_above=*/true);
    return absl::OkStatus();
  }
};

[[maybe_unused]] const bool kRegistered = [] {
  RegisterCpuKernelTemplate<ClipGradOp>("ClipGrad", TypeList<float, double>{});
  RegisterCpuKernelTemplate<ActivationGrad<SigmoidGradFn>::Op>("SigmoidGrad", TypeList<float, double>{});
  RegisterCpuKernelTemplate<ActivationGrad<TanhGradFn>::Op>("TanhGrad", TypeList<float, double>{});
  RegisterCpuKernelTemplate<SumToShapeOp>("SumToShape", TypeList<float, double, int32_t, int64_t>{});
  RegisterCpuKernelTemplate<ReluGradOp>("ReluGrad", TypeList<float, double>{});
  return true;
}();

}  // namespace
}  // namespace sluice
