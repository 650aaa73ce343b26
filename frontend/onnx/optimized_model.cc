#include "frontend/onnx/optimized_model.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "framework/node_def_util.h"
#include "framework/status.h"

namespace sluice {

onnx::ModelProto ModelHeader(const onnx::ModelProto& model) {
  onnx::ModelProto header;
  header.set_ir_version(model.ir_version());
  *header.mutable_opset_import() = model.opset_import();
  header.set_producer_name(model.producer_name());
  header.set_producer_version(model.producer_version());
  header.set_domain(model.domain());
  header.set_model_version(model.model_version());
  header.set_doc_string(model.doc_string());
  *header.mutable_metadata_props() = model.metadata_props();
  header.mutable_graph()->set_name(model.graph().name());
  header.mutable_graph()->set_doc_string(model.graph().doc_string());
  return header;
}

absl::StatusOr<onnx::ModelProto> WrapOptimizedGraph(const onnx::ModelProto& header, const OnnxGraph& graph) {
  // Protobuf refuses to parse a message of 2 GB or more; keep a margin for the rest.
  constexpr size_t kMaxGraphBytes = (size_t{2} << 30) - (size_t{1} << 20);
  const size_t bytes = graph.graph.ByteSizeLong();
  if (bytes > kMaxGraphBytes) {
    return absl::ResourceExhaustedError(absl::StrCat("the optimized graph takes ", bytes,
                                                     " bytes; one ONNX file holds less than 2 GB"));
  }
  onnx::ModelProto model = header;
  bool imports_sluice = false;
  for (const auto& imp : model.opset_import()) imports_sluice = imports_sluice || imp.domain() == kSluiceOnnxDomain;
  if (!imports_sluice) {
    onnx::OperatorSetIdProto* imp = model.add_opset_import();
    imp->set_domain(kSluiceOnnxDomain);
    imp->set_version(1);
  }
  onnx::GraphProto* g = model.mutable_graph();
  g->clear_node();
  g->clear_input();
  g->clear_output();
  g->clear_initializer();
  g->clear_value_info();
  onnx::NodeProto* node = g->add_node();
  node->set_name("sluice_graph");
  node->set_op_type("GraphDef");
  node->set_domain(kSluiceOnnxDomain);
  onnx::AttributeProto* def = node->add_attribute();
  def->set_name("graph");
  def->set_type(onnx::AttributeProto::STRING);
  if (!graph.graph.SerializeToString(def->mutable_s())) {
    return absl::InternalError("the optimized graph does not serialize");
  }
  onnx::AttributeProto* inputs = node->add_attribute();
  inputs->set_name("inputs");
  inputs->set_type(onnx::AttributeProto::STRINGS);
  for (const OnnxValue& in : graph.inputs) {
    if (in.has_default) continue;
    SL_ASSIGN_OR_RETURN(TensorId id, ParseTensorName(in.tensor), "graph input '", in.name, "'");
    onnx::ValueInfoProto* value = g->add_input();
    value->set_name(in.name);
    *value->mutable_type() = in.type;
    node->add_input(in.name);
    inputs->add_strings(id.node);
  }
  onnx::AttributeProto* outputs = node->add_attribute();
  outputs->set_name("outputs");
  outputs->set_type(onnx::AttributeProto::STRINGS);
  for (const OnnxValue& out : graph.outputs) {
    onnx::ValueInfoProto* value = g->add_output();
    value->set_name(out.name);
    *value->mutable_type() = out.type;
    // An output that is also a graph input (or repeats one) still needs a node output of its
    // own name; ONNX allows a graph output to name a graph input, so keep it as that input.
    bool is_input = false;
    for (const auto& in : node->input()) is_input = is_input || in == out.name;
    bool repeated = false;
    for (const auto& o : node->output()) repeated = repeated || o == out.name;
    if (is_input || repeated) continue;
    node->add_output(out.name);
    outputs->add_strings(out.tensor);
  }
  return model;
}

}  // namespace sluice
