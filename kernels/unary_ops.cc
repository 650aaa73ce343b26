// Element-wise unary kernels: math functions, activations, IsNaN/IsInf and Not. Each op is a
// functor run by UnaryOp (cwise_ops.h); half and bfloat16 compute in float.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "kernels/cwise_ops.h"
#include "kernels/fast_math.h"

namespace sluice {
namespace {

// Transcendental functions cost more than an add; they split work over threads sooner.
struct TranscendentalFn : ElementwiseFn {
  static constexpr int64_t kCost = 16;
};

struct AbsFn : ElementwiseFn {
  template <typename C> C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else {
      return x < C(0) ? WrappingNegate(x) : x;
    }
  }
};
struct NegFn : ElementwiseFn {
  template <typename C> C operator()(C x) const { return WrappingNegate(x); }
};
struct SignFn : ElementwiseFn {
  template <typename C> C operator()(C x) const {
    if (x > C(0)) return C(1);
    if (x < C(0)) return C(-1);
    return x;  // 0, and NaN stays NaN.
  }
};
struct ReciprocalFn : ElementwiseFn {
  template <typename C> C operator()(C x) const { return C(1) / x; }
};
struct CeilFn : ElementwiseFn {
  template <typename C> C operator()(C x) const { return std::ceil(x); }
};
struct FloorFn : ElementwiseFn {
  template <typename C> C operator()(C x) const { return std::floor(x); }
};
struct RoundFn : ElementwiseFn {  // Halves to even, as numpy; integers are already round.
  template <typename C> C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return x;
    } else {
      return std::nearbyint(x);
    }
  }
};
struct SqrtFn : TranscendentalFn {
  template <typename C> C operator()(C x) const { return std::sqrt(x); }
};

// Functions from <cmath>, one functor each.
#define SL_CMATH_FN(NAME, FN)                                                  \
  struct NAME : TranscendentalFn {                                             \
    template <typename C> auto operator()(C x) const { return std::FN(x); }    \
  }
SL_CMATH_FN(LogFn, log);
SL_CMATH_FN(Log1pFn, log1p);
SL_CMATH_FN(Expm1Fn, expm1);
SL_CMATH_FN(SinFn, sin);
SL_CMATH_FN(CosFn, cos);
SL_CMATH_FN(TanFn, tan);
SL_CMATH_FN(AsinFn, asin);
SL_CMATH_FN(AcosFn, acos);
SL_CMATH_FN(AtanFn, atan);
SL_CMATH_FN(SinhFn, sinh);
SL_CMATH_FN(CoshFn, cosh);
SL_CMATH_FN(AsinhFn, asinh);
SL_CMATH_FN(AcoshFn, acosh);
SL_CMATH_FN(AtanhFn, atanh);
#undef SL_CMATH_FN
struct ErfFn : TranscendentalFn {  // Float through FastErf (GELU's erf; within 4e-7).
  static constexpr bool kHasFloatArray = true;
  static void FloatArray(const float* x, float* y, int64_t n) { ErfArray(x, y, n); }
  template <typename C> auto operator()(C x) const { return std::erf(x); }
};

// The same, with fast_math's vectorized loops doing float (see float_eltwise.h).
#define SL_CMATH_VECTOR_FN(NAME, FN, ALGO)                                       \
  struct NAME : TranscendentalFn {                                             \
    static constexpr EltwiseAlgo kVectorized = EltwiseAlgo::ALGO;                    \
    template <typename C> auto operator()(C x) const { return std::FN(x); }    \
  }
SL_CMATH_VECTOR_FN(ExpFn, exp, kExp);
SL_CMATH_VECTOR_FN(TanhFn, tanh, kTanh);
#undef SL_CMATH_VECTOR_FN

struct SigmoidFn : TranscendentalFn {
  static constexpr EltwiseAlgo kVectorized = EltwiseAlgo::kSigmoid;
  template <typename C> C operator()(C x) const {
    if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
    C e = std::exp(x);  // Avoids exp overflow for large negative x.
    return e / (C(1) + e);
  }
};
struct SoftplusFn : TranscendentalFn {  // log(1 + e^x), without overflow.
  template <typename C> C operator()(C x) const {
    return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
};
struct SoftsignFn : ElementwiseFn {
  template <typename C> C operator()(C x) const { return x / (C(1) + std::abs(x)); }
};
struct HardSwishFn : ElementwiseFn {  // x * HardSigmoid(x) with alpha 1/6, beta 0.5.
  template <typename C> C operator()(C x) const {
    return x * std::max(C(0), std::min(C(1), x / C(6) + C(0.5)));
  }
};
struct ReluFn : ElementwiseFn {  // NaN stays NaN, as max(x, 0) in numpy and TensorFlow.
  template <typename C> C operator()(C x) const { return x < C(0) ? C(0) : x; }
};

struct LeakyReluFn : ElementwiseFn {
  float alpha;
  absl::Status Init(OpKernelConstruction* ctx) { return ctx->GetAttr("alpha", &alpha); }
  template <typename C> C operator()(C x) const { return x < C(0) ? C(alpha) * x : x; }
};
struct ThresholdedReluFn : ElementwiseFn {
  float alpha;
  absl::Status Init(OpKernelConstruction* ctx) { return ctx->GetAttr("alpha", &alpha); }
  template <typename C> C operator()(C x) const { return x > C(alpha) ? x : C(0); }
};
struct EluFn : TranscendentalFn {
  float alpha;
  absl::Status Init(OpKernelConstruction* ctx) { return ctx->GetAttr("alpha", &alpha); }
  template <typename C> C operator()(C x) const { return x < C(0) ? C(alpha) * std::expm1(x) : x; }
};
struct CeluFn : TranscendentalFn {
  float alpha;
  absl::Status Init(OpKernelConstruction* ctx) {
    SL_RETURN_IF_ERROR(ctx->GetAttr("alpha", &alpha));
    if (alpha == 0) return absl::InvalidArgumentError("Celu alpha must not be 0");
    return absl::OkStatus();
  }
  template <typename C> C operator()(C x) const {
    return x > C(0) ? x : C(alpha) * std::expm1(x / C(alpha));
  }
};
struct SeluFn : TranscendentalFn {
  float alpha, gamma;
  absl::Status Init(OpKernelConstruction* ctx) {
    SL_RETURN_IF_ERROR(ctx->GetAttr("alpha", &alpha));
    return ctx->GetAttr("gamma", &gamma);
  }
  template <typename C> C operator()(C x) const {
    return x > C(0) ? C(gamma) * x : C(gamma) * C(alpha) * std::expm1(x);
  }
};
struct HardSigmoidFn : ElementwiseFn {
  float alpha, beta;
  absl::Status Init(OpKernelConstruction* ctx) {
    SL_RETURN_IF_ERROR(ctx->GetAttr("alpha", &alpha));
    return ctx->GetAttr("beta", &beta);
  }
  template <typename C> C operator()(C x) const {
    return std::max(C(0), std::min(C(1), C(alpha) * x + C(beta)));
  }
};
// x * Phi(x), Phi the standard normal CDF; approximate 'tanh' is the usual tanh fit of it.
struct GeluFn : TranscendentalFn {  // Float through FastGelu and FastGeluTanh (vectorized).
  bool tanh_fit = false;
  absl::Status Init(OpKernelConstruction* ctx) {
    std::string approximate;
    SL_RETURN_IF_ERROR(ctx->GetAttr("approximate", &approximate));
    tanh_fit = approximate == "tanh";
    return absl::OkStatus();
  }
  static constexpr bool kHasFloatArray = true;
  void FloatArray(const float* x, float* y, int64_t n) const {
    if (tanh_fit) {
      GeluTanhArray(x, y, n);
    } else {
      GeluArray(x, y, n);
    }
  }
  template <typename C> C operator()(C x) const {
    if (tanh_fit) {
      const C k = C(0.79788456080286535588);  // sqrt(2 / pi)
      return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
    }
    return C(0.5) * x * (C(1) + std::erf(x * C(0.70710678118654752440)));
  }
};
// Integers go through double: lambd and bias are floats.
struct ShrinkFn : ElementwiseFn {
  float bias, lambd;
  absl::Status Init(OpKernelConstruction* ctx) {
    SL_RETURN_IF_ERROR(ctx->GetAttr("bias", &bias));
    return ctx->GetAttr("lambd", &lambd);
  }
  template <typename C> auto operator()(C x) const {
    using D = std::conditional_t<std::is_floating_point_v<C>, C, double>;
    D v = D(x);
    if (v < -D(lambd)) return D(v + D(bias));
    if (v > D(lambd)) return D(v - D(bias));
    return D(0);
  }
};

struct IsNaNFn : ElementwiseFn {
  template <typename C> bool operator()(C x) const { return std::isnan(x); }
};
struct IsInfFn : ElementwiseFn {
  bool detect_negative, detect_positive;
  absl::Status Init(OpKernelConstruction* ctx) {
    SL_RETURN_IF_ERROR(ctx->GetAttr("detect_negative", &detect_negative));
    return ctx->GetAttr("detect_positive", &detect_positive);
  }
  template <typename C> bool operator()(C x) const {
    return std::isinf(x) && (x > C(0) ? detect_positive : detect_negative);
  }
};
struct NotFn : ElementwiseFn {
  bool operator()(bool x) const { return !x; }
};
struct BitwiseNotFn : ElementwiseFn {
  template <typename C> C operator()(C x) const { return C(~x); }
};

// TensorFlow's forms: fixed constants where ONNX has attrs.
struct SquareFn : ElementwiseFn {
  template <typename C> C operator()(C x) const { return Wrapping(x, x, std::multiplies<>()); }
};
struct RsqrtFn : TranscendentalFn {
  template <typename C> C operator()(C x) const { return C(1) / std::sqrt(x); }
};
struct Relu6Fn : ElementwiseFn {
  template <typename C> C operator()(C x) const { return std::min(std::max(x, C(0)), C(6)); }
};
struct TfEluFn : TranscendentalFn {
  template <typename C> C operator()(C x) const { return x < C(0) ? C(std::expm1(x)) : x; }
};
struct TfSeluFn : TranscendentalFn {  // The constants of Klambauer et al., as TensorFlow fixes them.
  template <typename C> C operator()(C x) const {
    constexpr double kAlpha = 1.6732632423543772848170429916717;
    constexpr double kScale = 1.0507009873554804934193349852946;
    return x > C(0) ? C(kScale * x) : C(kScale * kAlpha * std::expm1(x));
  }
};
struct IsFiniteFn : ElementwiseFn {
  template <typename C> bool operator()(C x) const { return std::isfinite(x); }
};

template <typename Fn, typename Types>
void RegisterUnary(const char* op, Types types, const char* type_attr = "T") {
  RegisterCpuKernels(op, type_attr, types, [](auto t) -> std::unique_ptr<OpKernel> {
    return std::make_unique<UnaryOp<typename decltype(t)::type, Fn>>();
  });
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterUnary<AbsFn>("Abs", NumericTypes{});
  RegisterUnary<NegFn>("Neg", SignedTypes{});
  RegisterUnary<SignFn>("Sign", NumericTypes{});
  RegisterUnary<ReciprocalFn>("Reciprocal", FloatTypes{});
  RegisterUnary<CeilFn>("Ceil", FloatTypes{});
  RegisterUnary<FloorFn>("Floor", FloatTypes{});
  RegisterUnary<RoundFn>("Round", SignedTypes{});
  RegisterUnary<SqrtFn>("Sqrt", FloatTypes{});
  RegisterUnary<ExpFn>("Exp", FloatTypes{});
  RegisterUnary<LogFn>("Log", FloatTypes{});
  RegisterUnary<SinFn>("Sin", FloatTypes{});
  RegisterUnary<CosFn>("Cos", FloatTypes{});
  RegisterUnary<TanFn>("Tan", FloatTypes{});
  RegisterUnary<AsinFn>("Asin", FloatTypes{});
  RegisterUnary<AcosFn>("Acos", FloatTypes{});
  RegisterUnary<AtanFn>("Atan", FloatTypes{});
  RegisterUnary<SinhFn>("Sinh", FloatTypes{});
  RegisterUnary<CoshFn>("Cosh", FloatTypes{});
  RegisterUnary<AsinhFn>("Asinh", FloatTypes{});
  RegisterUnary<AcoshFn>("Acosh", FloatTypes{});
  RegisterUnary<AtanhFn>("Atanh", FloatTypes{});
  RegisterUnary<ErfFn>("Erf", NumericTypes{});
  RegisterUnary<TanhFn>("Tanh", FloatTypes{});
  RegisterUnary<SigmoidFn>("Sigmoid", FloatTypes{});
  RegisterUnary<SoftplusFn>("Softplus", FloatTypes{});
  RegisterUnary<SoftsignFn>("Softsign", FloatTypes{});
  RegisterUnary<HardSwishFn>("Onnx>HardSwish", FloatTypes{});
  RegisterUnary<ReluFn>("Relu", SignedTypes{});
  RegisterUnary<LeakyReluFn>("Onnx>LeakyRelu", FloatTypes{});
  RegisterUnary<ThresholdedReluFn>("Onnx>ThresholdedRelu", FloatTypes{});
  RegisterUnary<EluFn>("Onnx>Elu", FloatTypes{});
  RegisterUnary<CeluFn>("Onnx>Celu", FloatTypes{});
  RegisterUnary<SeluFn>("Onnx>Selu", FloatTypes{});
  RegisterUnary<HardSigmoidFn>("Onnx>HardSigmoid", FloatTypes{});
  RegisterUnary<GeluFn>("Onnx>Gelu", FloatTypes{});
  RegisterUnary<ShrinkFn>("Onnx>Shrink", NumericTypes{});
  // IsNaN-20 and IsInf-20 added the 8-bit floats.
  using Float8Types = TypeList<float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz>;
  RegisterUnary<IsNaNFn>("Onnx>IsNaN", FloatTypes{} + Float8Types{}, "T1");
  RegisterUnary<IsInfFn>("Onnx>IsInf", FloatTypes{} + Float8Types{}, "T1");
  RegisterUnary<NotFn>("Onnx>Not", TypeList<bool>{});
  RegisterUnary<BitwiseNotFn>("Onnx>BitwiseNot", IntTypes{});
  // TensorFlow's ops (ops/tf_math_ops.cc).
  KernelRegistry::Global()->Register(Name("LogicalNot").Device(DEVICE_CPU).Build(), "UnaryOp",
                                     [] { return std::make_unique<UnaryOp<bool, NotFn>>(); });
  RegisterUnary<SquareFn>("Square", NumericTypes{});
  RegisterUnary<Log1pFn>("Log1p", FloatTypes{});
  RegisterUnary<Expm1Fn>("Expm1", FloatTypes{});
  RegisterUnary<RsqrtFn>("Rsqrt", FloatTypes{});
  RegisterUnary<Relu6Fn>("Relu6", SignedTypes{});
  RegisterUnary<TfEluFn>("Elu", FloatTypes{});
  RegisterUnary<TfSeluFn>("Selu", FloatTypes{});
  RegisterUnary<LeakyReluFn>("LeakyRelu", FloatTypes{});
  RegisterUnary<IsNaNFn>("IsNan", FloatTypes{});
  RegisterUnary<IsFiniteFn>("IsFinite", FloatTypes{});
  return true;
}();

}  // namespace
}  // namespace sluice
