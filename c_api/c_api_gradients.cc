// TF_AddGradients: symbolic gradients of TF_Graph operations, through Sluice's gradient
// registry (frontend/gradients), the one the ONNX Gradient operator uses. The backward nodes
// are built as a GraphDef under a fresh name scope ("gradients", "gradients_1", ... or the
// caller's prefix) and imported into the graph with the forward tensors they read mapped onto
// the graph's own outputs, so they pass the same checks as any other import.
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "frontend/gradients/gradients.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

// Adds backward nodes to a GraphDef of new nodes named under `scope`.
class GraphDefGradientBuilder : public GradientBuilder {
 public:
  GraphDefGradientBuilder(const GraphDef& forward, std::string scope) : scope_(std::move(scope)) {
    for (const NodeDef& n : forward.node()) forward_[n.name()] = &n;
  }

  absl::StatusOr<std::vector<std::string>> Add(absl::string_view op, std::vector<std::vector<std::string>> args,
                                               AttrMap attrs) override {
    SL_ASSIGN_OR_RETURN(const OpRegistrationData* reg, OpRegistry::Global()->LookUp(op));
    NodeDef node;
    // Node names take no '>': "Onnx>Shape" names its node "Shape_3".
    absl::string_view base = op;
    if (size_t at = base.rfind('>'); at != absl::string_view::npos) base.remove_prefix(at + 1);
    node.set_name(absl::StrCat(scope_, "/", base, "_", counter_++));
    node.set_op(std::string(op));
    *node.mutable_attr() = std::move(attrs);
    SL_ASSIGN_OR_RETURN(DataTypeVector out,
                        AddInputsAndComplete(reg->op_def, args, [&](const std::string& t) { return Dtype(t); }, &node));
    std::vector<std::string> outputs;
    for (int k = 0; k < static_cast<int>(out.size()); ++k) {
      std::string t = TensorId{node.name(), k}.ToString();
      dtypes_[t] = out[k];
      outputs.push_back(std::move(t));
    }
    *def_.add_node() = std::move(node);
    return outputs;
  }

  DataType Dtype(const std::string& tensor) const override {
    auto id = ParseTensorName(tensor);
    if (!id.ok()) return DT_INVALID;
    const std::string key = TensorId{id->node, id->index}.ToString();
    if (auto it = dtypes_.find(key); it != dtypes_.end()) return it->second;
    auto f = forward_.find(id->node);
    if (f == forward_.end()) return DT_INVALID;
    auto reg = OpRegistry::Global()->LookUp(f->second->op());
    if (!reg.ok()) return DT_INVALID;
    DataTypeVector in, out;
    if (!InOutTypesForNode(*f->second, (*reg)->op_def, &in, &out).ok() || id->index < 0 ||
        id->index >= static_cast<int>(out.size())) {
      return DT_INVALID;
    }
    return out[id->index];
  }

  const GraphDef& def() const { return def_; }

 private:
  std::string scope_;
  absl::flat_hash_map<std::string, const NodeDef*> forward_;
  absl::flat_hash_map<std::string, DataType> dtypes_;
  GraphDef def_;
  int counter_ = 0;
};

// True when a node of `graph` is named `scope` or lies under "scope/".
bool ScopeInUse(const TF_Graph& graph, absl::string_view scope) ABSL_SHARED_LOCKS_REQUIRED(graph.mu) {
  for (const auto& op : graph.ops) {
    if (op == nullptr || op->node == nullptr) continue;
    const std::string& name = op->node->name();
    if (name == scope || absl::StartsWith(name, absl::StrCat(scope, "/"))) return true;
  }
  return false;
}

absl::Status AddGradients(TF_Graph* g, const char* prefix, TF_Output* y, int ny, TF_Output* x, int nx,
                          TF_Output* dx, TF_Output* dy) {
  if (g == nullptr) return NullArgument("TF_AddGradients", "graph");
  if (ny < 1 || y == nullptr) return absl::InvalidArgumentError("TF_AddGradients: at least one y is needed");
  if (nx < 0 || (nx > 0 && (x == nullptr || dy == nullptr))) {
    return absl::InvalidArgumentError("TF_AddGradients: x and dy must hold nx outputs");
  }
  absl::MutexLock lock(&g->mu);
  std::vector<std::string> ys, seeds, xs;
  for (int i = 0; i < ny; ++i) {
    SL_RETURN_IF_ERROR(CheckOutput(*g, y[i], absl::StrCat("y[", i, "]")));
    ys.push_back(OutputName(y[i]));
    if (dx != nullptr) {
      SL_RETURN_IF_ERROR(CheckOutput(*g, dx[i], absl::StrCat("dx[", i, "]")));
      seeds.push_back(OutputName(dx[i]));
    }
  }
  for (int i = 0; i < nx; ++i) {
    SL_RETURN_IF_ERROR(CheckOutput(*g, x[i], absl::StrCat("x[", i, "]")));
    xs.push_back(OutputName(x[i]));
  }
  std::string scope;
  if (prefix == nullptr || prefix[0] == '\0') {
    scope = "gradients";
    for (int k = 1; ScopeInUse(*g, scope); ++k) scope = absl::StrCat("gradients_", k);
  } else {
    scope = prefix;
    if (ScopeInUse(*g, scope)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TF_AddGradientsWithPrefix: prefix '", scope, "' is already used by an operation of the graph"));
    }
  }
  GraphDef forward;
  g->graph.ToGraphDef(&forward);
  GraphDefGradientBuilder builder(forward, scope);
  SL_ASSIGN_OR_RETURN(std::vector<std::string> grads, SymbolicGradients(&builder, forward, ys, seeds, xs, {}, {}),
                      "TF_AddGradients");
  // Forward tensors the new nodes read come from the graph's operations.
  TF_ImportGraphDefOptions options;
  absl::flat_hash_set<std::string> mapped;
  for (const NodeDef& n : builder.def().node()) {
    for (const std::string& input : n.input()) {
      SL_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(input));
      if (absl::StartsWith(id.node, absl::StrCat(scope, "/")) || mapped.contains(input)) continue;
      TF_Operation* op = g->OperationByName(id.node);
      if (op == nullptr) return absl::InternalError(absl::StrCat("gradient reads unknown tensor '", input, "'"));
      mapped.insert(input);
      options.input_map.push_back({id, TF_Output{op, id.index}});
    }
  }
  SL_RETURN_IF_ERROR(ImportGraphDefLocked(g, builder.def(), options, nullptr), "TF_AddGradients");
  for (int i = 0; i < nx; ++i) {
    SL_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(grads[i]));
    TF_Operation* op = g->OperationByName(id.node);
    if (op == nullptr) return absl::InternalError(absl::StrCat("gradient tensor '", grads[i], "' is missing"));
    dy[i] = TF_Output{op, id.index};
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace sluice

extern "C" {

void TF_AddGradientsWithPrefix(TF_Graph* g, const char* prefix, TF_Output* y, int ny, TF_Output* x, int nx,
                               TF_Output* dx, TF_Status* status, TF_Output* dy) {
  sluice::SetStatus(status, sluice::AddGradients(g, prefix, y, ny, x, nx, dx, dy));
}

void TF_AddGradients(TF_Graph* g, TF_Output* y, int ny, TF_Output* x, int nx, TF_Output* dx, TF_Status* status,
                     TF_Output* dy) {
  TF_AddGradientsWithPrefix(g, nullptr, y, ny, x, nx, dx, status, dy);
}

}  // extern "C"
