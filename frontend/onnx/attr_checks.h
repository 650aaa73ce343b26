// Attribute checks that run before the ONNX library sees a model. Its checker and shape
// inference trust some attributes: a stride of 0 reaches an integer division and kills the
// process with SIGFPE. Every attribute the library divides by or builds sizes from is vetted
// here first, and refused with INVALID_ARGUMENT naming the node.
//
//   SL_RETURN_IF_ERROR(CheckAttrsBeforeOnnx(model));
//   onnx::shape_inference::InferShapes(model);
#ifndef SLUICE_FRONTEND_ONNX_ATTR_CHECKS_H_
#define SLUICE_FRONTEND_ONNX_ATTR_CHECKS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace sluice {

// The largest stride, dilation, kernel size or pad accepted: far above any real model, small
// enough that the library's window arithmetic ((kernel - 1) * dilation + input + pads) cannot
// overflow int64.
inline constexpr int64_t kMaxWindowAttr = int64_t{1} << 31;

// The longest shape, axes, pads or scales input accepted (one value per dim of a tensor):
// far above any real rank, small enough that the library's shapes of that rank stay small.
inline constexpr int64_t kMaxPerDimInputLength = int64_t{1} << 16;

// Checks every node of the main graph, of subgraphs in attributes and of model-local functions.
absl::Status CheckAttrsBeforeOnnx(const onnx::ModelProto& model);

}  // namespace sluice

#endif  // SLUICE_FRONTEND_ONNX_ATTR_CHECKS_H_
