#include "kernels/op_kernel.h"

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"

namespace sluice {

absl::Status AsyncOpKernel::Compute(OpKernelContext* ctx) const {
  absl::Notification n;
  absl::Status status;
  ComputeAsync(ctx, [&](absl::Status s) {
    status = std::move(s);
    n.Notify();
  });
  n.WaitForNotification();
  return status;
}

absl::Status OpKernelContext::allocate_output(int i, const TensorShape& shape, Tensor** out) {
  SL_ASSIGN_OR_RETURN(outputs_[i], Tensor::Allocate(expected_output_dtype(i), shape));
  *out = &outputs_[i];
  return absl::OkStatus();
}

absl::Status OpKernelContext::set_output(int i, const Tensor& tensor) {
  if (tensor.dtype() != expected_output_dtype(i)) {
    return absl::InternalError(absl::StrCat("output ", i, " has dtype ",
                                            DataTypeString(tensor.dtype()), ", declared ",
                                            DataTypeString(expected_output_dtype(i))));
  }
  outputs_[i] = tensor;
  return absl::OkStatus();
}

absl::Status OpKernelContext::forward_input_or_allocate_output(int input_index, int output_index,
                                                               const TensorShape& shape,
                                                               Tensor** out) {
  const Tensor& in = params_.inputs[input_index];
  // The executor holds one reference in the input slot; one reference means only us.
  if (in.RefCountIsOne() && in.dtype() == expected_output_dtype(output_index) &&
      in.NumElements() == shape.num_elements() && in.dtype() != DT_STRING) {
    outputs_[output_index] = Tensor(in.dtype(), shape, in.buffer());
    *out = &outputs_[output_index];
    return absl::OkStatus();
  }
  return allocate_output(output_index, shape, out);
}

}  // namespace sluice
