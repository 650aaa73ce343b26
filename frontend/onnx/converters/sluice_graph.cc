// ai.sluice GraphDef-1: a Sluice GraphDef carried in an ONNX model (optimized_model.h), spliced
// into the import under the node's name.
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "frontend/onnx/converter.h"
#include "frontend/onnx/importer.h"
#include "ops/op_registry.h"

namespace sluice {
namespace {

// The output types of `node`, from its op or, for a call of a library function, its signature.
absl::StatusOr<DataTypeVector> OutputTypes(const NodeDef& node, const FunctionDefLibrary& library) {
  auto op = OpRegistry::Global()->LookUpOpDef(node.op());
  if (op.ok()) {
    DataTypeVector in, out;
    SL_RETURN_IF_ERROR(InOutTypesForNode(node, **op, &in, &out));
    return out;
  }
  for (const FunctionDef& f : library.function()) {
    if (f.signature().name() != node.op()) continue;
    DataTypeVector out;
    for (const auto& arg : f.signature().output_arg()) out.push_back(arg.type());
    return out;
  }
  return op.status();
}

std::string Prefixed(const std::string& prefix, const std::string& input) {
  if (!input.empty() && input[0] == '^') return absl::StrCat("^", prefix, input.substr(1));
  return absl::StrCat(prefix, input);
}

absl::Status ConvertSluiceGraphDef(OnnxNodeContext* ctx) {
  OnnxImporter* importer = ctx->importer();
  if (importer->is_subgraph()) {
    return ctx->Error("a Sluice GraphDef node belongs in the model's main graph, not in an If branch or a loop body");
  }
  SL_ASSIGN_OR_RETURN(std::string bytes, ctx->GetString("graph"));
  GraphDef def;
  if (!def.ParseFromString(bytes)) return ctx->Error("attribute 'graph' is not a serialized GraphDef");
  std::vector<std::string> inputs;
  if (const onnx::AttributeProto* a = ctx->attr("inputs")) inputs.assign(a->strings().begin(), a->strings().end());
  std::vector<std::string> outputs;
  if (const onnx::AttributeProto* a = ctx->attr("outputs")) outputs.assign(a->strings().begin(), a->strings().end());
  if (static_cast<int>(inputs.size()) != ctx->num_inputs()) {
    return ctx->Error(absl::StrCat("attribute 'inputs' names ", inputs.size(), " placeholders for ", ctx->num_inputs(),
                                   " inputs"));
  }
  if (static_cast<int>(outputs.size()) != ctx->num_outputs()) {
    return ctx->Error(absl::StrCat("attribute 'outputs' names ", outputs.size(), " tensors for ", ctx->num_outputs(),
                                   " outputs"));
  }
  absl::flat_hash_map<std::string, int> fed;  // Placeholder -> node input.
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
    if (!ctx->has_input(i)) return ctx->Error(absl::StrCat("input ", i, " is empty"));
    if (!fed.emplace(inputs[i], i).second) {
      return ctx->Error(absl::StrCat("attribute 'inputs' names placeholder '", inputs[i], "' twice"));
    }
  }
  GraphDef* graph = importer->graph();
  for (const FunctionDef& f : def.library().function()) {
    for (const FunctionDef& g : graph->library().function()) {
      if (g.signature().name() == f.signature().name()) {
        return ctx->Error(absl::StrCat("its graph's function '", f.signature().name(), "' is already defined"));
      }
    }
  }
  *graph->mutable_library()->mutable_function() = def.library().function();
  const std::string prefix = absl::StrCat(ctx->base_name(), "/");
  absl::flat_hash_set<std::string> placed;
  for (NodeDef& node : *def.mutable_node()) {
    const std::string original = node.name();
    node.set_name(absl::StrCat(prefix, original));
    if (!importer->ReserveNodeName(node.name())) {
      return ctx->Error(absl::StrCat("its graph's node '", original, "' is named twice"));
    }
    for (std::string& in : *node.mutable_input()) in = Prefixed(prefix, in);
    auto feed = fed.find(original);
    if (feed != fed.end()) {
      if (node.op() != "Placeholder") {
        return ctx->Error(absl::StrCat("attribute 'inputs' names '", original, "', a ", node.op(),
                                       ", not a Placeholder"));
      }
      const int i = feed->second;
      const auto dtype = node.attr().find("dtype");
      if (dtype == node.attr().end() || dtype->second.type() != ctx->input_dtype(i)) {
        return ctx->Error(absl::StrCat("placeholder '", original, "' does not take input ", i, "'s type ",
                                       DataTypeString(ctx->input_dtype(i))));
      }
      NodeDef identity;
      identity.set_name(node.name());
      identity.set_op("Identity");
      identity.add_input(ctx->input(i));
      AddNodeAttr("T", ctx->input_dtype(i), &identity);
      if (auto shapes = node.attr().find("_output_shapes"); shapes != node.attr().end()) {
        (*identity.mutable_attr())["_output_shapes"] = shapes->second;
      }
      node = std::move(identity);
      placed.insert(original);
    }
    auto types = OutputTypes(node, def.library());
    if (!types.ok()) {
      return ctx->Error(absl::StrCat("its graph's node '", original, "' (", node.op(), "): ", types.status().message()));
    }
    importer->AppendNode(std::move(node), *types);
  }
  for (const auto& [name, i] : fed) {
    if (!placed.contains(name)) return ctx->Error(absl::StrCat("its graph has no placeholder '", name, "'"));
  }
  for (int j = 0; j < ctx->num_outputs(); ++j) {
    SL_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(outputs[j]), ctx->base_name(), " output ", j);
    const std::string tensor = TensorId{absl::StrCat(prefix, id.node), id.index}.ToString();
    if (importer->DtypeOf(tensor) == DT_INVALID) {
      return ctx->Error(absl::StrCat("attribute 'outputs' names '", outputs[j], "', which its graph does not have"));
    }
    SL_RETURN_IF_ERROR(ctx->SetOutput(j, tensor));
  }
  return absl::OkStatus();
}

REGISTER_ONNX_CONVERTER("ai.sluice", "GraphDef", 1, 1, ConvertSluiceGraphDef);

}  // namespace
}  // namespace sluice
