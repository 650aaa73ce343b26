// Helpers of the TensorFlow-named kernels (tf_slice_ops.cc, tf_index_ops.cc, tf_nn_ops.cc,
// tf_resize_ops.cc): integer inputs of any of TensorFlow's index types, read as int64, and
// rank checks.
//
//   SL_ASSIGN_OR_RETURN(std::vector<int64_t> begin, IntValues(ctx->input(1), "Slice: begin"));
#ifndef SLUICE_KERNELS_TF_KERNEL_UTIL_H_
#define SLUICE_KERNELS_TF_KERNEL_UTIL_H_

#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/array_kernel_util.h"

namespace sluice {

// INVALID_ARGUMENT naming `what` unless `t` is 4-D (an image or a filter of TensorFlow's nn ops).
inline absl::Status CheckRank4(const Tensor& t, const char* what) {
  if (t.dims() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be 4-D, got shape ", t.shape().DebugString()));
  }
  return absl::OkStatus();
}

// The values of an int8, uint8, int16, int32 or int64 tensor, as int64.
inline absl::StatusOr<std::vector<int64_t>> IntValues(const Tensor& t, absl::string_view what) {
  std::vector<int64_t> v;
  v.reserve(t.NumElements());
  switch (t.dtype()) {
    case DT_INT8: for (int8_t x : t.flat<int8_t>()) v.push_back(x); break;
    case DT_UINT8: for (uint8_t x : t.flat<uint8_t>()) v.push_back(x); break;
    case DT_INT16: for (int16_t x : t.flat<int16_t>()) v.push_back(x); break;
    case DT_INT32: for (int32_t x : t.flat<int32_t>()) v.push_back(x); break;
    case DT_INT64: for (int64_t x : t.flat<int64_t>()) v.push_back(x); break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must be an integer tensor, got ", DataTypeString(t.dtype())));
  }
  return v;
}

// The one value of a scalar (or one-element) integer input.
inline absl::StatusOr<int64_t> IntScalar(const Tensor& t, absl::string_view what) {
  if (t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a scalar, got shape ", t.shape().DebugString()));
  }
  SL_ASSIGN_OR_RETURN(std::vector<int64_t> v, IntValues(t, what));
  return v[0];
}

// The values of a 1-D integer input of `n` entries (n < 0: any length).
inline absl::StatusOr<std::vector<int64_t>> IntVector(const Tensor& t, int64_t n, absl::string_view what) {
  if (t.dims() != 1 || (n >= 0 && t.dim_size(0) != n)) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a vector", n >= 0 ? absl::StrCat(" of ", n, " entries") : "",
                                                   ", got shape ", t.shape().DebugString()));
  }
  return IntValues(t, what);
}

// a + b: integers wrap (as TensorFlow's do), half and bfloat16 add in float.
template <typename T>
T WrappingAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else if constexpr (std::is_floating_point_v<T>) {
    return a + b;
  } else {
    return T(static_cast<float>(a) + static_cast<float>(b));
  }
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_TF_KERNEL_UTIL_H_
