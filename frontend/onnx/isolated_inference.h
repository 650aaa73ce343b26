// ONNX's shape inference in a child process. The ONNX library trusts models in places (1.12
// reads dims past a tensor's rank for several ops: RNN, STFT, Conv...), so a crafted model can
// crash it; in a forked child the crash fails the import with a status instead of killing the
// process that imports (a server, a Python interpreter).
//
//   SL_RETURN_IF_ERROR(InferShapesIsolated(&model, "ONNX shape inference failed",
//                                          [](onnx::ModelProto& m) { onnx::shape_inference::InferShapes(m); }));
//
// What inference adds (value_info and the types of inputs and outputs, subgraphs included)
// is copied back into *model in place; the initializers are never sent back.
#ifndef SLUICE_FRONTEND_ONNX_ISOLATED_INFERENCE_H_
#define SLUICE_FRONTEND_ONNX_ISOLATED_INFERENCE_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "onnx/onnx_pb.h"

namespace sluice {

// Runs `infer` on *model in a forked child. An exception it throws becomes INVALID_ARGUMENT
// "what: its message" (as CallOnnx); a crash becomes INVALID_ARGUMENT naming the signal; a
// child that runs past `timeout` is killed (DEADLINE_EXCEEDED); one that needs more memory
// than 1 GiB plus four times the model's size fails with RESOURCE_EXHAUSTED. `infer` must only compute on
// the model (the child has one thread and exits right after).
absl::Status InferShapesIsolated(onnx::ModelProto* model, absl::string_view what,
                                 const std::function<void(onnx::ModelProto&)>& infer,
                                 absl::Duration timeout = absl::Seconds(300));

}  // namespace sluice

#endif  // SLUICE_FRONTEND_ONNX_ISOLATED_INFERENCE_H_
