// The two gradients of a float convolution of 1 to 3 spatial dims through oneDNN's backward
// primitives: dX from dY and W (backward data), dW from X and dY (backward weights). Tensors
// are the user's plain N,C,spatial... (W as O,I/group,spatial...); oneDNN works in the layouts
// it prefers (blocked for the JIT kernels) and the operands are reordered in and out. The
// primitives, their reorders and the blocked buffers are made once per problem and kept (a few
// per kernel), so a training step pays for arithmetic and reorders only. Safe to call from
// several threads.
//
//   DnnlConvBackward grad(DnnlConvBackward::kData);   // one per kernel
//   SL_ASSIGN_OR_RETURN(bool done, grad.Data(dy, w, geometry, group, threads, dx));
//   if (!done) { /* oneDNN does not take it: GEMM + col2im */ }
#ifndef SLUICE_KERNELS_DNNL_CONV_BACKWARD_H_
#define SLUICE_KERNELS_DNNL_CONV_BACKWARD_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/tensor.h"
#include "kernels/conv_util.h"

namespace sluice {

class DnnlConvBackward {
 public:
  enum Kind { kData, kWeights };
  explicit DnnlConvBackward(Kind kind);
  ~DnnlConvBackward();

  // dX (allocated by the caller, X's shape) = the gradient of Conv(X, W) at dY. False, nothing
  // written, when oneDNN has no primitive for it.
  absl::StatusOr<bool> Data(const Tensor& dy, const Tensor& w, const WindowGeometry& g, int64_t group,
                            int threads, Tensor* dx) const;
  // dW (W's shape) = the gradient of Conv(X, W) with respect to W at dY.
  absl::StatusOr<bool> Weights(const Tensor& x, const Tensor& dy, const WindowGeometry& g, int64_t group,
                               int threads, Tensor* dw) const;

  // oneDNN's name for each prepared primitive, most recent first, for tests and profiles.
  std::vector<std::string> ImplementationNames() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice

#endif  // SLUICE_KERNELS_DNNL_CONV_BACKWARD_H_
