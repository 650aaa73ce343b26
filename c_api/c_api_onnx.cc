// SL_GraphImportONNX: ONNX models into a TF_Graph, through the same importer as `sluice run`.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "c_api/c_api_internal.h"
#include "c_api/sluice_c_api.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "frontend/onnx/importer.h"
#include "frontend/onnx/model_loader.h"

struct SL_ONNXImport {
  struct Value {
    std::string name;
    TF_Output output;
  };
  std::vector<Value> inputs;
  std::vector<Value> outputs;
};

namespace {

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
    return {v.name, TF_Output{op, id->index}};
  };
  for (const auto& v : imported.inputs) result->inputs.push_back(resolve(v));
  for (const auto& v : imported.outputs) result->outputs.push_back(resolve(v));
  return result;
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

}  // extern "C"
