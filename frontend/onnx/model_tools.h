// Everyday ONNX model utilities, in C++: what people otherwise reach for in Python's onnx
// package (onnx.checker, onnx.utils.extract_model, onnx.tools.update_model_dims,
// onnx.external_data_helper). The ONNX library throws; nothing here lets an exception out.
//
//   SL_ASSIGN_OR_RETURN(onnx::ModelProto model, LoadOnnxModel("big.onnx"));
//   SL_RETURN_IF_ERROR(CheckOnnxModel(model, /*full=*/true));
//   SL_ASSIGN_OR_RETURN(onnx::ModelProto v18, ConvertOnnxVersion(model, 18));
//   SL_ASSIGN_OR_RETURN(onnx::ModelProto head, ExtractOnnxModel(model, {"x"}, {"features"}));
//   SL_RETURN_IF_ERROR(SetOnnxDims({{"x", *ParseOnnxDims("N,3,224,224")}}, {}, &head));
//   SL_ASSIGN_OR_RETURN(ExternalizeSummary s, SaveOnnxModelExternal(head, "out/head.onnx", {}));
#ifndef SLUICE_FRONTEND_ONNX_MODEL_TOOLS_H_
#define SLUICE_FRONTEND_ONNX_MODEL_TOOLS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"

namespace sluice {

// The ONNX checker; with `full`, also strict shape inference with type checks (Python's
// check_model(model, full_check=True)). The error carries the checker's own message.
absl::Status CheckOnnxModel(const onnx::ModelProto& model, bool full = false);

// ONNX shape inference in place: fills graph value_info and output types. `strict` makes
// node-level inference errors and type mismatches errors.
absl::Status InferOnnxShapes(onnx::ModelProto* model, bool strict = false);

// The model converted to default-domain (ai.onnx) opset `opset` by ONNX's version converter,
// as Python's onnx.version_converter.convert_version; upgrades and downgrades alike. The model
// must pass the checker first. ONNX 1.17's converter knows opsets 1 to 22; ir_version is kept
// as it is. Where the converter has no adapter for a node, the error names it.
absl::StatusOr<onnx::ModelProto> ConvertOnnxVersion(onnx::ModelProto model, int opset);

// The sub-model that computes `outputs` from `inputs` (tensor names of the top-level graph),
// like onnx.utils.extract_model: the nodes on the way (in their original order), the
// initializers they read, value_info from shape inference. An output that needs a tensor
// which is neither computed inside the sub-model nor an initializer nor one of `inputs` is an
// error naming that tensor. Initializers named in `inputs` become plain inputs.
absl::StatusOr<onnx::ModelProto> ExtractOnnxModel(const onnx::ModelProto& model,
                                                  const std::vector<std::string>& inputs,
                                                  const std::vector<std::string>& outputs);

// One dimension for SetOnnxDims: fixed (value >= 0), symbolic (param), or unknown.
struct OnnxDim {
  int64_t value = -1;
  std::string param;
};
// "1,3,224,224", "N,3,H,W"; "-1" or "?" for an unknown dim; "" for a scalar.
absl::StatusOr<std::vector<OnnxDim>> ParseOnnxDims(absl::string_view spec);

// Sets the shapes of graph inputs and outputs, like onnx.tools.update_model_dims (unknown dims
// get a fresh symbolic name "<tensor>_<axis>"), then drops the now stale value_info and runs
// shape inference again; outputs not named get the inferred shape where there is one. A rank
// that differs from the model's, or a name that is not an input/output, is an error naming
// the tensor.
using OnnxDimsByName = std::vector<std::pair<std::string, std::vector<OnnxDim>>>;
absl::Status SetOnnxDims(const OnnxDimsByName& inputs, const OnnxDimsByName& outputs,
                         onnx::ModelProto* model);

struct ExternalizeOptions {
  int64_t threshold = 1024;      // Tensors with at least this many bytes of data move out.
  bool file_per_tensor = false;  // Otherwise one file, offsets aligned to kExternalAlignment.
  std::string location;          // The one file's name; default "<model file name>.data".
};
constexpr int64_t kExternalAlignment = 4096;

struct ExternalizeSummary {
  int tensors = 0;  // Moved out.
  int64_t bytes = 0;
  std::vector<std::string> files;  // Relative to the model's folder.
};

// Writes `model` to `path` with every initializer and attribute tensor (subgraphs included) of
// at least `threshold` bytes in external data files next to it, like
// onnx.external_data_helper.convert_model_to_external_data followed by save. Locations are
// relative to the model's folder; a location that is absolute, contains "..", or would be
// written through a symbolic link is refused. Typed-field tensors are stored as raw bytes.
absl::StatusOr<ExternalizeSummary> SaveOnnxModelExternal(onnx::ModelProto model, const std::string& path,
                                                         const ExternalizeOptions& options);

// Writes `model` as it is to one file (LoadOnnxModel then SaveOnnxModel internalizes a model's
// external data). Errors past protobuf's 2 GiB limit.
absl::Status SaveOnnxModel(const onnx::ModelProto& model, const std::string& path);

}  // namespace sluice

#endif  // SLUICE_FRONTEND_ONNX_MODEL_TOOLS_H_
