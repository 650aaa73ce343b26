// TF_TryEvaluateConstant: the value of a tensor whose inputs are all constants, computed at
// graph-building time (as TensorFlow's shape refiner does) by running the subgraph above it in
// a private in-process session. Anything fed (placeholders, function arguments), stateful or
// too large makes the answer "not constant" rather than an error.
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "framework/status.h"
#include "master/session.h"

namespace sluice {
namespace {

// Past these the value is not worth computing while building a graph.
constexpr size_t kMaxConstantNodes = 1000;
constexpr int64_t kMaxConstantBytes = int64_t{10} << 20;

bool CanFold(const Node& node) {
  const std::string& op = node.type_string();
  if (op == "Placeholder" || op == "PlaceholderWithDefault" || op == "_Arg" || op == "_Recv" ||
      op == "VarHandleOp" || op == "VariableV2") {
    return false;
  }
  return !node.op_def().is_stateful();
}

// The subgraph `output` depends on, as a GraphDef; false when it cannot be folded.
bool ConstantSubgraph(const TF_Graph& g, const TF_Output& output, GraphDef* def)
    ABSL_SHARED_LOCKS_REQUIRED(g.mu) {
  std::vector<const Node*> stack = {output.oper->node};
  absl::flat_hash_set<const Node*> seen = {output.oper->node};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!CanFold(*n) || seen.size() > kMaxConstantNodes) return false;
    for (const Edge* e : n->in_edges()) {
      if (seen.insert(e->src).second) stack.push_back(e->src);
    }
  }
  for (const auto& op : g.ops) {  // Graph order keeps each node after its inputs.
    if (op != nullptr && seen.contains(op->node)) *def->add_node() = op->node->def();
  }
  *def->mutable_library() = g.graph.library();
  return true;
}

absl::StatusOr<TF_Tensor*> TryEvaluate(TF_Graph* graph, TF_Output output) {
  constexpr char kFn[] = "TF_TryEvaluateConstant";
  if (graph == nullptr) return NullArgument(kFn, "graph");
  GraphDef def;
  {
    absl::ReaderMutexLock lock(&graph->mu);
    SL_RETURN_IF_ERROR(CheckOutput(*graph, output, absl::StrCat(kFn, ": output")));
    const TF_Operation& op = *output.oper;
    if (!op.output_shapes[output.index].IsFullyDefined()) return nullptr;
    if (!ConstantSubgraph(*graph, output, &def)) return nullptr;
  }
  SL_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(SessionOptions()), kFn);
  SL_RETURN_IF_ERROR(session->Create(std::move(def)), kFn);
  std::vector<Tensor> values;
  absl::Status run = session->Run({}, {OutputName(output)}, {}, &values);
  session->Close().IgnoreError();
  SL_RETURN_IF_ERROR(run, kFn, ": evaluating '", OutputName(output), "'");
  if (values.size() != 1) return absl::InternalError(absl::StrCat(kFn, ": no value"));
  if (!CanCrossCApi(values[0].dtype()) ||
      static_cast<int64_t>(values[0].TotalBytes()) > kMaxConstantBytes) {
    return nullptr;
  }
  return NewCApiTensor(std::move(values[0]));
}

}  // namespace
}  // namespace sluice

extern "C" {

unsigned char TF_TryEvaluateConstant(TF_Graph* graph, TF_Output output, TF_Tensor** result,
                                     TF_Status* status) {
  if (result != nullptr) *result = nullptr;
  auto value = sluice::TryEvaluate(graph, output);
  sluice::SetStatus(status, value.status());
  if (!value.ok() || *value == nullptr) return 0;
  if (result == nullptr) {
    TF_DeleteTensor(*value);
    sluice::SetStatus(status, sluice::NullArgument("TF_TryEvaluateConstant", "result"));
    return 0;
  }
  *result = *value;
  return 1;
}

}  // extern "C"
