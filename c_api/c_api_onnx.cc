// SL_GraphImportONNX: ONNX models into a TF_Graph, through the same importer as `sluice run`.
#include <cctype>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "c_api/c_api_internal.h"
#include "c_api/sluice_c_api.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "frontend/onnx/importer.h"
#include "frontend/onnx/model_loader.h"
#include "frontend/onnx/optimized_model.h"
#include "framework/file_util.h"
#include "optimizer/meta_optimizer.h"
#include "proto/config.pb.h"

struct SL_ONNXImport {
  struct Value {
    std::string name;
    TF_Output output;
    // What the model declares for it (its ValueInfoProto), for ONNX Runtime-style metadata.
    TF_DataType dtype = static_cast<TF_DataType>(0);
    int rank = -1;                   // -1: unknown.
    std::vector<int64_t> dims;       // -1 where unknown.
    std::vector<std::string> names;  // dim_param of each dim; "" where it has none.
    std::string type;                // ONNX's spelling: "tensor(float)", "seq(tensor(int64))".
    bool has_default = false;
  };
  std::vector<Value> inputs;
  std::vector<Value> outputs;
};

namespace {

// ONNX Runtime's spelling of a value's type (NodeArg.type): "tensor(float)", "seq(...)",
// "optional(...)", "map(string,tensor(float))", "sparse_tensor(float)".
std::string OnnxTypeString(const onnx::TypeProto& t) {
  auto elem = [](int32_t e) {
    std::string n = onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(e));
    if (n.empty()) return std::string("undefined");
    if (n == "FLOAT") return std::string("float");
    if (n == "DOUBLE") return std::string("double");
    if (n == "FLOAT16") return std::string("float16");
    for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return n;  // int64, uint8, bool, string, bfloat16, complex64...
  };
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType:
      return absl::StrCat("tensor(", elem(t.tensor_type().elem_type()), ")");
    case onnx::TypeProto::kSparseTensorType:
      return absl::StrCat("sparse_tensor(", elem(t.sparse_tensor_type().elem_type()), ")");
    case onnx::TypeProto::kSequenceType:
      return absl::StrCat("seq(", OnnxTypeString(t.sequence_type().elem_type()), ")");
    case onnx::TypeProto::kOptionalType:
      return absl::StrCat("optional(", OnnxTypeString(t.optional_type().elem_type()), ")");
    case onnx::TypeProto::kMapType:
      return absl::StrCat("map(", elem(t.map_type().key_type()), ",",
                          OnnxTypeString(t.map_type().value_type()), ")");
    default:
      return "unknown";
  }
}

absl::StatusOr<SL_ONNXImport*> Import(TF_Graph* graph, const char* path, const void* buffer,
                                      size_t length, const char* prefix) {
  if (graph == nullptr) return absl::InvalidArgumentError("SL_GraphImportONNX: graph is NULL");
  sluice::OnnxGraph imported;
  if (path != nullptr) {
    SL_ASSIGN_OR_RETURN(imported, sluice::ImportOnnxFile(path));
  } else {
    if (buffer == nullptr) return absl::InvalidArgumentError("SL_GraphImportONNX: neither path nor buffer given");
    SL_ASSIGN_OR_RETURN(onnx::ModelProto model,
                        sluice::ParseOnnxModel(std::string(static_cast<const char*>(buffer), length), ""));
    SL_ASSIGN_OR_RETURN(imported, sluice::ImportOnnxModel(std::move(model)));
  }
  std::string p = prefix != nullptr ? prefix : "";
  if (!p.empty() && p.back() != '/') p += '/';
  absl::MutexLock lock(&graph->mu);
  SL_RETURN_IF_ERROR(sluice::ImportGraphDefLocked(graph, imported.graph, p));
  auto* result = new SL_ONNXImport;
  auto resolve = [&](const sluice::OnnxValue& v) -> SL_ONNXImport::Value {
    graph->mu.AssertHeld();  // Called only below, under the lock; clang's analysis needs telling.
    auto id = sluice::ParseTensorName(v.tensor);
    TF_Operation* op = graph->OperationByName(p + id->node);
    SL_ONNXImport::Value value{v.name, TF_Output{op, id->index}};
    value.dtype = static_cast<TF_DataType>(v.dtype);
    value.rank = v.shape.rank();
    if (value.rank >= 0) value.dims.assign(v.shape.dims().begin(), v.shape.dims().end());
    const bool declared = v.type.has_tensor_type() && v.type.tensor_type().has_shape() &&
                          v.type.tensor_type().shape().dim_size() == value.rank;
    for (int d = 0; d < value.rank; ++d) {
      value.names.push_back(declared ? v.type.tensor_type().shape().dim(d).dim_param() : "");
    }
    value.type = OnnxTypeString(v.type);
    value.has_default = v.has_default;
    return value;
  };
  for (const auto& v : imported.inputs) result->inputs.push_back(resolve(v));
  for (const auto& v : imported.outputs) result->outputs.push_back(resolve(v));
  return result;
}

absl::Status WriteOptimizedModel(const char* path, const void* buffer, size_t length, const void* config,
                                 size_t config_length, const char* out_path) {
  if (out_path == nullptr || *out_path == '\0') {
    return absl::InvalidArgumentError("SL_ONNXWriteOptimizedModel: no output path");
  }
  sluice::ConfigProto cfg;
  if (config != nullptr && (config_length > static_cast<size_t>(INT32_MAX) ||
                            !cfg.ParseFromArray(config, static_cast<int>(config_length)))) {
    return absl::InvalidArgumentError("SL_ONNXWriteOptimizedModel: config is not a serialized ConfigProto");
  }
  onnx::ModelProto model;
  if (path != nullptr) {
    SL_ASSIGN_OR_RETURN(model, sluice::LoadOnnxModel(path));
  } else {
    if (buffer == nullptr) return absl::InvalidArgumentError("SL_ONNXWriteOptimizedModel: neither path nor buffer given");
    SL_ASSIGN_OR_RETURN(model, sluice::ParseOnnxModel(std::string(static_cast<const char*>(buffer), length), ""));
  }
  const onnx::ModelProto header = sluice::ModelHeader(model);
  SL_ASSIGN_OR_RETURN(sluice::OnnxGraph g, sluice::ImportOnnxModel(std::move(model)));
  const sluice::OnnxGraphEnds ends = sluice::EndsOf(g);
  SL_RETURN_IF_ERROR(sluice::OptimizeGraphDef(cfg.graph_options().rewrite_options(), ends.inputs, ends.feed_shapes,
                                              ends.outputs, &g.graph)
                         .status(),
                     "optimizing the model");
  SL_ASSIGN_OR_RETURN(onnx::ModelProto wrapped, sluice::WrapOptimizedGraph(header, g));
  return sluice::WriteFileAtomically(out_path, wrapped.SerializeAsString());
}

}  // namespace

extern "C" {

SL_ONNXImport* SL_GraphImportONNX(TF_Graph* graph, const char* path, const void* buffer,
                                  size_t length, const char* prefix, TF_Status* status) {
  auto r = Import(graph, path, buffer, length, prefix);
  if (status != nullptr) status->Set(r.ok() ? absl::OkStatus() : r.status());
  return r.ok() ? *r : nullptr;
}

void SL_DeleteONNXImport(SL_ONNXImport* model) { delete model; }

void SL_ONNXWriteOptimizedModel(const char* path, const void* buffer, size_t length, const void* config,
                                size_t config_length, const char* out_path, TF_Status* status) {
  absl::Status s = WriteOptimizedModel(path, buffer, length, config, config_length, out_path);
  if (status != nullptr) status->Set(s);
}

int SL_ONNXImportNumInputs(const SL_ONNXImport* m) { return m ? static_cast<int>(m->inputs.size()) : 0; }
int SL_ONNXImportNumOutputs(const SL_ONNXImport* m) { return m ? static_cast<int>(m->outputs.size()) : 0; }

const char* SL_ONNXImportInputName(const SL_ONNXImport* m, int i) {
  return m && i >= 0 && i < static_cast<int>(m->inputs.size()) ? m->inputs[i].name.c_str() : nullptr;
}
const char* SL_ONNXImportOutputName(const SL_ONNXImport* m, int i) {
  return m && i >= 0 && i < static_cast<int>(m->outputs.size()) ? m->outputs[i].name.c_str() : nullptr;
}
TF_Output SL_ONNXImportInput(const SL_ONNXImport* m, int i) {
  return m && i >= 0 && i < static_cast<int>(m->inputs.size()) ? m->inputs[i].output : TF_Output{nullptr, -1};
}
TF_Output SL_ONNXImportOutput(const SL_ONNXImport* m, int i) {
  return m && i >= 0 && i < static_cast<int>(m->outputs.size()) ? m->outputs[i].output : TF_Output{nullptr, -1};
}

namespace {

const SL_ONNXImport::Value* Find(const SL_ONNXImport* m, int is_output, int i) {
  if (m == nullptr) return nullptr;
  const auto& values = is_output ? m->outputs : m->inputs;
  return i >= 0 && i < static_cast<int>(values.size()) ? &values[i] : nullptr;
}

}  // namespace

TF_DataType SL_ONNXImportValueType(const SL_ONNXImport* m, int is_output, int index) {
  const auto* v = Find(m, is_output, index);
  return v ? v->dtype : static_cast<TF_DataType>(0);
}
const char* SL_ONNXImportValueTypeString(const SL_ONNXImport* m, int is_output, int index) {
  const auto* v = Find(m, is_output, index);
  return v ? v->type.c_str() : nullptr;
}
int SL_ONNXImportValueNumDims(const SL_ONNXImport* m, int is_output, int index) {
  const auto* v = Find(m, is_output, index);
  return v ? v->rank : -1;
}
int64_t SL_ONNXImportValueDim(const SL_ONNXImport* m, int is_output, int index, int dim) {
  const auto* v = Find(m, is_output, index);
  return v && dim >= 0 && dim < v->rank ? v->dims[dim] : -1;
}
const char* SL_ONNXImportValueDimName(const SL_ONNXImport* m, int is_output, int index, int dim) {
  const auto* v = Find(m, is_output, index);
  return v && dim >= 0 && dim < v->rank ? v->names[dim].c_str() : nullptr;
}
unsigned char SL_ONNXImportValueHasDefault(const SL_ONNXImport* m, int is_output, int index) {
  const auto* v = Find(m, is_output, index);
  return v && v->has_default ? 1 : 0;
}

}  // extern "C"
