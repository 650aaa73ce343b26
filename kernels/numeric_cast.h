// Conversions of computed doubles to integers that are defined for every input: a plain cast
// of NaN or of a value outside the target's range is undefined behaviour (the fuzzers found
// such casts in OneHot and Resize).
//
//   int64_t k;
//   if (!TruncateToInt64(index, &k)) return absl::InvalidArgumentError("index out of range");
#ifndef SLUICE_KERNELS_NUMERIC_CAST_H_
#define SLUICE_KERNELS_NUMERIC_CAST_H_

#include <cstdint>

namespace sluice {

// `v` truncated toward zero, or false when it is NaN or outside int64's range.
inline bool TruncateToInt64(double v, int64_t* out) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_NUMERIC_CAST_H_
