// Viewing a tensor as [outer, n, inner] around one axis, for kernels that work along an axis
// (reductions by index, softmax, cumulative sums, top-k).
//
//   SL_ASSIGN_OR_RETURN(AxisLayout l, MakeAxisLayout(x.shape(), axis_));
//   // element (o, i, j) is at o * l.n * l.inner + i * l.inner + j
#ifndef SLUICE_KERNELS_AXIS_UTIL_H_
#define SLUICE_KERNELS_AXIS_UTIL_H_

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "framework/tensor_shape.h"

namespace sluice {

struct AxisLayout {
  int axis = 0;  // Normalized to [0, rank).
  int64_t outer = 1, n = 1, inner = 1;
};

// Negative axes count from the end; INVALID_ARGUMENT naming the axis and rank when out of range.
inline absl::StatusOr<AxisLayout> MakeAxisLayout(const TensorShape& shape, int64_t axis) {
  const int rank = shape.dims();
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " is out of range for a tensor of shape ", shape.DebugString()));
  }
  AxisLayout l;
  l.axis = static_cast<int>(axis < 0 ? axis + rank : axis);
  for (int i = 0; i < l.axis; ++i) l.outer *= shape.dim_size(i);
  l.n = shape.dim_size(l.axis);
  for (int i = l.axis + 1; i < rank; ++i) l.inner *= shape.dim_size(i);
  return l;
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_AXIS_UTIL_H_
