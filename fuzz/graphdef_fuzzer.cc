// Bytes -> GraphDef -> the framework's Graph (op lookup, NodeDef validation, edges, types,
// cycles) and the C API's TF_GraphImportGraphDefWithResults, with import options picked by the
// input (prefix, default device, uniquified names, input mappings and control remaps onto a
// Placeholder already in the graph, return outputs and operations named after the input's own
// nodes). A graph either fails with a message or is accepted; then every operation's attrs are
// read back through the TF_OperationGetAttr* getters, sized by TF_OperationGetAttrMetadata,
// and the graph writes back out.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "c_api/c_api.h"
#include "framework/graph.h"
#include "ops/op_registry.h"
#include "proto/graph.pb.h"

namespace {

[[noreturn]] void Fail(const char* what, const char* detail) {
  std::fprintf(stderr, "graphdef_fuzzer: %s: %s\n", what, detail);
  std::abort();
}

void CheckFrameworkImport(const sluice::GraphDef& def) {
  auto graph = sluice::Graph::FromGraphDef(def, *sluice::OpRegistry::Global());
  if (!graph.ok()) {
    if (graph.status().message().empty()) Fail("Graph::FromGraphDef", "an error without a message");
    return;
  }
  // An accepted graph has an order and writes back out as a graph that is accepted again.
  if (auto order = (*graph)->TopologicalOrder(); !order.ok()) {
    Fail("an accepted graph has no order", order.status().ToString().c_str());
  }
  sluice::GraphDef back;
  (*graph)->ToGraphDef(&back);
  auto again = sluice::Graph::FromGraphDef(back, *sluice::OpRegistry::Global());
  if (!again.ok()) Fail("the written-back graph is refused", again.status().ToString().c_str());
}

// Reads every attr of `op` with the getter its metadata names, into buffers of the sizes the
// metadata gives. Errors are fine (a list getter may refuse a kind); crashes and overruns are not.
void ReadAttrs(TF_Operation* op, TF_Status* status) {
  for (int i = 0, n = TF_OperationGetNumAttrs(op); i < n; ++i) {
    const int len = TF_OperationGetAttrNameLength(op, i);
    if (len < 0) Fail("TF_OperationGetAttrNameLength", "negative");
    std::string name(static_cast<size_t>(len) + 1, '\0');
    TF_OperationGetAttrName(op, i, name.data(), status);
    if (TF_GetCode(status) != TF_OK) continue;
    name.resize(std::strlen(name.c_str()));
    const char* attr = name.c_str();
    TF_AttrMetadata m = TF_OperationGetAttrMetadata(op, attr, status);
    if (TF_GetCode(status) != TF_OK) continue;
    const int count = m.is_list ? static_cast<int>(std::min<int64_t>(m.list_size, 1 << 16)) : 1;
    const size_t total = m.total_size > 0 ? static_cast<size_t>(std::min<int64_t>(m.total_size, 1 << 24)) : 0;
    if (m.is_list) {
      switch (m.type) {
        case TF_ATTR_STRING: {
          std::vector<void*> values(count + 1);
          std::vector<size_t> lengths(count + 1);
          std::vector<char> storage(total + 1);
          TF_OperationGetAttrStringList(op, attr, values.data(), lengths.data(), count, storage.data(),
                                        storage.size(), status);
          break;
        }
        case TF_ATTR_INT: {
          std::vector<int64_t> v(count + 1);
          TF_OperationGetAttrIntList(op, attr, v.data(), count, status);
          break;
        }
        case TF_ATTR_FLOAT: {
          std::vector<float> v(count + 1);
          TF_OperationGetAttrFloatList(op, attr, v.data(), count, status);
          break;
        }
        case TF_ATTR_BOOL: {
          std::vector<unsigned char> v(count + 1);
          TF_OperationGetAttrBoolList(op, attr, v.data(), count, status);
          break;
        }
        case TF_ATTR_TYPE: {
          std::vector<TF_DataType> v(count + 1);
          TF_OperationGetAttrTypeList(op, attr, v.data(), count, status);
          break;
        }
        case TF_ATTR_SHAPE: {
          std::vector<int64_t*> dims(count + 1);
          std::vector<int> num_dims(count + 1);
          std::vector<int64_t> storage(total + 1);
          TF_OperationGetAttrShapeList(op, attr, dims.data(), num_dims.data(), count, storage.data(),
                                       static_cast<int>(storage.size()), status);
          break;
        }
        case TF_ATTR_TENSOR: {
          std::vector<TF_Tensor*> v(count + 1, nullptr);
          TF_OperationGetAttrTensorList(op, attr, v.data(), count, status);
          if (TF_GetCode(status) == TF_OK) {
            for (int k = 0; k < count; ++k) TF_DeleteTensor(v[k]);
          }
          break;
        }
        default:
          break;
      }
    } else {
      switch (m.type) {
        case TF_ATTR_STRING: {
          std::vector<char> v(total + 1);
          TF_OperationGetAttrString(op, attr, v.data(), total, status);
          break;
        }
        case TF_ATTR_INT: {
          int64_t v;
          TF_OperationGetAttrInt(op, attr, &v, status);
          break;
        }
        case TF_ATTR_FLOAT: {
          float v;
          TF_OperationGetAttrFloat(op, attr, &v, status);
          break;
        }
        case TF_ATTR_BOOL: {
          unsigned char v;
          TF_OperationGetAttrBool(op, attr, &v, status);
          break;
        }
        case TF_ATTR_TYPE: {
          TF_DataType v;
          TF_OperationGetAttrType(op, attr, &v, status);
          break;
        }
        case TF_ATTR_SHAPE: {
          std::vector<int64_t> v(total + 1);
          TF_OperationGetAttrShape(op, attr, v.data(), static_cast<int>(total), status);
          break;
        }
        case TF_ATTR_TENSOR: {
          TF_Tensor* t = nullptr;
          TF_OperationGetAttrTensor(op, attr, &t, status);
          if (TF_GetCode(status) == TF_OK) TF_DeleteTensor(t);
          break;
        }
        default:
          break;
      }
    }
    TF_Buffer* proto = TF_NewBuffer();
    TF_OperationGetAttrValueProto(op, attr, proto, status);
    TF_DeleteBuffer(proto);
  }
}

// The options an input asks for: bits of its last byte, names from its parsed nodes.
void CheckCApiImport(const uint8_t* data, size_t size, const sluice::GraphDef* def) {
  const uint8_t bits = size > 0 ? data[size - 1] : 0;
  TF_Graph* graph = TF_NewGraph();
  TF_Status* status = TF_NewStatus();
  // A node already in the graph that mappings point at (and a name an import may collide with).
  TF_OperationDescription* desc = TF_NewOperation(graph, "Placeholder", "p");
  TF_SetAttrType(desc, "dtype", TF_FLOAT);
  TF_Operation* p = TF_FinishOperation(desc, status);
  if (TF_GetCode(status) != TF_OK) Fail("a Placeholder", TF_Message(status));

  TF_Buffer* buffer = TF_NewBufferFromString(data, size);
  TF_ImportGraphDefOptions* options = TF_NewImportGraphDefOptions();
  if (bits & 1) TF_ImportGraphDefOptionsSetPrefix(options, "imported");
  if (bits & 2) TF_ImportGraphDefOptionsSetDefaultDevice(options, "/device:CPU:0");
  if (bits & 4) TF_ImportGraphDefOptionsSetUniquifyNames(options, 1);
  if (bits & 8) TF_ImportGraphDefOptionsSetUniquifyPrefix(options, 1);
  if (def != nullptr && def->node_size() > 0) {
    const std::string first = def->node(0).name();
    const std::string last = def->node(def->node_size() - 1).name();
    if (bits & 16) TF_ImportGraphDefOptionsAddInputMapping(options, first.c_str(), bits >> 6, TF_Output{p, 0});
    if (bits & 32) TF_ImportGraphDefOptionsRemapControlDependency(options, last.c_str(), p);
    if (bits & 64) TF_ImportGraphDefOptionsAddReturnOutput(options, last.c_str(), bits & 1);
    if (bits & 128) TF_ImportGraphDefOptionsAddReturnOperation(options, first.c_str());
  }
  if ((bits & 0x30) == 0x30) TF_ImportGraphDefOptionsAddControlDependency(options, p);
  TF_ImportGraphDefResults* results = TF_GraphImportGraphDefWithResults(graph, buffer, options, status);
  if (TF_GetCode(status) == TF_OK) {
    if (results == nullptr) Fail("TF_GraphImportGraphDefWithResults", "OK without results");
    int n = 0;
    TF_Output* outputs = nullptr;
    TF_ImportGraphDefResultsReturnOutputs(results, &n, &outputs);
    for (int i = 0; i < n; ++i) {
      if (outputs[i].oper == nullptr) Fail("a return output", "NULL operation");
      TF_OperationOutputNumConsumers(outputs[i]);
    }
    TF_Operation** ops = nullptr;
    TF_ImportGraphDefResultsReturnOperations(results, &n, &ops);
    for (int i = 0; i < n; ++i) {
      if (ops[i] == nullptr) Fail("a return operation", "NULL");
    }
    const char** names = nullptr;
    int* indices = nullptr;
    TF_ImportGraphDefResultsMissingUnusedInputMappings(results, &n, &names, &indices);
    size_t pos = 0;
    while (TF_Operation* op = TF_GraphNextOperation(graph, &pos)) {
      ReadAttrs(op, status);
      TF_OperationNumControlInputs(op);
      TF_OperationNumControlOutputs(op);
    }
    TF_Buffer* out = TF_NewBuffer();
    TF_GraphToGraphDef(graph, out, status);
    if (TF_GetCode(status) != TF_OK) Fail("TF_GraphToGraphDef after an import", TF_Message(status));
    TF_DeleteBuffer(out);
  } else if (TF_Message(status)[0] == '\0') {
    Fail("TF_GraphImportGraphDefWithResults", "an error without a message");
  }
  TF_DeleteImportGraphDefResults(results);
  TF_DeleteImportGraphDefOptions(options);
  TF_DeleteBuffer(buffer);
  TF_DeleteStatus(status);
  TF_DeleteGraph(graph);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::GraphDef def;
  const bool parsed = def.ParseFromArray(data, static_cast<int>(size));
  if (parsed) CheckFrameworkImport(def);
  // The C API parses the bytes itself; its refusal of garbage is part of what is tested.
  CheckCApiImport(data, size, parsed ? &def : nullptr);
  return 0;
}
