// Element-wise kernels: numpy broadcasting, and templates that turn a functor into a kernel.
//
//   struct AddFn : ElementwiseFn {
//     template <typename C> C operator()(C a, C b) const { return a + b; }
//   };
//   RegisterCpuKernels("Add", "T", NumericTypes{}, [](auto t) {
//     return std::make_unique<BinaryOp<typename decltype(t)::type, AddFn>>();
//   });
//
// A functor whose operator() returns bool makes a kernel with a bool output (comparisons,
// IsNaN); otherwise the output has the input's type. Functors with attrs parse them in Init.
#ifndef SLUICE_KERNELS_CWISE_OPS_H_
#define SLUICE_KERNELS_CWISE_OPS_H_

#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/float_eltwise.h"
#include "kernels/op_kernel.h"
#include "kernels/parallel_for.h"
#include "kernels/typed_registration.h"

namespace sluice {

template <typename C>
constexpr bool kIsInteger = std::is_integral_v<C> && !std::is_same_v<C, bool>;

// Integer sums, differences and products wrap around, as numpy's do: computed in 64-bit
// unsigned arithmetic, where wrapping is defined, and truncated (signed overflow, and the int
// promotion of 16-bit unsigned products, are undefined behaviour in C++).
template <typename C, typename Op>
C Wrapping(C a, C b, Op op) {
  if constexpr (kIsInteger<C>) {
    return static_cast<C>(op(static_cast<uint64_t>(a), static_cast<uint64_t>(b)));
  } else {
    return C(op(a, b));
  }
}

// -x, wrapping for integers as numpy does: -INT64_MIN is INT64_MIN.
template <typename C>
C WrappingNegate(C x) {
  if constexpr (kIsInteger<C>) {
    return static_cast<C>(uint64_t{0} - static_cast<uint64_t>(x));
  } else {
    return C(-x);
  }
}

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

// Number of innermost runs ForEachBroadcastRun makes (the product of the outer dims).
int64_t NumBroadcastRuns(const BroadcastPlan& plan);

// Calls fn(out_offset, a_offset, b_offset, count, a_step, b_step) for each contiguous innermost
// run of the plan whose index is in [first_run, end_run) (steps are 0 or 1).
template <typename Fn>
void ForEachBroadcastRun(const BroadcastPlan& plan, int64_t first_run, int64_t end_run, Fn&& fn) {
  if (first_run >= end_run) return;
  const int rank = static_cast<int>(plan.dims.size());
  if (rank == 0) {
    if (first_run == 0) {
      fn(int64_t{0}, int64_t{0}, int64_t{0}, int64_t{1}, int64_t{0}, int64_t{0});
    }
    return;
  }
  const int64_t inner = plan.dims[rank - 1];
  const int64_t a_step = plan.a_strides[rank - 1], b_step = plan.b_strides[rank - 1];
  DimVector index(rank, 0);
  int64_t a_off = 0, b_off = 0;
  int64_t rest = first_run;
  for (int d = rank - 2; d >= 0; --d) {  // Decompose first_run over the outer dims.
    index[d] = rest % plan.dims[d];
    rest /= plan.dims[d];
    a_off += index[d] * plan.a_strides[d];
    b_off += index[d] * plan.b_strides[d];
  }
  for (int64_t o = first_run; o < end_run; ++o) {
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

template <typename Fn>
void ForEachBroadcastRun(const BroadcastPlan& plan, Fn&& fn) {
  ForEachBroadcastRun(plan, 0, NumBroadcastRuns(plan), std::forward<Fn>(fn));
}

// Broadcasting of any number of inputs (Where, variadic Min/Max).
struct NaryBroadcastPlan {
  TensorShape out_shape;
  DimVector dims;                  // Merged output dims, outermost first.
  std::vector<DimVector> strides;  // Per input, per merged dim; 0 where it repeats.
};
absl::StatusOr<NaryBroadcastPlan> MakeNaryBroadcastPlan(const std::vector<TensorShape>& shapes);

// Calls fn(out_offset, offsets, count, steps) for each innermost run; `offsets` and `steps`
// hold one entry per input.
template <typename Fn>
void ForEachNaryRun(const NaryBroadcastPlan& plan, Fn&& fn) {
  const int rank = static_cast<int>(plan.dims.size());
  const size_t n_in = plan.strides.size();
  DimVector offsets(n_in, 0), steps(n_in, 0);
  if (rank == 0) {
    fn(int64_t{0}, offsets.data(), int64_t{1}, steps.data());
    return;
  }
  for (size_t k = 0; k < n_in; ++k) steps[k] = plan.strides[k][rank - 1];
  const int64_t inner = plan.dims[rank - 1];
  int64_t outer = 1;
  for (int i = 0; i < rank - 1; ++i) outer *= plan.dims[i];
  DimVector index(rank, 0);
  for (int64_t o = 0; o < outer; ++o) {
    fn(o * inner, offsets.data(), inner, steps.data());
    for (int d = rank - 2; d >= 0; --d) {
      ++index[d];
      for (size_t k = 0; k < n_in; ++k) offsets[k] += plan.strides[k][d];
      if (index[d] < plan.dims[d]) break;
      for (size_t k = 0; k < n_in; ++k) offsets[k] -= plan.strides[k][d] * plan.dims[d];
      index[d] = 0;
    }
  }
}

// Arithmetic on half and bfloat16 goes through float.
template <typename T> struct Compute { using type = T; };
template <> struct Compute<half> { using type = float; };
template <> struct Compute<bfloat16> { using type = float; };
template <Float8Format F> struct Compute<float8<F>> { using type = float; };

// Base of element-wise functors: Init parses attrs once; Check<T> vets the second operand
// before computing (integer division by zero).
struct ElementwiseFn {
  absl::Status Init(OpKernelConstruction*) { return absl::OkStatus(); }
  template <typename T>
  absl::Status Check(const Tensor&) const { return absl::OkStatus(); }
  // Rough cost of one element relative to an add, for splitting work.
  static constexpr int64_t kCost = 1;
  // A vectorized float form of the function (float_eltwise.h), if it has one.
  static constexpr EltwiseAlgo kVectorized = EltwiseAlgo::kNone;
  // Else a vectorized float array form of Sluice's own (fast_math.h), if it has one (a member
  // when it depends on attrs).
  static constexpr bool kHasFloatArray = false;
  static void FloatArray(const float*, float*, int64_t) {}
};

template <typename T, typename R>
using ElementOutput = std::conditional_t<std::is_same_v<R, bool>, bool, T>;

template <typename T, typename Fn>
class UnaryOp : public OpKernel {
 public:
  using C = typename sluice::Compute<T>::type;
  using Out = ElementOutput<T, decltype(std::declval<const Fn&>()(std::declval<C>()))>;

  absl::Status Init(OpKernelConstruction* ctx) override { return fn_.Init(ctx); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    Tensor* out;
    if constexpr (std::is_same_v<Out, T>) {
      SL_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output(0, 0, x.shape(), &out));
    } else {
      SL_RETURN_IF_ERROR(ctx->allocate_output(0, x.shape(), &out));
    }
    const T* px = x.data<T>();
    Out* po = out->data<Out>();
    const Fn& fn = fn_;
    ParallelForElements(ctx, x.NumElements(), Fn::kCost, [&](int64_t begin, int64_t end) {
      if constexpr (std::is_same_v<T, float> && std::is_same_v<Out, float> &&
                    Fn::kVectorized != EltwiseAlgo::kNone) {
        if (FloatEltwise(Fn::kVectorized, px + begin, po + begin, end - begin)) return;
      }
      if constexpr (std::is_same_v<T, float> && std::is_same_v<Out, float> && Fn::kHasFloatArray) {
        fn.FloatArray(px + begin, po + begin, end - begin);
        return;
      }
      for (int64_t i = begin; i < end; ++i) po[i] = Out(fn(C(px[i])));
    });
    return absl::OkStatus();
  }

 private:
  Fn fn_;
};

// Runs out[i] = f(a[..], b[..]) over the numpy broadcast of a and b (raw element types A and
// B). The output takes the buffer of an operand of its shape and type when nothing else holds
// it (x * y, x * scalar, a bias added to activations): each output element is written after
// the one element of that operand it reads, at the same offset.
template <typename A, typename B, typename Out, typename F>
absl::Status ComputeBroadcastBinary(OpKernelContext* ctx, const Tensor& a, const Tensor& b,
                                    int64_t cost, const F& f) {
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  Tensor* out;
  auto allocate = [&](const TensorShape& shape) {
    if (std::is_same_v<Out, A> && a.shape() == shape) return ctx->forward_input_or_allocate_output(0, 0, shape, &out);
    if (std::is_same_v<Out, B> && b.shape() == shape) return ctx->forward_input_or_allocate_output(1, 0, shape, &out);
    return ctx->allocate_output(0, shape, &out);
  };
  if (a.shape() == b.shape()) {
    SL_RETURN_IF_ERROR(allocate(a.shape()));
    Out* po = out->data<Out>();
    ParallelForElements(ctx, a.NumElements(), cost, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) po[i] = f(pa[i], pb[i]);
    });
    return absl::OkStatus();
  }
  SL_ASSIGN_OR_RETURN(BroadcastPlan plan, MakeBroadcastPlan(a.shape(), b.shape()));
  SL_RETURN_IF_ERROR(allocate(plan.out_shape));
  Out* po = out->data<Out>();
  auto run = [&](int64_t o, int64_t ao, int64_t bo, int64_t n, int64_t as, int64_t bs) {
    if (as == 1 && bs == 1) {
      for (int64_t i = 0; i < n; ++i) po[o + i] = f(pa[ao + i], pb[bo + i]);
    } else if (as == 1) {
      const B y = pb[bo];
      for (int64_t i = 0; i < n; ++i) po[o + i] = f(pa[ao + i], y);
    } else if (bs == 1) {
      const A x = pa[ao];
      for (int64_t i = 0; i < n; ++i) po[o + i] = f(x, pb[bo + i]);
    } else {
      const Out v = f(pa[ao], pb[bo]);
      for (int64_t i = 0; i < n; ++i) po[o + i] = v;
    }
  };
  const int64_t runs = NumBroadcastRuns(plan);
  const int64_t per_run = runs > 0 ? plan.out_shape.num_elements() / runs : 0;
  ParallelForElements(ctx, runs, cost * std::max<int64_t>(per_run, 1),
                      [&](int64_t begin, int64_t end) { ForEachBroadcastRun(plan, begin, end, run); });
  return absl::OkStatus();
}

template <typename T, typename Fn>
class BinaryOp : public OpKernel {
 public:
  using C = typename sluice::Compute<T>::type;
  using Out = ElementOutput<T, decltype(std::declval<const Fn&>()(std::declval<C>(), std::declval<C>()))>;

  absl::Status Init(OpKernelConstruction* ctx) override { return fn_.Init(ctx); }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Fn& fn = fn_;
    SL_RETURN_IF_ERROR(fn.template Check<T>(ctx->input(1)));
    return ComputeBroadcastBinary<T, T, Out>(ctx, ctx->input(0), ctx->input(1), Fn::kCost,
                                             [&fn](T x, T y) { return Out(fn(C(x), C(y))); });
  }

 private:
  Fn fn_;
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_CWISE_OPS_H_
