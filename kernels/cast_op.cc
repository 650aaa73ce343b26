// Cast and CastLike between every numeric type, bool and string. One kernel handles all pairs:
// it picks the typed loop for (source, destination) once per run, outside the element loop.
//
// Floats become integers by truncation toward zero, saturating at the type's range (NaN gives
// 0); anything non-zero becomes true. Strings use the shortest text that reads back to the same
// value ("NaN", "INF" and "-INF" for the special values), and parse the same way.
// ONNX's newer types: 8-bit floats round to nearest even from float (`saturate` picks what
// out-of-range values become, types.h); 4-bit integers round floats to nearest even and clamp
// everything to their range (ONNX Cast-21). Both reach other types through float and int32.
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/cwise_ops.h"

namespace sluice {
namespace {

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, half> ||
                          std::is_same_v<T, bfloat16>;
template <typename T>
constexpr bool kIsCastable = kIsFloat<T> || std::is_integral_v<T> || std::is_same_v<T, tstring> ||
                             kIsFloat8<T> || kIsInt4<T>;

template <typename T>
std::string NumberToString(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else if constexpr (kIsInt4<T>) {
    return std::to_string(static_cast<int>(v));
  } else {
    using F = std::conditional_t<std::is_same_v<T, double>, double, float>;
    F f = F(v);
    if (std::isnan(f)) return "NaN";
    if (std::isinf(f)) return f > 0 ? "INF" : "-INF";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof(buf), f);
    return std::string(buf, r.ptr);
  }
}

// False when `s` is not entirely a number of the destination kind.
template <typename D>
bool ParseNumber(const std::string& s, D* out) {
  const char* begin = s.c_str();
  char* end = nullptr;
  errno = 0;
  if constexpr (std::is_same_v<D, bool>) {
    if (s == "true" || s == "True") {
      *out = true;
      return true;
    }
    if (s == "false" || s == "False") {
      *out = false;
      return true;
    }
    double v = std::strtod(begin, &end);
    *out = v != 0;
  } else if constexpr (kIsFloat<D>) {
    double v = std::strtod(begin, &end);  // Accepts "NaN", "INF", "+INF", "-inf", ...
    *out = D(static_cast<std::conditional_t<std::is_same_v<D, double>, double, float>>(v));
  } else if constexpr (std::is_signed_v<D>) {
    long long v = std::strtoll(begin, &end, 10);
    if (v < std::numeric_limits<D>::lowest() || v > std::numeric_limits<D>::max()) return false;
    *out = D(v);
  } else {
    if (s.find('-') != std::string::npos) return false;
    unsigned long long v = std::strtoull(begin, &end, 10);
    if (v > std::numeric_limits<D>::max()) return false;
    *out = D(v);
  }
  return end != begin && *end == '\0' && errno != ERANGE;
}

// Saturating float-to-integer conversion (out-of-range casts are undefined in C++).
template <typename D, typename F>
D FloatToInt(F f) {
  if (std::isnan(f)) return D(0);
  if (f <= F(std::numeric_limits<D>::lowest())) return std::numeric_limits<D>::lowest();
  if (f >= F(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
  return static_cast<D>(f);
}

// Float to a 4-bit integer: clamped, then rounded to nearest even (numpy's clip and rint,
// which ONNX's reference uses); NaN gives 0.
template <typename D, typename F>
D FloatToInt4(F f) {
  if (std::isnan(f)) return D(0);
  const F clamped = f < F(D::min()) ? F(D::min()) : (f > F(D::max()) ? F(D::max()) : f);
  return D(static_cast<int>(std::nearbyint(clamped)));
}

template <typename S, typename D>
D ConvertNumber(S s, bool saturate) {
  if constexpr (std::is_same_v<S, D>) {
    return s;
  } else if constexpr (kIsFloat8<S>) {
    return ConvertNumber<float, D>(static_cast<float>(s), saturate);
  } else if constexpr (kIsInt4<S>) {
    return ConvertNumber<int32_t, D>(static_cast<int32_t>(s), saturate);
  } else if constexpr (std::is_same_v<D, bool>) {
    using CS = typename sluice::Compute<S>::type;
    return CS(s) != CS(0);  // NaN is true, as in numpy.
  } else {
    using CS = typename sluice::Compute<S>::type;  // float for half and bfloat16.
    CS v = CS(s);
    if constexpr (kIsFloat8<D>) {
      return D::FromFloat(static_cast<float>(v), saturate);
    } else if constexpr (kIsInt4<D> && std::is_floating_point_v<CS>) {
      return FloatToInt4<D>(v);
    } else if constexpr (kIsInt4<D>) {  // From an integer or bool: clamp.
      if constexpr (std::is_signed_v<CS>) {
        const int64_t i = static_cast<int64_t>(v);
        return D(static_cast<int>(i < D::min() ? D::min() : (i > D::max() ? D::max() : i)));
      } else {
        const uint64_t u = static_cast<uint64_t>(v);
        return D(static_cast<int>(u > static_cast<uint64_t>(D::max()) ? D::max() : u));
      }
    } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<CS>) {
      return FloatToInt<D>(v);
    } else if constexpr (std::is_same_v<D, half> || std::is_same_v<D, bfloat16>) {
      return D(static_cast<float>(v));
    } else {
      return static_cast<D>(v);
    }
  }
}

template <typename S, typename D>
absl::Status CastLoop(OpKernelContext* ctx, const Tensor& in, Tensor* out, bool saturate) {
  const S* ps = in.data<S>();
  D* pd = out->data<D>();
  const int64_t n = in.NumElements();
  if constexpr (std::is_same_v<S, tstring> && std::is_same_v<D, tstring>) {
    for (int64_t i = 0; i < n; ++i) pd[i] = ps[i];
  } else if constexpr (std::is_same_v<S, tstring> && (kIsFloat8<D> || kIsInt4<D>)) {
    for (int64_t i = 0; i < n; ++i) {  // Through float, as ONNX's reference does.
      float f;
      if (!ParseNumber(ps[i], &f)) {
        return absl::InvalidArgumentError(absl::StrCat("cannot cast string \"", ps[i], "\" to ",
                                                       DataTypeString(DataTypeToEnum<D>::value)));
      }
      pd[i] = ConvertNumber<float, D>(f, saturate);
    }
  } else if constexpr (std::is_same_v<S, tstring>) {
    for (int64_t i = 0; i < n; ++i) {
      if (!ParseNumber(ps[i], &pd[i])) {
        return absl::InvalidArgumentError(absl::StrCat("cannot cast string \"", ps[i], "\" to ",
                                                       DataTypeString(DataTypeToEnum<D>::value)));
      }
    }
  } else if constexpr (std::is_same_v<D, tstring>) {
    for (int64_t i = 0; i < n; ++i) pd[i] = NumberToString(ps[i]);
  } else {
    ParallelForElements(ctx, n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) pd[i] = ConvertNumber<S, D>(ps[i], saturate);
    });
  }
  return absl::OkStatus();
}

template <typename T>
inline constexpr bool kIsComplex = std::is_same_v<T, complex64> || std::is_same_v<T, complex128>;

// Casts to and from complex numbers as TensorFlow does: a number becomes its real part (the
// imaginary part 0); a complex number becomes its real part (to bool too: 1+1i is true, 0+1i
// false, as TensorFlow.js's tests of TensorFlow's Cast expect).
template <typename S, typename D>
absl::Status CastComplex(const Tensor& in, Tensor* out, bool saturate) {
  const S* ps = in.data<S>();
  D* pd = out->data<D>();
  const int64_t n = in.NumElements();
  if constexpr (kIsComplex<S> && kIsComplex<D>) {
    for (int64_t i = 0; i < n; ++i) pd[i] = D(ps[i]);
  } else if constexpr (kIsComplex<S> && std::is_same_v<D, bool>) {
    for (int64_t i = 0; i < n; ++i) pd[i] = ps[i].real() != 0;
  } else if constexpr (kIsComplex<S> && kIsCastable<D> && !std::is_same_v<D, tstring>) {
    for (int64_t i = 0; i < n; ++i) pd[i] = ConvertNumber<typename S::value_type, D>(ps[i].real(), saturate);
  } else if constexpr (kIsComplex<D> && kIsCastable<S> && !std::is_same_v<S, tstring>) {
    using R = typename D::value_type;
    for (int64_t i = 0; i < n; ++i) pd[i] = D(ConvertNumber<S, R>(ps[i], saturate), R(0));
  } else {
    return absl::UnimplementedError(absl::StrCat("cannot cast ", DataTypeString(in.dtype()), " to ",
                                                 DataTypeString(out->dtype())));
  }
  return absl::OkStatus();
}

// Casts input 0 to the kernel's output type. `to_attr` names the attr holding that type;
// ONNX's ops also have `saturate` (TensorFlow's Cast always saturates 8-bit floats).
class CastOp : public OpKernel {
 public:
  CastOp(const char* to_attr, bool has_saturate) : to_attr_(to_attr), has_saturate_(has_saturate) {}

  absl::Status Init(OpKernelConstruction* ctx) override {
    SL_RETURN_IF_ERROR(ctx->GetAttr(to_attr_, &to_));
    if (has_saturate_) SL_RETURN_IF_ERROR(ctx->GetAttr("saturate", &saturate_));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) const override {
    const Tensor& in = ctx->input(0);
    if (in.dtype() == to_) return ctx->set_output(0, in);
    Tensor* out;
    SL_RETURN_IF_ERROR(ctx->allocate_output(0, in.shape(), &out));
    absl::Status status = absl::UnimplementedError(absl::StrCat(
        "cannot cast ", DataTypeString(in.dtype()), " to ", DataTypeString(to_)));
    VisitDataType(in.dtype(), [&](auto src) {
      using S = typename decltype(src)::type;
      VisitDataType(to_, [&](auto dst) {
        using D = typename decltype(dst)::type;
        if constexpr (kIsComplex<S> || kIsComplex<D>) {
          status = CastComplex<S, D>(in, out, saturate_);
        } else if constexpr (kIsCastable<S> && kIsCastable<D>) {
          status = CastLoop<S, D>(ctx, in, out, saturate_);
        }
      });
    });
    return status;
  }

 private:
  const char* to_attr_;
  const bool has_saturate_;
  DataType to_ = DT_INVALID;
  bool saturate_ = true;
};

[[maybe_unused]] const bool kRegistered = [] {
  KernelRegistry::Global()->Register(Name("Onnx>Cast").Device(DEVICE_CPU).Build(), "CastOp",
                                     [] { return std::make_unique<CastOp>("to", true); });
  KernelRegistry::Global()->Register(Name("Onnx>CastLike").Device(DEVICE_CPU).Build(), "CastOp",
                                     [] { return std::make_unique<CastOp>("T2", true); });
  KernelRegistry::Global()->Register(Name("Cast").Device(DEVICE_CPU).Build(), "CastOp",
                                     [] { return std::make_unique<CastOp>("DstT", false); });
  return true;
}();

}  // namespace
}  // namespace sluice
