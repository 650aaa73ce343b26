// Reductions over a set of axes (ReduceSum, ReduceMean, ..., ReduceLogSumExp) and ArgMax/ArgMin
// along one axis.
//
// A reduction merges adjacent dims that are all reduced or all kept, then walks the input in
// memory order with an odometer over the outer dims; the innermost run is either reduced into
// one accumulator (a contiguous row) or combined element-wise into a row of accumulators, so
// both inner loops vectorize. Floating types accumulate in double, integers in 64 bits.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/axis_util.h"
#include "kernels/cwise_ops.h"

namespace sluice {
namespace {

// Reducers: Map each element, Combine into the accumulator, Finalize with the element count.
struct SumReducer {
  static constexpr bool kFloatAcc = false;
  template <typename A> static A Init() { return A(0); }
  template <typename A> static A Map(A x) { return x; }
  template <typename A> static A Combine(A acc, A x) { return Wrapping(acc, x, std::plus<>()); }
  template <typename A> static A Finalize(A acc, int64_t) { return acc; }
};
struct MeanReducer : SumReducer {
  template <typename A> static A Finalize(A acc, int64_t n) {
    if (n == 0) return A(0);
    // Integers divide in 64 bits: A(n) can truncate (256 elements are 0 as an int8).
    if constexpr (std::is_integral_v<A> && std::is_signed_v<A>) return A(static_cast<int64_t>(acc) / n);
    if constexpr (std::is_integral_v<A> && std::is_unsigned_v<A>) return A(static_cast<uint64_t>(acc) / static_cast<uint64_t>(n));
    if constexpr (!std::is_integral_v<A>) return A(acc / A(n));
  }
};
struct SumSquareReducer : SumReducer {
  template <typename A> static A Map(A x) { return Wrapping(x, x, std::multiplies<>()); }
};
struct L1Reducer : SumReducer {
  template <typename A> static A Map(A x) {
    if constexpr (std::is_unsigned_v<A>) {
      return x;
    } else {
      return x < A(0) ? WrappingNegate(x) : x;
    }
  }
};
struct L2Reducer : SumSquareReducer {
  static constexpr bool kFloatAcc = true;
  template <typename A> static A Finalize(A acc, int64_t) { return std::sqrt(acc); }
};
struct LogSumReducer : SumReducer {
  static constexpr bool kFloatAcc = true;
  template <typename A> static A Finalize(A acc, int64_t) { return std::log(acc); }
};
struct LogSumExpReducer : SumReducer {
  static constexpr bool kFloatAcc = true;
  template <typename A> static A Map(A x) { return std::exp(x); }
  template <typename A> static A Finalize(A acc, int64_t) { return std::log(acc); }
};
struct ProdReducer : SumReducer {
  template <typename A> static A Init() { return A(1); }
  template <typename A> static A Combine(A acc, A x) { return Wrapping(acc, x, std::multiplies<>()); }
};
// NaN propagates, as in numpy.
struct MaxReducer : SumReducer {
  template <typename A> static A Init() {
    return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                : std::numeric_limits<A>::lowest();
  }
  template <typename A> static A Combine(A acc, A x) {
    if constexpr (std::is_floating_point_v<A>) {
      if (std::isnan(x)) return x;
    }
    return x > acc ? x : acc;
  }
};
struct MinReducer : SumReducer {
  template <typename A> static A Init() {
    return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity()
                                                : std::numeric_limits<A>::max();
  }
  template <typename A> static A Combine(A acc, A x) {
    if constexpr (std::is_floating_point_v<A>) {
      if (std::isnan(x)) return x;
    }
    return x < acc ? x : acc;
  }
};

template <typename T, typename R>
using Accumulator = std::conditional_t<
    !std::is_integral_v<T> || R::kFloatAcc, double,
    std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

template <typename T, typename R>
class ReduceOp : public OpKernel {
 public:
  using A = Accumulator<T, R>;
  using C = typename sluice::Compute<T>::type;

  absl::Status Init(OpKernelConstruction* ctx) override {
    if (ctx->def().attr().contains("keep_dims")) {
      // TensorFlow's form (Sum, Mean, Max, ...): axes always an input, int32 or int64, a
      // scalar or a vector; no axes reduces nothing.
      SL_RETURN_IF_ERROR(ctx->GetAttr("keep_dims", &keepdims_));
      noop_ = true;
      has_axes_ = true;
      return absl::OkStatus();
    }
    DataTypeVector taxes;
    SL_RETURN_IF_ERROR(ctx->GetAttr("keepdims", &keepdims_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("noop_with_empty_axes", &noop_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Taxes", &taxes));
    if (taxes.size() > 1) return absl::InvalidArgumentError("at most one axes input");
    has_axes_ = !taxes.empty();
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const int rank = x.dims();
    std::vector<bool> reduced(rank, true);
    if (has_axes_ && ctx->input(1).NumElements() > 0) {
      const Tensor& axes = ctx->input(1);
      if (axes.dims() > 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "axes must be a 1-D tensor, got shape ", axes.shape().DebugString()));
      }
      reduced.assign(rank, false);
      std::vector<int64_t> axis_values;
      if (axes.dtype() == DT_INT32) {
        for (int32_t a : axes.flat<int32_t>()) axis_values.push_back(a);
      } else {
        for (int64_t a : axes.flat<int64_t>()) axis_values.push_back(a);
      }
      for (int64_t a : axis_values) {
        if (a < -rank || a >= rank) {
          return absl::InvalidArgumentError(absl::StrCat(
              "axis ", a, " is out of range for input of shape ", x.shape().DebugString()));
        }
        int64_t axis = a < 0 ? a + rank : a;
        if (reduced[axis]) {
          return absl::InvalidArgumentError(absl::StrCat("axis ", a, " appears twice in axes"));
        }
        reduced[axis] = true;
      }
    } else if (noop_) {
      return ctx->set_output(0, x);
    }

    TensorShape out_shape;
    for (int i = 0; i < rank; ++i) {
      if (!reduced[i]) {
        out_shape.AddDim(x.dim_size(i));
      } else if (keepdims_) {
        out_shape.AddDim(1);
      }
    }
    // Merged dims, each all-reduced or all-kept; size-1 dims move nothing and are dropped.
    DimVector dims;
    std::vector<bool> red;
    int64_t count = 1;  // Input elements per output element.
    for (int i = 0; i < rank; ++i) {
      if (reduced[i]) count *= x.dim_size(i);
      if (x.dim_size(i) == 1) continue;
      if (!dims.empty() && red.back() == reduced[i]) {
        dims.back() *= x.dim_size(i);
      } else {
        dims.push_back(x.dim_size(i));
        red.push_back(reduced[i]);
      }
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
    const int64_t out_n = out_shape.num_elements();
    std::vector<A> acc(out_n, R::template Init<A>());
    if (x.NumElements() > 0) Accumulate(ctx, x.data<T>(), dims, red, acc.data());
    T* po = out->data<T>();
    for (int64_t i = 0; i < out_n; ++i) po[i] = T(C(R::Finalize(acc[i], count)));
    return absl::OkStatus();
  }

 private:
  static A Load(T v) { return A(C(v)); }

  // Walks the input in memory order, combining into `acc`.
  void Accumulate(OpKernelContext* ctx, const T* px, const DimVector& dims,
                  const std::vector<bool>& red, A* acc) const {
    const int m = static_cast<int>(dims.size());
    if (m == 0) {
      acc[0] = R::Combine(acc[0], R::Map(Load(px[0])));
      return;
    }
    // Output strides of the merged dims (0 for reduced ones) and input strides.
    DimVector out_stride(m, 0), in_stride(m, 1);
    int64_t os = 1, is = 1;
    for (int i = m - 1; i >= 0; --i) {
      in_stride[i] = is;
      is *= dims[i];
      if (!red[i]) {
        out_stride[i] = os;
        os *= dims[i];
      }
    }
    const int64_t inner = dims[m - 1];
    const bool inner_reduced = red[m - 1];
    // Outer runs [begin, end) over dims[0..m-2], flattened.
    auto run = [&](int64_t begin, int64_t end) {
      DimVector index(m, 0);
      int64_t rest = begin, in_off = begin * inner, out_off = 0;
      for (int d = m - 2; d >= 0; --d) {
        index[d] = rest % dims[d];
        rest /= dims[d];
        out_off += index[d] * out_stride[d];
      }
      for (int64_t r = begin; r < end; ++r, in_off += inner) {
        const T* row = px + in_off;
        if (inner_reduced) {
          A a = acc[out_off];
          for (int64_t j = 0; j < inner; ++j) a = R::Combine(a, R::Map(Load(row[j])));
          acc[out_off] = a;
        } else {
          A* dst = acc + out_off;
          for (int64_t j = 0; j < inner; ++j) dst[j] = R::Combine(dst[j], R::Map(Load(row[j])));
        }
        for (int d = m - 2; d >= 0; --d) {
          ++index[d];
          out_off += out_stride[d];
          if (index[d] < dims[d]) break;
          out_off -= out_stride[d] * dims[d];
          index[d] = 0;
        }
      }
    };
    int64_t runs = 1;
    for (int d = 0; d + 1 < m; ++d) runs *= dims[d];
    // Split over the outermost dim when it is kept: its slices write disjoint outputs.
    if (m >= 2 && !red[0]) {
      const int64_t per_slice = runs / dims[0];
      ParallelForElements(ctx, dims[0], per_slice * inner * 2, [&](int64_t b, int64_t e) {
        run(b * per_slice, e * per_slice);
      });
    } else {
      run(0, runs);
    }
  }

  bool keepdims_ = true, noop_ = false, has_axes_ = false;
};

// Index of the largest (kMax) or smallest element along an axis; ties go to the first one, or
// the last with select_last_index.
template <typename T, bool kMax>
class ArgReduceOp : public OpKernel {
 public:
  using C = typename sluice::Compute<T>::type;

  absl::Status Init(OpKernelConstruction* ctx) override {
    if (ctx->def().attr().contains("output_type")) {
      // TensorFlow's ArgMax/ArgMin: the axis is input 1 (`dimension`), the axis is dropped,
      // the first extreme wins, and the output is int32 or int64.
      tf_ = true;
      keepdims_ = false;
      DataType out;
      SL_RETURN_IF_ERROR(ctx->GetAttr("output_type", &out));
      int32_output_ = out == DT_INT32;
      return absl::OkStatus();
    }
    SL_RETURN_IF_ERROR(ctx->GetAttr("axis", &axis_));
    SL_RETURN_IF_ERROR(ctx->GetAttr("keepdims", &keepdims_));
    return ctx->GetAttr("select_last_index", &select_last_);
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    int64_t axis = axis_;
    if (tf_) {
      const Tensor& d = ctx->input(1);
      if (d.NumElements() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "dimension must be a scalar, got shape ", d.shape().DebugString()));
      }
      axis = d.dtype() == DT_INT32 ? d.flat<int32_t>()[0] : d.flat<int64_t>()[0];
    }
    SL_ASSIGN_OR_RETURN(AxisLayout l, MakeAxisLayout(x.shape(), axis));
    if (l.n == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot take the arg", kMax ? "max" : "min", " of an empty axis ", l.axis,
          " of shape ", x.shape().DebugString()));
    }
    TensorShape out_shape = x.shape();
    if (keepdims_) {
      out_shape.set_dim(l.axis, 1);
    } else {
      out_shape.RemoveDim(l.axis);
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, out_shape, &out));
    const T* px = x.data<T>();
    std::vector<int64_t> wide;
    if (int32_output_) wide.resize(out->NumElements());
    int64_t* po = int32_output_ ? wide.data() : out->data<int64_t>();
    const bool last = select_last_;
    auto better = [last](C v, C best) {
      if constexpr (kMax) {
        return last ? v >= best : v > best;
      } else {
        return last ? v <= best : v < best;
      }
    };
    std::vector<C> best(l.inner);
    for (int64_t o = 0; o < l.outer; ++o) {
      const T* slab = px + o * l.n * l.inner;
      int64_t* idx = po + o * l.inner;
      for (int64_t j = 0; j < l.inner; ++j) {
        best[j] = C(slab[j]);
        idx[j] = 0;
      }
      for (int64_t i = 1; i < l.n; ++i) {
        const T* row = slab + i * l.inner;
        for (int64_t j = 0; j < l.inner; ++j) {
          C v = C(row[j]);
          if (better(v, best[j])) {
            best[j] = v;
            idx[j] = i;
          }
        }
      }
    }
    if (int32_output_) {  // Indices below the axis length, which a shape's int64 bounds.
      int32_t* p32 = out->data<int32_t>();
      for (size_t i = 0; i < wide.size(); ++i) p32[i] = static_cast<int32_t>(wide[i]);
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_ = 0;
  bool keepdims_ = true, select_last_ = false, tf_ = false, int32_output_ = false;
};

template <typename R, typename Types>
void RegisterReduce(const char* op, Types types) {
  RegisterCpuKernels(op, "T", types, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<ReduceOp<typename decltype(t)::type, R>>();
  });
}

template <bool kMax, typename Types>
void RegisterArgReduce(const char* op, Types types) {
  RegisterCpuKernels(op, "T", types, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<ArgReduceOp<typename decltype(t)::type, kMax>>();
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterReduce<SumReducer>("Onnx>ReduceSum", NumericTypes{});
  RegisterReduce<MeanReducer>("Onnx>ReduceMean", NumericTypes{});
  RegisterReduce<MaxReducer>("Onnx>ReduceMax", NumericTypes{} + TypeList<bool>{});
  RegisterReduce<MinReducer>("Onnx>ReduceMin", NumericTypes{} + TypeList<bool>{});
  RegisterReduce<ProdReducer>("Onnx>ReduceProd", NumericTypes{});
  RegisterReduce<L1Reducer>("Onnx>ReduceL1", NumericTypes{});
  RegisterReduce<L2Reducer>("Onnx>ReduceL2", NumericTypes{});
  RegisterReduce<LogSumReducer>("Onnx>ReduceLogSum", NumericTypes{});
  RegisterReduce<LogSumExpReducer>("Onnx>ReduceLogSumExp", NumericTypes{});
  RegisterReduce<SumSquareReducer>("Onnx>ReduceSumSquare", NumericTypes{});
  RegisterArgReduce<true>("Onnx>ArgMax", NumericTypes{});
  RegisterArgReduce<false>("Onnx>ArgMin", NumericTypes{});
  // TensorFlow's (ops/tf_math_ops.cc).
  RegisterReduce<SumReducer>("Sum", NumericTypes{});
  RegisterReduce<MeanReducer>("Mean", NumericTypes{});
  RegisterReduce<MaxReducer>("Max", NumericTypes{});
  RegisterReduce<MinReducer>("Min", NumericTypes{});
  RegisterReduce<ProdReducer>("Prod", NumericTypes{});
  RegisterReduce<MinReducer>("All", TypeList<bool>{});  // Over 0/1: the minimum is "all".
  RegisterReduce<MaxReducer>("Any", TypeList<bool>{});
  // TensorFlow's also take bool (false < true).
  RegisterArgReduce<true>("ArgMax", NumericTypes{} + TypeList<bool>{});
  RegisterArgReduce<false>("ArgMin", NumericTypes{} + TypeList<bool>{});
  return true;
}();

}  // namespace
}  // namespace sluice
