// Element-wise kernels: numpy broadcasting for binary ops, and templates that turn a
// functor into a kernel.
//
//   struct AddFn { template <typename T> T operator()(T a, T b) const { return a + b; } };
//   REGISTER_KERNEL_BUILDER(Name("Add").Device(DEVICE_CPU).TypeConstraint<float>("T"),
//                           BinaryOp<float, AddFn>);
#ifndef SLUICE_KERNELS_CWISE_OPS_H_
#define SLUICE_KERNELS_CWISE_OPS_H_

#include "absl/strings/str_cat.h"
#include "kernels/op_kernel.h"

namespace sluice {

// How to walk two broadcast inputs: the output shape, and dims merged where both inputs
// broadcast the same way, each with per-input strides (0 where that input repeats).
struct BroadcastPlan {
  TensorShape out_shape;
  DimVector dims;        // Merged output dims, outermost first.
  DimVector a_strides;   // Elements; 0 where a is broadcast.
  DimVector b_strides;
};

// INVALID_ARGUMENT when a dim differs and neither side is 1.
absl::StatusOr<BroadcastPlan> MakeBroadcastPlan(const TensorShape& a, const TensorShape& b);

// Calls fn(out_offset, a_offset, b_offset, count, a_step, b_step) for each contiguous innermost
// run of the plan (steps are 0 or 1).
template <typename Fn>
void ForEachBroadcastRun(const BroadcastPlan& plan, Fn&& fn) {
  const int rank = static_cast<int>(plan.dims.size());
  if (rank == 0) {
    fn(int64_t{0}, int64_t{0}, int64_t{0}, int64_t{1}, int64_t{0}, int64_t{0});
    return;
  }
  const int64_t inner = plan.dims[rank - 1];
  const int64_t a_step = plan.a_strides[rank - 1], b_step = plan.b_strides[rank - 1];
  int64_t outer = 1;
  for (int i = 0; i < rank - 1; ++i) outer *= plan.dims[i];
  DimVector index(rank, 0);
  int64_t a_off = 0, b_off = 0;
  for (int64_t o = 0; o < outer; ++o) {
    fn(o * inner, a_off, b_off, inner, a_step, b_step);
    for (int d = rank - 2; d >= 0; --d) {  // Odometer increment over the outer dims.
      ++index[d];
      a_off += plan.a_strides[d];
      b_off += plan.b_strides[d];
      if (index[d] < plan.dims[d]) break;
      a_off -= plan.a_strides[d] * plan.dims[d];
      b_off -= plan.b_strides[d] * plan.dims[d];
      index[d] = 0;
    }
  }
}

// Arithmetic on half and bfloat16 goes through float.
template <typename T> struct Compute { using type = T; };
template <> struct Compute<half> { using type = float; };
template <> struct Compute<bfloat16> { using type = float; };

template <typename T, typename Fn>
class BinaryOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    using C = typename sluice::Compute<T>::type;
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    SL_RETURN_IF_ERROR(Fn::template Check<T>(b));
    Fn fn;
    if (a.shape() == b.shape()) {
      Tensor* out;
      SL_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output(0, 0, a.shape(), &out));
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* po = out->data<T>();
      auto run = [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) po[i] = T(fn(C(pa[i]), C(pb[i])));
      };
      if (a.NumElements() >= kParallelThreshold && ctx->device() != nullptr) {
        ctx->device()->compute_pool()->ParallelFor(a.NumElements(), kParallelThreshold / 4, run);
      } else {
        run(0, a.NumElements());
      }
      return absl::OkStatus();
    }
    SL_ASSIGN_OR_RETURN(BroadcastPlan plan, MakeBroadcastPlan(a.shape(), b.shape()));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, plan.out_shape, &out));
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out->data<T>();
    ForEachBroadcastRun(plan, [&](int64_t o, int64_t ao, int64_t bo, int64_t n, int64_t as,
                                  int64_t bs) {
      for (int64_t i = 0; i < n; ++i) po[o + i] = T(fn(C(pa[ao + i * as]), C(pb[bo + i * bs])));
    });
    return absl::OkStatus();
  }

 private:
  static constexpr int64_t kParallelThreshold = 1 << 16;
};

template <typename T, typename Fn>
class UnaryOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    using C = typename sluice::Compute<T>::type;
    const Tensor& x = ctx->input(0);
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output(0, 0, x.shape(), &out));
    const T* px = x.data<T>();
    T* po = out->data<T>();
    Fn fn;
    for (int64_t i = 0, n = x.NumElements(); i < n; ++i) po[i] = T(fn(C(px[i])));
    return absl::OkStatus();
  }
};

// Functors. Check<T>(rhs) lets an op reject inputs before computing (integer division by 0).
struct NoCheck {
  template <typename T>
  static absl::Status Check(const Tensor&) { return absl::OkStatus(); }
};
struct AddFn : NoCheck {
  template <typename C> C operator()(C a, C b) const { return a + b; }
};
struct SubFn : NoCheck {
  template <typename C> C operator()(C a, C b) const { return a - b; }
};
struct MulFn : NoCheck {
  template <typename C> C operator()(C a, C b) const { return a * b; }
};
struct DivFn {
  template <typename T>
  static absl::Status Check(const Tensor& divisor) {
    if constexpr (std::is_integral_v<T>) {
      for (T v : divisor.flat<T>()) {
        if (v == 0) return absl::InvalidArgumentError("Integer division by zero");
      }
    }
    return absl::OkStatus();
  }
  template <typename C> C operator()(C a, C b) const { return a / b; }
};
struct ReluFn {
  template <typename C> C operator()(C x) const { return x > C(0) ? x : C(0); }
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_CWISE_OPS_H_
