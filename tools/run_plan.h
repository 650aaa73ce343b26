// What `sluice run` and `sluice bench` run: a model's graph, its feeds and its fetches, from an
// ONNX model or a GraphDef file (.pb or .pbtxt).
//
//   Plan plan;
//   SL_RETURN_IF_ERROR(PlanModel(path, args.TakeAll("--input"), args.TakeAll("--output"), {}, &plan));
//   session->Create(std::move(plan.graph));
//   session->Run(plan.feeds, plan.fetches, {}, &outputs);
#ifndef SLUICE_TOOLS_RUN_PLAN_H_
#define SLUICE_TOOLS_RUN_PLAN_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "framework/tensor.h"
#include "frontend/onnx/importer.h"
#include "proto/graph.pb.h"

namespace sluice {

struct Plan {
  GraphDef graph;
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;        // Tensors to fetch.
  std::vector<std::string> output_names;   // How to call them.
  std::vector<std::string> random_inputs;  // Inputs given random values, in feed order.
  std::vector<std::string> input_names;    // The model's (a GraphDef's Placeholders), for hints.
};

// `inputs` are "FILE.pb" or "NAME=FILE.pb" (ONNX TensorProto files). For an ONNX model they go
// to its graph inputs (in order when unnamed), the rest random; `outputs` must be empty. For
// a GraphDef, NAME is a tensor ("x" or "x:0") or the file's own tensor name; with
// `random_placeholders`, Placeholders not fed get random values of their declared dtype and
// shape (unknown dims 1), otherwise the run reports them missing; `outputs` names the fetches
// (default: every output 0 that no node reads, NoOps and Placeholders aside).
absl::Status PlanModel(const std::string& path, const std::vector<std::string>& inputs,
                       std::vector<std::string> outputs, const OnnxImportOptions& import,
                       bool random_placeholders, Plan* plan);

}  // namespace sluice

#endif  // SLUICE_TOOLS_RUN_PLAN_H_
