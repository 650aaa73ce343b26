#include "kernels/quantize_util.h"

#include "absl/strings/str_cat.h"

namespace sluice {

absl::StatusOr<std::vector<int32_t>> ReadQuantized(const Tensor& t, const char* what) {
  std::vector<int32_t> out(t.NumElements());
  switch (t.dtype()) {
    case DT_INT8:
      for (int64_t i = 0; i < t.NumElements(); ++i) out[i] = t.data<int8_t>()[i];
      break;
    case DT_UINT8:
      for (int64_t i = 0; i < t.NumElements(); ++i) out[i] = t.data<uint8_t>()[i];
      break;
    case DT_INT32:
      for (int64_t i = 0; i < t.NumElements(); ++i) out[i] = t.data<int32_t>()[i];
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must be int8, uint8 or int32, not ", DataTypeString(t.dtype())));
  }
  return out;
}

absl::StatusOr<AxisLayout> AxisLayout::Make(const TensorShape& shape, int64_t axis, int64_t num_params) {
  AxisLayout l;
  if (num_params == 1) return l;
  const int64_t rank = shape.dims();
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " is out of range for an input of shape ", shape.DebugString()));
  }
  if (axis < 0) axis += rank;
  if (shape.dim_size(axis) != num_params) {
    return absl::InvalidArgumentError(absl::StrCat(num_params, " quantization parameters for axis ", axis,
                                                   " of an input of shape ", shape.DebugString()));
  }
  l.per_axis = true;
  l.axis_size = num_params;
  for (int64_t d = axis + 1; d < rank; ++d) l.inner *= shape.dim_size(d);
  return l;
}

}  // namespace sluice
