// Element-wise kernels of two or more inputs with numpy broadcasting: arithmetic, Pow, Mod,
// BitShift, PRelu, logic and comparisons, variadic Min/Max/Sum/Mean, Where and Clip.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>

#include "kernels/cwise_ops.h"

namespace sluice {
namespace {



struct AddFn : ElementwiseFn {
  template <typename C> C operator()(C a, C b) const { return Wrapping(a, b, std::plus<>()); }
};
struct SubFn : ElementwiseFn {
  template <typename C> C operator()(C a, C b) const { return Wrapping(a, b, std::minus<>()); }
};
struct MulFn : ElementwiseFn {
  template <typename C> C operator()(C a, C b) const { return Wrapping(a, b, std::multiplies<>()); }
};

// Integer division and remainder are defined for every input, as numpy defines them (ONNX
// Runtime leaves these cases to the CPU, which traps with SIGFPE): x / 0 == 0, x % 0 == 0,
// INT_MIN / -1 wraps to INT_MIN and x % -1 == 0. The branches cost far less than the
// division itself, and no pass over the divisor is needed.

template <typename C>
C IntegerQuotient(C a, C b) {
  if (b == C(0)) return C(0);
  if constexpr (std::is_signed_v<C>) {
    using U = std::make_unsigned_t<C>;
    if (b == C(-1)) return C(U(0) - U(a));  // Negation that wraps instead of trapping.
  }
  return C(a / b);
}

template <typename C>
C IntegerRemainder(C a, C b) {
  if constexpr (std::is_signed_v<C>) {
    if (b == C(-1)) return C(0);
  }
  return b == C(0) ? C(0) : C(a % b);
}

struct DivFn : ElementwiseFn {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (kIsInteger<C>) {
      return IntegerQuotient(a, b);
    } else {
      return C(a / b);
    }
  }
};

// fmod=0: the remainder takes the divisor's sign (Python's %); fmod=1: the dividend's (C's).
struct ModFn : ElementwiseFn {
  bool fmod;
  absl::Status Init(OpKernelConstruction* ctx) { return ctx->GetAttr("fmod", &fmod); }
  template <typename C> C operator()(C a, C b) const {
    C r;
    if constexpr (std::is_floating_point_v<C>) {
      r = std::fmod(a, b);
    } else if constexpr (kIsInteger<C>) {
      r = IntegerRemainder(a, b);
    } else {
      r = C(a % b);
    }
    if constexpr (std::is_signed_v<C>) {
      if (!fmod && r != C(0) && ((r < C(0)) != (b < C(0)))) r = C(r + b);
    }
    return r;
  }
};

struct BitShiftFn : ElementwiseFn {
  bool left;
  absl::Status Init(OpKernelConstruction* ctx) {
    std::string direction;
    SL_RETURN_IF_ERROR(ctx->GetAttr("direction", &direction));
    left = direction == "LEFT";
    return absl::OkStatus();
  }
  template <typename C> C operator()(C x, C y) const {
    if (y >= C(sizeof(C) * 8)) return C(0);  // Shifting out every bit; undefined in C++.
    return left ? C(x << y) : C(x >> y);
  }
};

struct PReluFn : ElementwiseFn {
  template <typename C> C operator()(C x, C slope) const { return x < C(0) ? C(slope * x) : x; }
};

struct AndFn : ElementwiseFn {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrFn : ElementwiseFn {
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorFn : ElementwiseFn {
  bool operator()(bool a, bool b) const { return a != b; }
};
struct BitwiseAndFn : ElementwiseFn {
  template <typename C> C operator()(C a, C b) const { return C(a & b); }
};
struct BitwiseOrFn : ElementwiseFn {
  template <typename C> C operator()(C a, C b) const { return C(a | b); }
};
struct BitwiseXorFn : ElementwiseFn {
  template <typename C> C operator()(C a, C b) const { return C(a ^ b); }
};
struct EqualFn : ElementwiseFn {
  template <typename C> bool operator()(C a, C b) const { return a == b; }
};
struct Atan2Fn : ElementwiseFn {
  template <typename C> C operator()(C y, C x) const { return std::atan2(y, x); }
};
struct GreaterFn : ElementwiseFn {
  template <typename C> bool operator()(C a, C b) const { return a > b; }
};
struct LessFn : ElementwiseFn {
  template <typename C> bool operator()(C a, C b) const { return a < b; }
};
struct GreaterOrEqualFn : ElementwiseFn {
  template <typename C> bool operator()(C a, C b) const { return a >= b; }
};
struct LessOrEqualFn : ElementwiseFn {
  template <typename C> bool operator()(C a, C b) const { return a <= b; }
};

struct NotEqualFn : ElementwiseFn {
  template <typename C> bool operator()(C a, C b) const { return a != b; }
};

// TensorFlow's FloorDiv: the quotient rounded toward negative infinity (floor of a / b for
// floats); integer division by zero gives 0 as in Div.
struct FloorDivFn : ElementwiseFn {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (kIsInteger<C>) {
      C q = IntegerQuotient(a, b);
      if constexpr (std::is_signed_v<C>) {
        if (b != C(0) && IntegerRemainder(a, b) != C(0) && ((a < C(0)) != (b < C(0)))) q = C(q - 1);
      }
      return q;
    } else if constexpr (std::is_floating_point_v<C>) {
      return std::floor(a / b);
    } else {
      return C(std::floor(float(a) / float(b)));
    }
  }
};
// The remainder of FloorDiv: takes the divisor's sign.
struct FloorModFn : ElementwiseFn {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (kIsInteger<C>) {
      C r = IntegerRemainder(a, b);
      if constexpr (std::is_signed_v<C>) {
        if (r != C(0) && ((r < C(0)) != (b < C(0)))) r = C(r + b);
      }
      return r;
    } else if constexpr (std::is_floating_point_v<C>) {
      C r = std::fmod(a, b);
      if (r != C(0) && ((r < C(0)) != (b < C(0)))) r += b;
      return r;
    } else {
      float r = std::fmod(float(a), float(b));
      if (r != 0 && ((r < 0) != (float(b) < 0))) r += float(b);
      return C(r);
    }
  }
};
// TruncateMod: the remainder takes the dividend's sign (C's %).
struct TruncateModFn : ElementwiseFn {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (kIsInteger<C>) {
      return IntegerRemainder(a, b);
    } else if constexpr (std::is_floating_point_v<C>) {
      return std::fmod(a, b);
    } else {
      return C(std::fmod(float(a), float(b)));
    }
  }
};
struct SquaredDifferenceFn : ElementwiseFn {
  template <typename C> C operator()(C a, C b) const {
    C d = Wrapping(a, b, std::minus<>());
    return Wrapping(d, d, std::multiplies<>());
  }
};

// NaN wins, as in numpy's maximum and minimum.
struct MaxFn : ElementwiseFn {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(b)) return b;
    }
    return a < b ? b : a;
  }
};
struct MinFn : ElementwiseFn {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(b)) return b;
    }
    return b < a ? b : a;
  }
};

// x ** y, where y may have another type. Integer powers of integers are exact; negative ones
// truncate toward zero like the real result.
template <typename T, typename Y>
T Power(T x, Y y) {
  using C = typename sluice::Compute<T>::type;
  if constexpr (std::is_integral_v<T> && std::is_integral_v<Y>) {
    if constexpr (std::is_signed_v<Y>) {
      if (y < 0) return x == 1 ? T(1) : x == -1 ? T((y % 2 == 0) ? 1 : -1) : T(0);
    }
    T result = 1, base = x;  // Wraps on overflow, as numpy's does.
    for (uint64_t e = static_cast<uint64_t>(y); e != 0; e >>= 1) {
      if (e & 1) result = Wrapping(result, base, std::multiplies<>());
      base = Wrapping(base, base, std::multiplies<>());
    }
    return result;
  } else if constexpr (std::is_integral_v<T>) {
    const double r = std::pow(double(x), double(typename sluice::Compute<Y>::type(y)));
    // Out of T's range (or NaN) the cast would be undefined: the lowest value, as x86 gives.
    // (max + 1.0 is a power of two, exact in a double.)
    if (!(r >= static_cast<double>(std::numeric_limits<T>::min()) &&
          r < static_cast<double>(std::numeric_limits<T>::max()) + 1.0)) {
      return std::numeric_limits<T>::min();
    }
    return T(r);
  } else {
    return T(std::pow(C(x), C(typename sluice::Compute<Y>::type(y))));
  }
}

template <typename T>
class PowOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    absl::Status status = absl::InvalidArgumentError(
        absl::StrCat("Pow does not take exponents of type ", DataTypeString(y.dtype())));
    VisitDataType(y.dtype(), [&](auto tag) {
      using Y = typename decltype(tag)::type;
      if constexpr ((std::is_arithmetic_v<Y> && !std::is_same_v<Y, bool>) ||
                    std::is_same_v<Y, half> || std::is_same_v<Y, bfloat16>) {
        if constexpr (!std::is_integral_v<T>) {
          // A constant small integer exponent (x ** 2 in a spelled-out LayerNorm or a power
          // spectrum): products, which vectorize, instead of pow per element (20x slower). Each
          // is pow's value: x * x rounds the exact square once, as a correctly rounded pow does.
          if (y.NumElements() == 1) {
            using C = typename sluice::Compute<T>::type;
            const double e = static_cast<double>(typename sluice::Compute<Y>::type(y.flat<Y>()[0]));
            if (e == 2.0) {
              status = ComputeBroadcastBinary<T, Y, T>(ctx, x, y, 16, [](T a, Y) { return T(C(a) * C(a)); });
              return;
            }
            if (e == 1.0) {
              status = ComputeBroadcastBinary<T, Y, T>(ctx, x, y, 16, [](T a, Y) { return a; });
              return;
            }
            if (e == -1.0) {
              status = ComputeBroadcastBinary<T, Y, T>(ctx, x, y, 16, [](T a, Y) { return T(C(1) / C(a)); });
              return;
            }
          }
        }
        status = ComputeBroadcastBinary<T, Y, T>(ctx, x, y, 16,
                                                 [](T a, Y b) { return Power(a, b); });
      }
    });
    return status;
  }
};

// Min, Max, Sum, Mean of N broadcast inputs: one vectorizable pass per input over the output.
template <typename T, typename Fn, bool kMean = false>
class VariadicOp : public OpKernel {
 public:
  using C = typename sluice::Compute<T>::type;

  absl::Status Compute(OpKernelContext* ctx) const override {
    const int n = ctx->num_inputs();
    std::vector<TensorShape> shapes;
    for (int i = 0; i < n; ++i) shapes.push_back(ctx->input(i).shape());
    SL_ASSIGN_OR_RETURN(NaryBroadcastPlan all, MakeNaryBroadcastPlan(shapes));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, all.out_shape, &out));
    T* po = out->data<T>();
    const Fn fn;
    for (int k = 0; k < n; ++k) {
      const Tensor& in = ctx->input(k);
      const T* pi = in.data<T>();
      SL_ASSIGN_OR_RETURN(BroadcastPlan plan, MakeBroadcastPlan(all.out_shape, in.shape()));
      ForEachBroadcastRun(plan, [&](int64_t o, int64_t, int64_t io, int64_t count, int64_t,
                                    int64_t is) {
        T* dst = po + o;
        if (k == 0) {
          for (int64_t i = 0; i < count; ++i) dst[i] = pi[io + i * is];
        } else {
          for (int64_t i = 0; i < count; ++i) dst[i] = T(fn(C(dst[i]), C(pi[io + i * is])));
        }
      });
    }
    if constexpr (kMean) {
      const C scale = C(1) / C(n);
      for (int64_t i = 0, e = out->NumElements(); i < e; ++i) po[i] = T(C(po[i]) * scale);
    }
    return absl::OkStatus();
  }
};

template <typename T>
class WhereOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& cond = ctx->input(0);
    const Tensor& x = ctx->input(1);
    const Tensor& y = ctx->input(2);
    SL_ASSIGN_OR_RETURN(NaryBroadcastPlan plan,
                        MakeNaryBroadcastPlan({cond.shape(), x.shape(), y.shape()}));
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, plan.out_shape, &out));
    const bool* pc = cond.data<bool>();
    const T* px = x.data<T>();
    const T* py = y.data<T>();
    T* po = out->data<T>();
    ForEachNaryRun(plan, [&](int64_t o, const int64_t* off, int64_t count, const int64_t* step) {
      for (int64_t i = 0; i < count; ++i) {
        po[o + i] = pc[off[0] + i * step[0]] ? px[off[1] + i * step[1]] : py[off[2] + i * step[2]];
      }
    });
    return absl::OkStatus();
  }
};

// TensorFlow's Select: no broadcasting; `condition` has t's shape (element by element), is a
// scalar (all of t or all of e), or is a vector over t's first dim (whole rows).
template <typename T>
class SelectOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& cond = ctx->input(0);
    const Tensor& t = ctx->input(1);
    const Tensor& e = ctx->input(2);
    if (t.shape() != e.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("'then' and 'else' must have the same size.  but received: ",
                                                     t.shape().DebugString(), " vs. ", e.shape().DebugString()));
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, t.shape(), &out));
    const bool* pc = cond.data<bool>();
    const T* pt = t.data<T>();
    const T* pe = e.data<T>();
    T* po = out->data<T>();
    const int64_t n = t.NumElements();
    if (cond.shape().dims() == 0) {
      std::copy(pc[0] ? pt : pe, (pc[0] ? pt : pe) + n, po);
    } else if (cond.shape() == t.shape()) {
      for (int64_t i = 0; i < n; ++i) po[i] = pc[i] ? pt[i] : pe[i];
    } else if (cond.shape().dims() == 1 && t.shape().dims() >= 1 && cond.shape().dim_size(0) == t.shape().dim_size(0)) {
      const int64_t rows = cond.shape().dim_size(0);
      const int64_t row = rows == 0 ? 0 : n / rows;
      for (int64_t r = 0; r < rows; ++r) {
        const T* from = (pc[r] ? pt : pe) + r * row;
        std::copy(from, from + row, po + r * row);
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat("condition ", cond.shape().DebugString(),
                                                     " must be a scalar, a vector of size t's first dim, or t's shape ",
                                                     t.shape().DebugString()));
    }
    return absl::OkStatus();
  }
};

// min(max(x, lo), hi); an absent bound is the type's extreme.
template <typename T>
class ClipOp : public OpKernel {
 public:
  using C = typename sluice::Compute<T>::type;

  absl::Status Init(OpKernelConstruction* ctx) override {
    DataTypeVector tmin, tmax;
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tmin", &tmin));
    SL_RETURN_IF_ERROR(ctx->GetAttr("Tmax", &tmax));
    if (tmin.size() > 1 || tmax.size() > 1) {
      return absl::InvalidArgumentError("Clip takes at most one min and one max");
    }
    for (DataType dt : {tmin.empty() ? DataTypeToEnum<T>::value : tmin[0],
                        tmax.empty() ? DataTypeToEnum<T>::value : tmax[0]}) {
      if (dt != DataTypeToEnum<T>::value) {
        return absl::InvalidArgumentError(absl::StrCat("Clip bounds must have the input's type ",
                                                       DataTypeString(DataTypeToEnum<T>::value),
                                                       ", got ", DataTypeString(dt)));
      }
    }
    has_min_ = !tmin.empty();
    has_max_ = !tmax.empty();
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& x = ctx->input(0);
    C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
    if constexpr (std::is_floating_point_v<C>) {
      lo = -std::numeric_limits<C>::infinity();
      hi = std::numeric_limits<C>::infinity();
    }
    int next = 1;
    for (auto [present, bound, name] : {std::make_tuple(has_min_, &lo, "min"),
                                        std::make_tuple(has_max_, &hi, "max")}) {
      if (!present) continue;
      const Tensor& t = ctx->input(next++);
      if (t.NumElements() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Clip ", name, " must be a scalar, got shape ", t.shape().DebugString()));
      }
      *bound = C(t.data<T>()[0]);
    }
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->forward_input_or_allocate_output(0, 0, x.shape(), &out));
    const T* px = x.data<T>();
    T* po = out->data<T>();
    ParallelForElements(ctx, x.NumElements(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) po[i] = T(std::min(std::max(C(px[i]), lo), hi));
    });
    return absl::OkStatus();
  }

 private:
  bool has_min_ = false, has_max_ = false;
};

template <typename Fn, typename Types>
void RegisterBinary(const char* op, Types types) {
  RegisterCpuKernels(op, "T", types, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<BinaryOp<typename decltype(t)::type, Fn>>();
  });
}

template <typename Fn, bool kMean = false, typename Types>
void RegisterVariadic(const char* op, Types types) {
  RegisterCpuKernels(op, "T", types, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<VariadicOp<typename decltype(t)::type, Fn, kMean>>();
  });
}

template <template <typename> class Kernel, typename Types>
void RegisterTyped(const char* op, Types types) {
  RegisterCpuKernels(op, "T", types, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<Kernel<typename decltype(t)::type>>();
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  // TensorFlow's arithmetic also takes complex numbers (ONNX graphs never carry them).
  using ArithmeticTypes = decltype(NumericTypes{} + TypeList<complex64, complex128>{});
  for (const char* add : {"Add", "AddV2"}) RegisterBinary<AddFn>(add, ArithmeticTypes{});
  RegisterBinary<SubFn>("Sub", ArithmeticTypes{});
  RegisterBinary<MulFn>("Mul", ArithmeticTypes{});
  RegisterBinary<DivFn>("Div", ArithmeticTypes{});
  RegisterBinary<ModFn>("Onnx>Mod", NumericTypes{});
  RegisterBinary<BitShiftFn>("Onnx>BitShift", UnsignedIntTypes{});
  RegisterBinary<PReluFn>("Onnx>PRelu", FloatTypes{} + TypeList<int32_t, int64_t, uint32_t, uint64_t>{});
  RegisterBinary<AndFn>("Onnx>And", TypeList<bool>{});
  RegisterBinary<OrFn>("Onnx>Or", TypeList<bool>{});
  RegisterBinary<XorFn>("Onnx>Xor", TypeList<bool>{});
  RegisterBinary<BitwiseAndFn>("Onnx>BitwiseAnd", IntTypes{});
  RegisterBinary<BitwiseOrFn>("Onnx>BitwiseOr", IntTypes{});
  RegisterBinary<BitwiseXorFn>("Onnx>BitwiseXor", IntTypes{});
  RegisterBinary<EqualFn>("Onnx>Equal", NumericTypes{} + TypeList<bool, tstring>{});
  RegisterBinary<GreaterFn>("Onnx>Greater", NumericTypes{});
  RegisterBinary<LessFn>("Onnx>Less", NumericTypes{});
  RegisterBinary<GreaterOrEqualFn>("Onnx>GreaterOrEqual", NumericTypes{});
  RegisterBinary<LessOrEqualFn>("Onnx>LessOrEqual", NumericTypes{});
  RegisterVariadic<MaxFn>("Onnx>Max", NumericTypes{});
  RegisterVariadic<MinFn>("Onnx>Min", NumericTypes{});
  RegisterVariadic<AddFn>("Onnx>Sum", FloatTypes{});
  RegisterVariadic<AddFn, true>("Onnx>Mean", FloatTypes{});
  RegisterTyped<PowOp>("Pow", FloatTypes{} + TypeList<int32_t, int64_t>{});
  RegisterTyped<WhereOp>("Onnx>Where", NumericTypes{} + TypeList<bool, tstring>{});
  RegisterTyped<ClipOp>("Onnx>Clip", NumericTypes{});
  // TensorFlow's ops (ops/tf_math_ops.cc).
  RegisterBinary<DivFn>("RealDiv", NumericTypes{});
  RegisterBinary<DivFn>("TruncateDiv", NumericTypes{});
  RegisterBinary<FloorDivFn>("FloorDiv", NumericTypes{});
  RegisterBinary<FloorModFn>("FloorMod", NumericTypes{});
  RegisterBinary<TruncateModFn>("TruncateMod", NumericTypes{});
  RegisterBinary<MaxFn>("Maximum", NumericTypes{});
  RegisterBinary<MinFn>("Minimum", NumericTypes{});
  RegisterBinary<SquaredDifferenceFn>("SquaredDifference", NumericTypes{});
  RegisterBinary<EqualFn>("Equal", NumericTypes{} + TypeList<bool, tstring>{});
  RegisterBinary<NotEqualFn>("NotEqual", NumericTypes{} + TypeList<bool, tstring>{});
  RegisterBinary<Atan2Fn>("Atan2", FloatTypes{});
  RegisterTyped<SelectOp>("Select", NumericTypes{} + TypeList<bool, tstring, complex64, complex128>{});
  RegisterBinary<LessFn>("Less", NumericTypes{});
  RegisterBinary<LessOrEqualFn>("LessEqual", NumericTypes{});
  RegisterBinary<GreaterFn>("Greater", NumericTypes{});
  RegisterBinary<GreaterOrEqualFn>("GreaterEqual", NumericTypes{});
  RegisterTyped<WhereOp>("SelectV2", NumericTypes{} + TypeList<bool, tstring>{});
  // LogicalAnd and LogicalOr take bools and have no type attr to constrain.
  KernelRegistry::Global()->Register(Name("LogicalAnd").Device(DEVICE_CPU).Build(), "BinaryOp",
                                     [] { return std::make_unique<BinaryOp<bool, AndFn>>(); });
  KernelRegistry::Global()->Register(Name("LogicalOr").Device(DEVICE_CPU).Build(), "BinaryOp",
                                     [] { return std::make_unique<BinaryOp<bool, OrFn>>(); });
  return true;
}();

}  // namespace
}  // namespace sluice
