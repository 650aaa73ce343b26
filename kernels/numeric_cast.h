// Conversions of computed doubles to integers that are defined for every input: a plain cast
// of NaN or of a value outside the target's range is undefined behaviour (the fuzzers found
// such casts in OneHot and Resize).
//
//   int64_t k;
//   if (!TruncateToInt64(index, &k)) return absl::InvalidArgumentError("index out of range");
#ifndef SLUICE_KERNELS_NUMERIC_CAST_H_
#define SLUICE_KERNELS_NUMERIC_CAST_H_

#include <cstdint>
#include <type_traits>

namespace sluice {

// `v` truncated toward zero, or false when it is NaN or outside int64's range.
inline bool TruncateToInt64(double v, int64_t* out) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

// Element values to and from the double a kernel computes in: the built-in types cast
// directly, the 16- and 8-bit floats (half, bfloat16, float8) go through float.
template <typename T>
double ToDouble(T v) {
  if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<double>(v);
  } else {
    return static_cast<float>(v);
  }
}
template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<T>(v);
  } else {
    return T(static_cast<float>(v));
  }
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_NUMERIC_CAST_H_
