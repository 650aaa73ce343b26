// Shared by the quantization kernels: rounding half to even with saturation, quantized
// tensors read as int32, and parameters given per tensor or per slice along an axis.
//
//   SL_ASSIGN_OR_RETURN(AxisLayout l, AxisLayout::Make(x.shape(), axis_, scale.NumElements()));
//   SL_ASSIGN_OR_RETURN(std::vector<int32_t> zp, ReadQuantized(zero_point, "y_zero_point"));
//   y[i] = SaturateRound<uint8_t>(x[i] / s[l.Index(i)], zp[l.Index(i)]);
#ifndef SLUICE_KERNELS_QUANTIZE_UTIL_H_
#define SLUICE_KERNELS_QUANTIZE_UTIL_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/tensor.h"

namespace sluice {

// round_half_to_even(v) + zero_point, clamped to Q's range. The rounding uses the default
// floating-point environment (to nearest, ties to even). NaN quantizes to the zero point.
template <typename Q, typename F>
Q SaturateRound(F v, int32_t zero_point) {
  F r = std::nearbyint(v);
  if (std::isnan(r)) r = 0;
  const double q = static_cast<double>(r) + zero_point;
  constexpr double lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  return static_cast<Q>(q < lo ? lo : (q > hi ? hi : q));
}

// v clamped to int32's range (ConvInteger and MatMulInteger accumulate in double).
inline int32_t SaturateInt32(double v) {
  constexpr double lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  return static_cast<int32_t>(v < lo ? lo : (v > hi ? hi : v));
}

// The values of an int8, uint8 or int32 tensor as int32; INVALID_ARGUMENT naming `what` for
// other dtypes.
absl::StatusOr<std::vector<int32_t>> ReadQuantized(const Tensor& t, const char* what);

// Where element i of a tensor finds its quantization parameter: one for the whole tensor, or
// one per index along `axis`.
struct AxisLayout {
  bool per_axis = false;
  int64_t axis_size = 1;
  int64_t inner = 1;  // Elements per step along the axis.

  // `num_params` parameters for a tensor of `shape`: 1 means per tensor, otherwise it must
  // equal shape[axis] (axis may be negative).
  static absl::StatusOr<AxisLayout> Make(const TensorShape& shape, int64_t axis, int64_t num_params);
  int64_t Index(int64_t i) const { return per_axis ? (i / inner) % axis_size : 0; }
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_QUANTIZE_UTIL_H_
