// TensorFlow's StridedSlice indexing, worked out once for both the op's shape function and its
// kernel: the sparse spec (begin, end, strides and the five masks, as `x[1:, ..., tf.newaxis, 2]`
// writes them) expanded against the input's dims into one range per input dim, and the output
// shape (new axes added, shrunk axes dropped).
//
//   StridedSliceMasks masks{begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask};
//   SL_ASSIGN_OR_RETURN(StridedSlicePlan p, PlanStridedSlice(in.shape().dim_sizes(), b, e, s, masks));
//   // input dim d is read from p.begin[d] in steps of p.stride[d], p.size[d] elements;
//   // the output's shape is p.final_shape.
#ifndef SLUICE_FRAMEWORK_STRIDED_SLICE_H_
#define SLUICE_FRAMEWORK_STRIDED_SLICE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace sluice {

struct StridedSliceMasks {
  int64_t begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink_axis = 0;
};

struct StridedSlicePlan {
  // Per input dim: the first index read, the step, and how many elements (>= 0). Where size is
  // at most 1 the stride is 1, so strides times element strides cannot overflow.
  std::vector<int64_t> begin, stride, size;
  std::vector<int64_t> final_shape;
};

// `dims` are the input's dims; `begin`, `end` and `strides` must have one length, at most 64.
// INVALID_ARGUMENT (naming the problem) on a zero stride, more than one ellipsis, a spec that
// names more dims than the input has, or a shrunk index out of range.
absl::StatusOr<StridedSlicePlan> PlanStridedSlice(absl::Span<const int64_t> dims,
                                                  absl::Span<const int64_t> begin,
                                                  absl::Span<const int64_t> end,
                                                  absl::Span<const int64_t> strides,
                                                  const StridedSliceMasks& masks);

}  // namespace sluice

#endif  // SLUICE_FRAMEWORK_STRIDED_SLICE_H_
