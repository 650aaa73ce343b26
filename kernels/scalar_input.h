// A kernel's scalar input read as a value, for ops whose signature fixes the input's dtype.
//
//   SL_ASSIGN_OR_RETURN(int64_t step, ScalarInput<int64_t>(ctx, 1, "step"), "WriteScalarSummary");
#ifndef SLUICE_KERNELS_SCALAR_INPUT_H_
#define SLUICE_KERNELS_SCALAR_INPUT_H_

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "kernels/op_kernel.h"

namespace sluice {

// INVALID_ARGUMENT naming `what` when input `i` is not a scalar.
template <typename T>
absl::StatusOr<T> ScalarInput(OpKernelContext* ctx, int i, absl::string_view what) {
  const Tensor& t = ctx->input(i);
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be a scalar, got shape ", t.shape().DebugString()));
  }
  return t.flat<T>()[0];
}

}  // namespace sluice

#endif  // SLUICE_KERNELS_SCALAR_INPUT_H_
