// Bytes -> GraphDef -> the framework's Graph (op lookup, NodeDef validation, edges, types,
// cycles) and the C API's TF_GraphImportGraphDef. A graph either fails with a message or is
// accepted and then writes back out.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

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

void CheckCApiImport(const uint8_t* data, size_t size, bool prefixed) {
  TF_Graph* graph = TF_NewGraph();
  TF_Status* status = TF_NewStatus();
  TF_Buffer* buffer = TF_NewBufferFromString(data, size);
  TF_ImportGraphDefOptions* options = TF_NewImportGraphDefOptions();
  if (prefixed) TF_ImportGraphDefOptionsSetPrefix(options, "imported");
  TF_GraphImportGraphDef(graph, buffer, options, status);
  if (TF_GetCode(status) == TF_OK) {
    TF_Buffer* out = TF_NewBuffer();
    TF_GraphToGraphDef(graph, out, status);
    if (TF_GetCode(status) != TF_OK) Fail("TF_GraphToGraphDef after an import", TF_Message(status));
    TF_DeleteBuffer(out);
  } else if (TF_Message(status)[0] == '\0') {
    Fail("TF_GraphImportGraphDef", "an error without a message");
  }
  TF_DeleteImportGraphDefOptions(options);
  TF_DeleteBuffer(buffer);
  TF_DeleteStatus(status);
  TF_DeleteGraph(graph);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sluice::GraphDef def;
  if (def.ParseFromArray(data, static_cast<int>(size))) CheckFrameworkImport(def);
  // The C API parses the bytes itself; its refusal of garbage is part of what is tested.
  CheckCApiImport(data, size, size % 2 == 1);
  return 0;
}
