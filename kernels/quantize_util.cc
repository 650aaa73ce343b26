#include "kernels/quantize_util.h"

#include "absl/strings/str_cat.h"

namespace sluice {

absl::StatusOr<std::vector<int32_t>> ReadQuantized(const Tensor& t, const char* what) {
  std::vector<int32_t> out(t.NumElements());
  bool ok = false;
  VisitDataType(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr ((std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) <= 4 &&
                   !std::is_same_v<T, uint32_t>) ||
                  kIsInt4<T>) {
      const T* d = t.data<T>();
      for (int64_t i = 0; i < t.NumElements(); ++i) out[i] = static_cast<int32_t>(d[i]);
      ok = true;
    }
  });
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be int4, uint4, int8, uint8, int16, uint16 or int32, not ", DataTypeString(t.dtype())));
  }
  return out;
}

absl::StatusOr<std::vector<float>> ReadScale(const Tensor& t, const char* what) {
  std::vector<float> out(t.NumElements());
  switch (t.dtype()) {
    case DT_FLOAT:
      for (int64_t i = 0; i < t.NumElements(); ++i) out[i] = t.data<float>()[i];
      break;
    case DT_HALF:
      for (int64_t i = 0; i < t.NumElements(); ++i) out[i] = t.data<half>()[i];
      break;
    case DT_BFLOAT16:
      for (int64_t i = 0; i < t.NumElements(); ++i) out[i] = t.data<bfloat16>()[i];
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must be float, half or bfloat16, not ", DataTypeString(t.dtype())));
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
  l.mode = kAxis;
  l.axis_size = num_params;
  for (int64_t d = axis + 1; d < rank; ++d) l.inner *= shape.dim_size(d);
  return l;
}

absl::StatusOr<AxisLayout> AxisLayout::Make(const TensorShape& shape, int64_t axis, const TensorShape& params,
                                            int64_t block_size) {
  if (block_size < 0) return absl::InvalidArgumentError(absl::StrCat("block_size is ", block_size));
  if (block_size == 0) {
    if (params.dims() > 1 || params.num_elements() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "quantization parameters must be a scalar or a non-empty 1-D tensor, not ", params.DebugString()));
    }
    return Make(shape, axis, params.num_elements());
  }
  if (params.num_elements() == 1) return AxisLayout();  // One for the tensor, as in ONNX's reference.
  const int64_t rank = shape.dims();
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " is out of range for an input of shape ", shape.DebugString()));
  }
  if (axis < 0) axis += rank;
  auto mismatch = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "blocked quantization parameters of shape ", params.DebugString(), " for an input of shape ",
        shape.DebugString(), " (axis ", axis, ", block_size ", block_size,
        "): they must have the input's shape with ceil(dim / block_size) at the axis"));
  };
  if (params.dims() != rank) return mismatch();
  AxisLayout l;
  l.mode = kBlocked;
  l.axis_size = shape.dim_size(axis);
  l.block_size = block_size;
  l.blocks = l.axis_size / block_size + (l.axis_size % block_size != 0 ? 1 : 0);
  for (int64_t d = 0; d < rank; ++d) {
    if (params.dim_size(d) != (d == axis ? l.blocks : shape.dim_size(d))) return mismatch();
  }
  for (int64_t d = axis + 1; d < rank; ++d) l.inner *= shape.dim_size(d);
  return l;
}

}  // namespace sluice
