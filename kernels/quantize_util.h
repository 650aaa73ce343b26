// Shared by the quantization kernels: rounding half to even with saturation, quantized
// tensors read as int32, and parameters given per tensor, per slice along an axis, or per
// block of slices along it.
//
//   SL_ASSIGN_OR_RETURN(AxisLayout l, AxisLayout::Make(x.shape(), axis_, scale.shape(), block_size_));
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

// round_half_to_even(v) + zero_point, clamped to [lo, hi]. The rounding uses the default
// floating-point environment (to nearest, ties to even). NaN quantizes to the zero point.
template <typename F>
double SaturateRoundToRange(F v, int32_t zero_point, double lo, double hi) {
  F r = std::nearbyint(v);
  if (std::isnan(r)) r = 0;
  const double q = static_cast<double>(r) + zero_point;
  return q < lo ? lo : (q > hi ? hi : q);
}

// The same, clamped to Q's range: an integer type or int4/uint4 (types.h).
template <typename Q, typename F>
Q SaturateRound(F v, int32_t zero_point) {
  if constexpr (kIsInt4<Q>) {
    return Q(static_cast<int>(SaturateRoundToRange(v, zero_point, Q::min(), Q::max())));
  } else {
    return static_cast<Q>(SaturateRoundToRange(v, zero_point, std::numeric_limits<Q>::min(),
                                               std::numeric_limits<Q>::max()));
  }
}

// v clamped to int32's range (ConvInteger and MatMulInteger accumulate in double).
inline int32_t SaturateInt32(double v) {
  constexpr double lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  return static_cast<int32_t>(v < lo ? lo : (v > hi ? hi : v));
}

// The values of an 8-, 16- or 32-bit or 4-bit integer tensor as int32; INVALID_ARGUMENT
// naming `what` for other dtypes.
absl::StatusOr<std::vector<int32_t>> ReadQuantized(const Tensor& t, const char* what);

// The values of a float, half or bfloat16 tensor (a scale) as floats; INVALID_ARGUMENT naming
// `what` for other dtypes.
absl::StatusOr<std::vector<float>> ReadScale(const Tensor& t, const char* what);

// Where element i of a tensor finds its quantization parameter: one for the whole tensor, one
// per index along `axis`, or (block_size > 0) one per block of block_size indices along
// `axis` and per index along every other dim, the parameters shaped like the tensor with
// ceil(dim / block_size) at `axis`.
struct AxisLayout {
  enum Mode { kTensor, kAxis, kBlocked } mode = kTensor;
  int64_t axis_size = 1;
  int64_t inner = 1;  // Elements per step along the axis.
  int64_t block_size = 1;
  int64_t blocks = 1;  // Parameters along the axis (blocked).

  // `num_params` parameters for a tensor of `shape`: 1 means per tensor, otherwise it must
  // equal shape[axis] (axis may be negative).
  static absl::StatusOr<AxisLayout> Make(const TensorShape& shape, int64_t axis, int64_t num_params);
  // Parameters of shape `params`: per tensor or per axis as above (a scalar or 1-D tensor)
  // when block_size is 0, blocked when it is positive.
  static absl::StatusOr<AxisLayout> Make(const TensorShape& shape, int64_t axis, const TensorShape& params,
                                         int64_t block_size);
  int64_t Index(int64_t i) const {
    switch (mode) {
      case kTensor: return 0;
      case kAxis: return (i / inner) % axis_size;
      case kBlocked: return ((i / (inner * axis_size)) * blocks + (i / inner) % axis_size / block_size) * inner + i % inner;
    }
    return 0;
  }
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_QUANTIZE_UTIL_H_
