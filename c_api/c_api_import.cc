// TF_GraphImportGraphDef and its options and results over the framework's Graph: a GraphDef is
// staged as a graph of its own (names, input mappings and control dependencies checked), then
// its nodes join the TF_Graph in order through AddOperationLocked, all or none.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "google/protobuf/util/message_differencer.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

// A GraphDef tensor as the import options name it: (node, output), output kControlSlot for
// the node itself as a control input.
using TensorKey = std::pair<std::string, int>;
using InputMap = absl::flat_hash_map<TensorKey, TF_Output>;

// One GraphDef node being imported: its node in the staged graph (which holds the edges
// between imported nodes) and what it reads from operations already in the TF_Graph (input
// mappings and the options' control dependencies).
struct StagedNode {
  Node* node = nullptr;
  std::vector<TF_Output> external_data;  // By data input; oper null where an imported node feeds it.
  std::vector<TF_Operation*> external_control;
};

struct StagedImport {
  std::unique_ptr<Graph> graph;
  std::vector<StagedNode> nodes;                           // GraphDef order; index == node id.
  absl::flat_hash_map<std::string, int> by_original_name;  // GraphDef name -> index.
  absl::flat_hash_set<TensorKey> used_keys;                // Input-map keys some input read.
};

// The GraphDef's nodes, named `names` (and given the default device), as a graph of their own
// holding the edges between them; inputs the input map names come from the TF_Graph instead.
// Every other input names a node of the GraphDef and an output it has, of the type the input
// expects. The staged graph's breadth-first order is the order in which nodes join the
// TF_Graph.
absl::StatusOr<StagedImport> StageImport(const GraphDef& def, const std::vector<std::string>& names,
                                         const TF_ImportGraphDefOptions& options,
                                         const InputMap& input_map) {
  StagedImport staged;
  staged.graph = std::make_unique<Graph>(OpRegistry::Global());
  for (int i = 0; i < def.node_size(); ++i) {
    NodeDef node = def.node(i);
    node.set_name(names[i]);
    if (node.device().empty()) node.set_device(options.default_device);
    for (const std::string& input : node.input()) {
      auto id = ParseTensorName(input);
      if (!id.ok()) return NameNode(id.status(), node);
    }
    SL_ASSIGN_OR_RETURN(Node * n, staged.graph->AddNode(std::move(node)));
    SL_RETURN_IF_ERROR(NameNode(ValidateNodeDef(n->def(), n->op_def()), n->def()));
    staged.by_original_name[def.node(i).name()] = i;
    StagedNode s;
    s.node = n;
    s.external_data.assign(n->num_inputs(), TF_Output{nullptr, -1});
    staged.nodes.push_back(std::move(s));
  }
  for (StagedNode& s : staged.nodes) {
    Node* n = s.node;
    int data_index = 0;  // ValidateNodeDef checked that data inputs come first and fit.
    bool reads_imported = false;
    for (const std::string& input : n->def().input()) {
      TensorId id = *ParseTensorName(input);  // Parsed above.
      const bool control = id.index == kControlSlot;
      auto mapped = input_map.find(TensorKey(id.node, id.index));
      if (mapped != input_map.end()) {
        staged.used_keys.insert(mapped->first);
        if (control) {
          s.external_control.push_back(mapped->second.oper);
        } else {
          s.external_data[data_index++] = mapped->second;
        }
        continue;
      }
      auto src = staged.by_original_name.find(id.node);
      if (src == staged.by_original_name.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "node '", n->name(), "' (op '", n->type_string(), "'): input '", input,
            "' names a node that is not in the imported GraphDef"));
      }
      Node* src_node = staged.nodes[src->second].node;
      reads_imported = true;
      if (control) {
        staged.graph->AddControlEdge(src_node, n);
        continue;
      }
      SL_RETURN_IF_ERROR(CheckInput(*n, data_index, *src_node, id.index));
      SL_RETURN_IF_ERROR(staged.graph->AddEdge(src_node, id.index, n, data_index));
      ++data_index;
    }
    // Nodes fed by other imported nodes inherit the dependencies through them.
    if (!reads_imported) {
      for (TF_Operation* c : options.control_dependencies) s.external_control.push_back(c);
    }
  }
  return staged;
}

// Names and scopes ("a" and "a/b" for "a/b/c") of the graph's operations.
absl::flat_hash_set<std::string> NamesInUse(const TF_Graph& graph)
    ABSL_SHARED_LOCKS_REQUIRED(graph.mu) {
  absl::flat_hash_set<std::string> in_use;
  for (const auto& op : graph.ops) {
    const std::string& name = op->node->name();
    in_use.insert(name);
    for (size_t slash = name.find('/'); slash != std::string::npos;
         slash = name.find('/', slash + 1)) {
      in_use.insert(name.substr(0, slash));
    }
  }
  return in_use;
}

// What each GraphDef node is called in the graph: prefixed (the prefix made unique if asked),
// or made unique if asked, or as it is. An error when a name is taken and nothing may change it.
absl::StatusOr<std::vector<std::string>> ImportedNames(const TF_Graph& graph, const GraphDef& def,
                                                       const TF_ImportGraphDefOptions& options)
    ABSL_SHARED_LOCKS_REQUIRED(graph.mu) {
  std::string prefix = options.prefix;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  absl::flat_hash_set<std::string> in_use;
  if (options.uniquify_prefix || options.uniquify_names) in_use = NamesInUse(graph);
  if (!prefix.empty() && options.uniquify_prefix && in_use.contains(prefix)) {
    std::string base = prefix;
    for (int k = 1; in_use.contains(prefix); ++k) prefix = absl::StrCat(base, "_", k);
  }
  if (!prefix.empty()) prefix += '/';
  const bool uniquify = prefix.empty() && options.uniquify_names;
  absl::flat_hash_set<std::string> def_names;
  for (const NodeDef& node : def.node()) def_names.insert(node.name());
  absl::flat_hash_set<std::string> taken;
  std::vector<std::string> names;
  for (const NodeDef& node : def.node()) {
    std::string name = prefix + node.name();
    const bool exists = graph.OperationByName(name) != nullptr;
    if (uniquify && (exists || in_use.contains(name))) {
      std::string base = name;
      for (int k = 1; def_names.contains(name) || in_use.contains(name) || taken.contains(name);
           ++k) {
        name = absl::StrCat(base, "_", k);
      }
    } else if (exists) {
      return absl::InvalidArgumentError(absl::StrCat(
          "node '", name, "' already exists in the graph",
          prefix.empty() ? " (use a prefix, or uniquify names, to import a second copy)" : ""));
    }
    taken.insert(name);
    names.push_back(std::move(name));
  }
  return names;
}

// The options' operations and outputs are this graph's; the input map as a map.
absl::StatusOr<InputMap> CheckImportOptions(const TF_Graph& graph,
                                            const TF_ImportGraphDefOptions& options) {
  SL_RETURN_IF_ERROR(options.deferred);
  InputMap input_map;
  for (const auto& [key, dst] : options.input_map) {
    std::string what = absl::StrCat("the input mapping of '", key.ToString(), "'");
    if (key.index < kControlSlot) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": negative output index"));
    }
    if (key.index == kControlSlot) {
      if (!InGraph(graph, dst.oper)) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": the operation is not in this graph"));
      }
    } else {
      SL_RETURN_IF_ERROR(CheckOutput(graph, dst, what));
    }
    input_map[TensorKey(key.node, key.index)] = dst;
  }
  for (const TF_Operation* c : options.control_dependencies) {
    if (!InGraph(graph, c)) {
      return absl::InvalidArgumentError("a control dependency is not an operation of this graph");
    }
  }
  return input_map;
}

// Checks that the requested return values exist before the graph changes.
absl::Status CheckReturnValues(const StagedImport& staged, const InputMap& input_map,
                               const TF_ImportGraphDefOptions& options) {
  for (const TensorId& r : options.return_outputs) {
    if (input_map.contains(TensorKey(r.node, r.index))) continue;
    auto it = staged.by_original_name.find(r.node);
    std::string what = absl::StrCat("requested return output '", r.node, ":", r.index, "'");
    if (it == staged.by_original_name.end()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " is not in the GraphDef"));
    }
    int n = staged.nodes[it->second].node->num_outputs();
    if (r.index < 0 || r.index >= n) {
      return absl::InvalidArgumentError(absl::StrCat(what, " is out of range: node '", r.node,
                                                     "' has ", n, n == 1 ? " output" : " outputs"));
    }
  }
  for (const std::string& name : options.return_operations) {
    if (!staged.by_original_name.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("requested return operation '", name, "' is not in the GraphDef"));
    }
  }
  return absl::OkStatus();
}

void FillResults(const StagedImport& staged, const InputMap& input_map,
                 const std::vector<TF_Operation*>& added, const TF_ImportGraphDefOptions& options,
                 TF_ImportGraphDefResults* results) {
  for (const TensorId& r : options.return_outputs) {
    auto mapped = input_map.find(TensorKey(r.node, r.index));
    results->return_outputs.push_back(
        mapped != input_map.end()
            ? mapped->second
            : TF_Output{added[staged.by_original_name.at(r.node)], r.index});
  }
  for (const std::string& name : options.return_operations) {
    results->return_operations.push_back(added[staged.by_original_name.at(name)]);
  }
  for (const auto& [key, dst] : options.input_map) {
    TensorKey k(key.node, key.index);
    if (staged.used_keys.contains(k)) continue;
    auto it = staged.by_original_name.find(key.node);
    bool in_def = it != staged.by_original_name.end() &&
                  key.index < staged.nodes[it->second].node->num_outputs();
    if (in_def) continue;
    results->missing_unused_names.push_back(key.node);
    results->missing_unused_indexes.push_back(key.index);
  }
  for (const std::string& name : results->missing_unused_names) {
    results->missing_unused_name_ptrs.push_back(name.c_str());
  }
}

}  // namespace

absl::Status ImportGraphDefLocked(TF_Graph* graph, const GraphDef& def,
                                  const TF_ImportGraphDefOptions& options,
                                  TF_ImportGraphDefResults* results) {
  // Functions join the graph's library; one already there must be the same function.
  std::vector<const FunctionDef*> new_functions;
  for (const FunctionDef& f : def.library().function()) {
    const FunctionDef* existing = nullptr;
    for (const FunctionDef& g : graph->graph.library().function()) {
      if (g.signature().name() == f.signature().name()) existing = &g;
    }
    if (existing == nullptr) {
      new_functions.push_back(&f);
    } else if (!google::protobuf::util::MessageDifferencer::Equals(*existing, f)) {  // Maps in any order.
      return absl::InvalidArgumentError(absl::StrCat(
          "the graph already has a different function named '", f.signature().name(), "'"));
    }
  }
  absl::flat_hash_set<std::string> names;
  for (int i = 0; i < def.node_size(); ++i) {
    const NodeDef& node = def.node(i);
    if (node.name().empty()) {
      return absl::InvalidArgumentError(absl::StrCat("node ", i, " (op '", node.op(),
                                                     "') of the GraphDef has no name"));
    }
    if (!names.insert(node.name()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("the GraphDef has two nodes named '", node.name(), "'"));
    }
  }
  SL_ASSIGN_OR_RETURN(InputMap input_map, CheckImportOptions(*graph, options));
  SL_ASSIGN_OR_RETURN(std::vector<std::string> new_names, ImportedNames(*graph, def, options));
  SL_ASSIGN_OR_RETURN(StagedImport staged, StageImport(def, new_names, options, input_map));
  SL_ASSIGN_OR_RETURN(std::vector<Node*> order, staged.graph->BreadthFirstTopologicalOrder(),
                      "the imported GraphDef");
  SL_RETURN_IF_ERROR(CheckReturnValues(staged, input_map, options));

  // Each node's inputs are in the graph before it; a failure takes back what was added.
  size_t num_ops = graph->ops.size();
  std::vector<TF_Operation*> added(staged.graph->num_node_ids(), nullptr);  // By staged node id.
  for (Node* n : order) {
    const StagedNode& s = staged.nodes[n->id()];
    std::vector<TF_Output> data = s.external_data;
    std::vector<TF_Operation*> control;
    for (const Edge* e : n->in_edges()) {
      TF_Operation* src = added[e->src->id()];
      if (e->IsControl()) {
        control.push_back(src);
      } else {
        data[e->dst_input] = TF_Output{src, e->src_output};
      }
    }
    control.insert(control.end(), s.external_control.begin(), s.external_control.end());
    // Moved, not copied (Const values can be large): the staged graph is dropped after this.
    auto op = AddOperationLocked(graph, std::move(*n->mutable_def()), data, control);
    if (!op.ok()) {
      TruncateOperationsLocked(graph, num_ops);
      return op.status();
    }
    added[n->id()] = *op;
  }
  for (const FunctionDef* f : new_functions) *graph->graph.mutable_library()->add_function() = *f;
  if (results != nullptr) FillResults(staged, input_map, added, options, results);
  return absl::OkStatus();
}

absl::Status ImportGraphDefLocked(TF_Graph* graph, const GraphDef& def, std::string prefix) {
  TF_ImportGraphDefOptions options;
  options.prefix = std::move(prefix);
  return ImportGraphDefLocked(graph, def, options, nullptr);
}

}  // namespace sluice

using sluice::SetStatus;

namespace {

// Records the first misuse of an options setter for the import to report.
void DeferOptionsError(TF_ImportGraphDefOptions* opts, absl::string_view function,
                       absl::string_view arg) {
  if (opts->deferred.ok()) opts->deferred = sluice::NullArgument(function, arg);
}

// Parses and imports; the graph is unchanged on error.
absl::Status ImportGraphDef(TF_Graph* graph, const TF_Buffer* graph_def,
                            const TF_ImportGraphDefOptions* options,
                            TF_ImportGraphDefResults* results) {
  if (graph == nullptr) return absl::InvalidArgumentError("'graph' is null");
  if (graph_def == nullptr) return absl::InvalidArgumentError("'graph_def' is null");
  sluice::GraphDef def;
  if (!sluice::ParseFromBytes(graph_def->data, graph_def->length, &def)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the buffer (", graph_def->length, " bytes) is not a valid serialized GraphDef"));
  }
  static const TF_ImportGraphDefOptions* const kDefaults = new TF_ImportGraphDefOptions;
  absl::MutexLock lock(&graph->mu);
  return sluice::ImportGraphDefLocked(graph, def, options != nullptr ? *options : *kDefaults,
                                      results);
}

}  // namespace

extern "C" {

TF_ImportGraphDefOptions* TF_NewImportGraphDefOptions(void) {
  return new TF_ImportGraphDefOptions;
}

void TF_DeleteImportGraphDefOptions(TF_ImportGraphDefOptions* opts) { delete opts; }

void TF_ImportGraphDefOptionsSetPrefix(TF_ImportGraphDefOptions* opts, const char* prefix) {
  if (opts != nullptr) opts->prefix = prefix != nullptr ? prefix : "";
}

void TF_ImportGraphDefOptionsSetDefaultDevice(TF_ImportGraphDefOptions* opts, const char* device) {
  if (opts != nullptr) opts->default_device = device != nullptr ? device : "";
}

void TF_ImportGraphDefOptionsSetUniquifyNames(TF_ImportGraphDefOptions* opts,
                                              unsigned char uniquify_names) {
  if (opts != nullptr) opts->uniquify_names = uniquify_names != 0;
}

void TF_ImportGraphDefOptionsSetUniquifyPrefix(TF_ImportGraphDefOptions* opts,
                                               unsigned char uniquify_prefix) {
  if (opts != nullptr) opts->uniquify_prefix = uniquify_prefix != 0;
}

void TF_ImportGraphDefOptionsAddInputMapping(TF_ImportGraphDefOptions* opts, const char* src_name,
                                             int src_index, TF_Output dst) {
  if (opts == nullptr) return;
  if (src_name == nullptr) {
    DeferOptionsError(opts, "TF_ImportGraphDefOptionsAddInputMapping", "src_name");
    return;
  }
  sluice::TensorId key{src_name, src_index};
  for (auto& [k, v] : opts->input_map) {
    if (k.node == key.node && k.index == key.index) {
      v = dst;
      return;
    }
  }
  opts->input_map.emplace_back(std::move(key), dst);
}

void TF_ImportGraphDefOptionsRemapControlDependency(TF_ImportGraphDefOptions* opts,
                                                    const char* src_name, TF_Operation* dst) {
  if (opts == nullptr) return;
  if (src_name == nullptr || dst == nullptr) {
    DeferOptionsError(opts, "TF_ImportGraphDefOptionsRemapControlDependency",
                      src_name == nullptr ? "src_name" : "dst");
    return;
  }
  TF_ImportGraphDefOptionsAddInputMapping(opts, src_name, sluice::kControlSlot,
                                          TF_Output{dst, sluice::kControlSlot});
}

void TF_ImportGraphDefOptionsAddControlDependency(TF_ImportGraphDefOptions* opts,
                                                  TF_Operation* oper) {
  if (opts == nullptr) return;
  if (oper == nullptr) {
    DeferOptionsError(opts, "TF_ImportGraphDefOptionsAddControlDependency", "oper");
    return;
  }
  opts->control_dependencies.push_back(oper);
}

void TF_ImportGraphDefOptionsAddReturnOutput(TF_ImportGraphDefOptions* opts,
                                             const char* oper_name, int index) {
  if (opts == nullptr) return;
  if (oper_name == nullptr) {
    DeferOptionsError(opts, "TF_ImportGraphDefOptionsAddReturnOutput", "oper_name");
    return;
  }
  opts->return_outputs.push_back(sluice::TensorId{oper_name, index});
}

int TF_ImportGraphDefOptionsNumReturnOutputs(const TF_ImportGraphDefOptions* opts) {
  return opts == nullptr ? 0 : static_cast<int>(opts->return_outputs.size());
}

void TF_ImportGraphDefOptionsAddReturnOperation(TF_ImportGraphDefOptions* opts,
                                                const char* oper_name) {
  if (opts == nullptr) return;
  if (oper_name == nullptr) {
    DeferOptionsError(opts, "TF_ImportGraphDefOptionsAddReturnOperation", "oper_name");
    return;
  }
  opts->return_operations.push_back(oper_name);
}

int TF_ImportGraphDefOptionsNumReturnOperations(const TF_ImportGraphDefOptions* opts) {
  return opts == nullptr ? 0 : static_cast<int>(opts->return_operations.size());
}

void TF_ImportGraphDefResultsReturnOutputs(TF_ImportGraphDefResults* results, int* num_outputs,
                                           TF_Output** outputs) {
  if (results == nullptr) {
    if (num_outputs != nullptr) *num_outputs = 0;
    if (outputs != nullptr) *outputs = nullptr;
    return;
  }
  if (num_outputs != nullptr) *num_outputs = static_cast<int>(results->return_outputs.size());
  if (outputs != nullptr) *outputs = results->return_outputs.data();
}

void TF_ImportGraphDefResultsReturnOperations(TF_ImportGraphDefResults* results, int* num_opers,
                                              TF_Operation*** opers) {
  if (results == nullptr) {
    if (num_opers != nullptr) *num_opers = 0;
    if (opers != nullptr) *opers = nullptr;
    return;
  }
  if (num_opers != nullptr) *num_opers = static_cast<int>(results->return_operations.size());
  if (opers != nullptr) *opers = results->return_operations.data();
}

void TF_ImportGraphDefResultsMissingUnusedInputMappings(TF_ImportGraphDefResults* results,
                                                        int* num_missing_unused_input_mappings,
                                                        const char*** src_names,
                                                        int** src_indexes) {
  const bool none = results == nullptr;
  if (num_missing_unused_input_mappings != nullptr) {
    *num_missing_unused_input_mappings =
        none ? 0 : static_cast<int>(results->missing_unused_name_ptrs.size());
  }
  if (src_names != nullptr) *src_names = none ? nullptr : results->missing_unused_name_ptrs.data();
  if (src_indexes != nullptr) *src_indexes = none ? nullptr : results->missing_unused_indexes.data();
}

void TF_DeleteImportGraphDefResults(TF_ImportGraphDefResults* results) { delete results; }

TF_ImportGraphDefResults* TF_GraphImportGraphDefWithResults(TF_Graph* graph,
                                                            const TF_Buffer* graph_def,
                                                            const TF_ImportGraphDefOptions* options,
                                                            TF_Status* status) {
  auto results = std::make_unique<TF_ImportGraphDefResults>();
  absl::Status s = ImportGraphDef(graph, graph_def, options, results.get());
  SetStatus(status, sluice::AddContext(s, "TF_GraphImportGraphDefWithResults"));
  return s.ok() ? results.release() : nullptr;
}

void TF_GraphImportGraphDefWithReturnOutputs(TF_Graph* graph, const TF_Buffer* graph_def,
                                             const TF_ImportGraphDefOptions* options,
                                             TF_Output* return_outputs, int num_return_outputs,
                                             TF_Status* status) {
  constexpr char kFn[] = "TF_GraphImportGraphDefWithReturnOutputs";
  int expected = TF_ImportGraphDefOptionsNumReturnOutputs(options);
  if (num_return_outputs != expected) {
    SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                          kFn, ": num_return_outputs is ", num_return_outputs,
                          " but the options ask for ", expected, " return outputs")));
    return;
  }
  if (num_return_outputs > 0 && return_outputs == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, "return_outputs"));
    return;
  }
  TF_ImportGraphDefResults results;
  absl::Status s = ImportGraphDef(graph, graph_def, options, &results);
  if (s.ok()) {
    for (int i = 0; i < num_return_outputs; ++i) return_outputs[i] = results.return_outputs[i];
  }
  SetStatus(status, sluice::AddContext(s, kFn));
}

void TF_GraphImportGraphDef(TF_Graph* graph, const TF_Buffer* graph_def,
                            const TF_ImportGraphDefOptions* options, TF_Status* status) {
  SetStatus(status, sluice::AddContext(ImportGraphDef(graph, graph_def, options, nullptr),
                                       "TF_GraphImportGraphDef"));
}

}  // extern "C"
