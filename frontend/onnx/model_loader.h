// Loading ONNX models from disk, with tensors stored in external data files resolved relative
// to the model's folder. A location that is absolute, climbs out of that folder or is (or
// passes through) a symbolic link is refused.
//
//   SL_ASSIGN_OR_RETURN(onnx::ModelProto model, LoadOnnxModel("resnet18/model.onnx"));
#ifndef SLUICE_FRONTEND_ONNX_MODEL_LOADER_H_
#define SLUICE_FRONTEND_ONNX_MODEL_LOADER_H_

#include <string>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace sluice {

absl::StatusOr<onnx::ModelProto> LoadOnnxModel(const std::string& path);
// Parses a serialized model; external data is resolved against `base_dir` (empty: refused).
absl::StatusOr<onnx::ModelProto> ParseOnnxModel(const std::string& bytes, const std::string& base_dir);
// Reads every external tensor of `model` into raw_data.
absl::Status LoadExternalData(const std::string& base_dir, onnx::ModelProto* model);

}  // namespace sluice

#endif  // SLUICE_FRONTEND_ONNX_MODEL_LOADER_H_
