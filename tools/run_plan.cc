#include "tools/run_plan.h"

#include <random>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "frontend/onnx/onnx_tensor.h"
#include "tools/cli.h"
#include "tools/model_inputs.h"

namespace sluice {
namespace {

absl::Status PlanOnnx(const std::string& path, const std::vector<std::string>& inputs,
                      const OnnxImportOptions& import, Plan* plan) {
  SL_ASSIGN_OR_RETURN(OnnxGraph g, ImportOnnxFile(path, import));
  for (const auto& in : g.inputs) plan->input_names.push_back(in.name);
  SL_ASSIGN_OR_RETURN(OnnxStepInputs in, OnnxInputs(g, inputs));
  plan->feeds = std::move(in.feeds);
  plan->random_inputs = std::move(in.random_inputs);
  for (const auto& out : g.outputs) {
    plan->fetches.push_back(out.tensor);
    plan->output_names.push_back(out.name);
  }
  plan->graph = std::move(g.graph);
  return absl::OkStatus();
}

absl::Status PlanGraphDef(const std::string& path, const std::vector<std::string>& inputs,
                          std::vector<std::string> outputs, bool random_placeholders, Plan* plan) {
  SL_ASSIGN_OR_RETURN(plan->graph, ReadGraphDef(path));
  for (const NodeDef& n : plan->graph.node()) {
    if (n.op() == "Placeholder") plan->input_names.push_back(n.name());
  }
  for (const std::string& spec : inputs) {
    std::vector<std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
    std::string file = kv.size() == 2 ? kv[1] : kv[0];
    std::string name_in_file;
    SL_ASSIGN_OR_RETURN(Tensor t, ReadOnnxTensorFile(file, &name_in_file));
    std::string name = kv.size() == 2 ? kv[0] : name_in_file;
    if (name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("'", file, "' has no tensor name; use --input NAME=", file));
    }
    plan->feeds.emplace_back(name, std::move(t));
  }
  if (outputs.empty()) {
    std::set<std::string> consumed;
    for (const NodeDef& n : plan->graph.node()) {
      for (const std::string& in : n.input()) {
        auto id = ParseTensorName(in);
        if (id.ok() && id->index != kControlSlot) consumed.insert(absl::StrCat(id->node, ":", id->index));
      }
    }
    for (const NodeDef& n : plan->graph.node()) {
      std::string first = absl::StrCat(n.name(), ":0");
      if (n.op() == "NoOp" || n.op() == "Placeholder" || consumed.count(first)) continue;
      outputs.push_back(first);
    }
  }
  plan->fetches = outputs;
  plan->output_names = outputs;
  if (!random_placeholders) return absl::OkStatus();
  // Placeholders nobody feeds: random values of what they declare.
  std::set<std::string> fed;
  for (const auto& [name, value] : plan->feeds) {
    auto id = ParseTensorName(name);
    if (id.ok()) fed.insert(std::string(id->node));
  }
  std::mt19937 rng(0);
  for (const NodeDef& n : plan->graph.node()) {
    if (n.op() != "Placeholder" || fed.count(n.name())) continue;
    auto dtype = n.attr().find("dtype");
    auto shape = n.attr().find("shape");
    if (dtype == n.attr().end()) continue;
    const PartialShape declared = shape == n.attr().end() ? PartialShape() : PartialShape::FromProto(shape->second.shape());
    if (declared.unknown_rank()) continue;  // Left unfed: the run says which feed is missing.
    SL_ASSIGN_OR_RETURN(Tensor t, RandomTensor(dtype->second.type(), declared, &rng), "placeholder ", n.name());
    plan->feeds.emplace_back(n.name(), std::move(t));
    plan->random_inputs.push_back(n.name());
  }
  return absl::OkStatus();
}


}  // namespace

absl::Status PlanModel(const std::string& path, const std::vector<std::string>& inputs,
                       std::vector<std::string> outputs, const OnnxImportOptions& import,
                       bool random_placeholders, Plan* plan) {
  if (absl::EndsWith(path, ".onnx")) {
    if (!outputs.empty()) return absl::InvalidArgumentError("--output applies to GraphDefs only");
    return PlanOnnx(path, inputs, import, plan);
  }
  return PlanGraphDef(path, inputs, std::move(outputs), random_placeholders, plan);
}

}  // namespace sluice
