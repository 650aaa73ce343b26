#include "training/trainer.h"

#include <algorithm>
#include <cstring>
#include <fstream>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "framework/device_name.h"
#include "framework/graph.h"
#include "framework/node_attr.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "frontend/onnx/model_loader.h"
#include "frontend/onnx/onnx_tensor.h"
#include "ops/op_registry.h"
#include "training/replicate.h"
#include "training/tensor_names.h"

namespace sluice {
namespace {

constexpr char kGradientDomain[] = "ai.onnx.preview.training";

// A model of `graph` under `model`'s opsets, importable on its own.
onnx::ModelProto Standalone(const onnx::ModelProto& model, const onnx::GraphProto& graph) {
  onnx::ModelProto m;
  m.set_ir_version(model.ir_version());
  *m.mutable_opset_import() = model.opset_import();
  *m.mutable_graph() = graph;
  return m;
}

absl::StatusOr<std::vector<Tensor>> RunGraph(Session* session, const OnnxGraph& g,
                                             const std::map<std::string, Tensor>& values) {
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const auto& in : g.inputs) {
    auto it = values.find(in.name);
    if (it != values.end()) {
      feeds.emplace_back(in.tensor, it->second);
    } else if (!in.has_default) {
      return absl::InvalidArgumentError(absl::StrCat("no value for input '", in.name, "'"));
    }
  }
  std::vector<std::string> fetches;
  for (const auto& out : g.outputs) fetches.push_back(out.tensor);
  std::vector<Tensor> out;
  SL_RETURN_IF_ERROR(session->Run(feeds, fetches, {}, &out));
  return out;
}

// Splits `t` along dimension 0 into `parts` equal tensors.
absl::StatusOr<std::vector<Tensor>> SplitBatch(const std::string& name, const Tensor& t, int parts) {
  if (t.dims() == 0) return std::vector<Tensor>(parts, t);
  if (t.dtype() == DT_STRING) {
    return absl::UnimplementedError(absl::StrCat("input '", name, "' is a string tensor; it cannot be split"));
  }
  const int64_t rows = t.dim_size(0);
  if (rows % parts != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input '", name, "' has ", rows, " rows along dimension 0, which do not split evenly over ",
        parts, " replicas"));
  }
  TensorShape shape = t.shape();
  shape.set_dim(0, rows / parts);
  const size_t bytes = t.AllocatedBytes() / parts;
  std::vector<Tensor> out;
  for (int i = 0; i < parts; ++i) {
    SL_ASSIGN_OR_RETURN(Tensor part, Tensor::Allocate(t.dtype(), shape));
    std::memcpy(part.raw_data(), static_cast<const char*>(t.raw_data()) + i * bytes, bytes);
    out.push_back(std::move(part));
  }
  return out;
}

}  // namespace

absl::Status OnnxTrainer::MakeResident(const OnnxValue& in, const std::vector<std::string>& tensors, bool split,
                                       const Tensor& value, GraphDef* graph) const {
  const int copies = static_cast<int>(tensors.size());
  std::vector<Tensor> shares(copies, value);
  if (split) {
    SL_ASSIGN_OR_RETURN(shares, SplitBatch(in.name, value, copies));
  }
  for (int r = 0; r < copies; ++r) {
    const std::string node = NodeOf(tensors[r]);
    NodeDef* placeholder = nullptr;
    for (NodeDef& n : *graph->mutable_node()) {
      if (n.name() == node) placeholder = &n;
    }
    if (placeholder == nullptr || placeholder->op() != "Placeholder") {
      return absl::InvalidArgumentError(absl::StrCat("input '", in.name, "' (", tensors[r], ") is ",
                                                     placeholder == nullptr ? "missing" : placeholder->op(),
                                                     ", not a Placeholder"));
    }
    const auto dtype = placeholder->attr().find("dtype");
    if (dtype == placeholder->attr().end() || dtype->second.type() != value.dtype()) {
      return absl::InvalidArgumentError(absl::StrCat("feed for input '", in.name, "' has dtype ",
                                                     DataTypeString(value.dtype()), " but the model expects ",
                                                     dtype == placeholder->attr().end()
                                                         ? std::string("another")
                                                         : DataTypeString(dtype->second.type())));
    }
    const auto shape = placeholder->attr().find("shape");
    if (shape != placeholder->attr().end()) {
      const PartialShape expected = PartialShape::FromProto(shape->second.shape());
      if (!expected.IsCompatibleWith(shares[r].shape())) {
        return absl::InvalidArgumentError(absl::StrCat("feed for input '", in.name, "' gives ", tensors[r], " shape ",
                                                       shares[r].shape().DebugString(), ", which does not match ",
                                                       expected.DebugString()));
      }
    }
    placeholder->set_op("Const");
    placeholder->clear_input();
    placeholder->mutable_attr()->clear();
    AddNodeAttr("dtype", value.dtype(), placeholder);
    AddNodeAttr("value", shares[r], placeholder);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<OnnxTrainer>> OnnxTrainer::Load(const std::string& path,
                                                               const SessionOptions& options,
                                                               const TrainOptions& train) {
  if (train.strategy != "auto" && train.strategy != "allreduce" && train.strategy != "ps") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown strategy '", train.strategy, "' (auto, allreduce or ps)"));
  }
  auto trainer = std::unique_ptr<OnnxTrainer>(new OnnxTrainer());
  SL_ASSIGN_OR_RETURN(trainer->model_, LoadOnnxModel(path));
  trainer->options_ = options;
  trainer->train_ = train;
  if (trainer->model_.training_info_size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' has no training_info to train with"));
  }
  std::map<std::string, Tensor> values;
  for (const auto& init : trainer->model_.graph().initializer()) {
    auto t = TensorFromOnnx(init);
    SL_RETURN_IF_ERROR(t.status(), "initializer '", init.name(), "'");
    trainer->initial_[init.name()] = VarSpec{t->dtype(), t->shape()};
    values[init.name()] = *std::move(t);
  }
  int k = 0;
  for (const auto& [name, value] : trainer->initial_) {
    std::string escaped;
    for (char ch : name) escaped.push_back(absl::ascii_isalnum(static_cast<unsigned char>(ch)) || ch == '.' ? ch : '_');
    trainer->var_nodes_[name] = absl::StrCat("variables/", k++, "_", escaped);
  }
  SL_RETURN_IF_ERROR(trainer->Build());
  SL_RETURN_IF_ERROR(trainer->PushVariables(values));
  // From here the variables hold the values: SerializeState writes each initializer back from
  // them, so the model keeps only what describes its initializers.
  for (auto& init : *trainer->model_.mutable_graph()->mutable_initializer()) {
    onnx::TensorProto described;
    described.set_name(init.name());
    described.set_data_type(init.data_type());
    *described.mutable_dims() = init.dims();
    described.set_doc_string(init.doc_string());
    init = std::move(described);
  }
  return trainer;
}

namespace {

// The variable nodes under `base` (OnnxTrainer::var_nodes_).
std::string VarInit(const std::string& base) { return absl::StrCat(base, "/init"); }
std::string VarAssign(const std::string& base) { return absl::StrCat(base, "/assign"); }
std::string VarRead(const std::string& base) { return absl::StrCat(base, "/read"); }
std::string VarDestroy(const std::string& base) { return absl::StrCat(base, "/destroy"); }

}  // namespace

std::vector<std::string> OnnxTrainer::VarCopies(const std::string& name) const {
  const std::string& base = var_nodes_.at(name);
  if (strategy_ != "allreduce") return {base};
  std::vector<std::string> copies;
  for (size_t r = 0; r < replica_devices_.size(); ++r) copies.push_back(absl::StrCat(base, "/replica_", r));
  return copies;
}

absl::Status OnnxTrainer::Build() {
  SL_ASSIGN_OR_RETURN(session_, NewSession(options_));
  // Where variables and replicas go: a "ps" job makes the run data-parallel.
  std::vector<DeviceAttributes> devices;
  SL_RETURN_IF_ERROR(session_->ListDevices(&devices));
  std::map<int, std::string> worker_tasks;
  bool has_ps = false;
  for (const auto& d : devices) {
    auto dn = DeviceName::Parse(d.name());
    if (!dn.ok()) continue;
    has_ps |= dn->job == "ps";
    if (dn->job == "worker") worker_tasks[dn->task] = absl::StrCat("/job:worker/task:", dn->task);
  }
  const std::string& asked = train_.strategy;
  if (asked == "ps" && !(has_ps && !worker_tasks.empty())) {
    return absl::FailedPreconditionError(
        "--strategy ps needs a cluster with a \"ps\" job and a \"worker\" job (--target)");
  }
  if (has_ps && !worker_tasks.empty() && asked != "allreduce") {
    strategy_ = "ps";
    variable_device_ = "/job:ps/task:0";
    for (const auto& [task, device] : worker_tasks) replica_devices_.push_back(device);
  } else if (worker_tasks.size() >= 2) {
    strategy_ = "allreduce";
    for (const auto& [task, device] : worker_tasks) replica_devices_.push_back(device);
  } else {
    replica_devices_.push_back("");
  }
  const bool allreduce = strategy_ == "allreduce";
  const bool parallel = replica_devices_.size() > 1 || has_ps;
  // Names unique to this trainer, so that two trainers on one cluster keep apart.
  const std::string var_prefix =
      absl::StrFormat("trainer_%016x/", absl::Uniform<uint64_t>(absl::BitGen()));

  GraphDef graph;
  for (const auto& [name, value] : initial_) {
    const std::string& base = var_nodes_.at(name);
    NodeDef init;
    init.set_name(VarInit(base));
    init.set_op("Placeholder");
    AddNodeAttr("dtype", value.dtype(), &init);
    init.set_device(allreduce ? replica_devices_[0] : variable_device_);
    const std::vector<std::string> copies = VarCopies(name);
    for (size_t r = 0; r < copies.size(); ++r) {
      // All-reduce: a copy per replica, named as ReplicateAllReduce names the algorithm's.
      const std::string shared = allreduce ? absl::StrCat(var_prefix, name, "/replica_", r) : var_prefix + name;
      NodeDef assign, read, destroy;
      assign.set_name(VarAssign(copies[r]));
      assign.set_op("AssignVariable");
      assign.add_input(init.name());
      read.set_name(VarRead(copies[r]));
      read.set_op("ReadVariable");
      destroy.set_name(VarDestroy(copies[r]));
      destroy.set_op("DestroyVariable");
      AddNodeAttr("shared_name", shared, &destroy);
      for (NodeDef* n : {&assign, &read, &destroy}) n->set_device(allreduce ? replica_devices_[r] : variable_device_);
      for (NodeDef* n : {&assign, &read}) {
        AddNodeAttr("shared_name", shared, n);
        AddNodeAttr("dtype", value.dtype(), n);
      }
      AddNodeAttr("shape", PartialShape(value.shape()), &read);
      for (NodeDef* n : {&assign, &read, &destroy}) *graph.add_node() = std::move(*n);
    }
    *graph.add_node() = std::move(init);
  }

  const onnx::ModelProto& model = model_;
  for (int i = 0; i < model.training_info_size(); ++i) {
    const auto& info = model.training_info(i);
    // The algorithm reads the main graph's initializers and inputs: declare them as inputs
    // (initializers with their values as defaults).
    onnx::GraphProto g = info.algorithm();
    absl::flat_hash_set<std::string> declared;
    for (const auto& in : g.input()) declared.insert(in.name());
    for (const auto& in : model.graph().input()) {
      if (declared.insert(in.name()).second) *g.add_input() = in;
    }
    for (const auto& init : model.graph().initializer()) {
      if (!declared.insert(init.name()).second) continue;
      auto* in = g.add_input();
      in->set_name(init.name());
      auto* tt = in->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(init.data_type());
      auto* shape = tt->mutable_shape();
      for (int64_t d : init.dims()) shape->add_dim()->set_dim_value(d);
      *g.add_initializer() = init;
    }
    // Gradients are where the replicas' work ends: make them visible as outputs.
    absl::flat_hash_set<std::string> outputs, gradients;
    // Each gradient's element count (its weight's, or 0 when the weight is not an
    // initializer), in the order of the Gradient nodes' outputs (the forward order).
    std::vector<std::pair<std::string, int64_t>> gradient_sizes;
    for (const auto& out : g.output()) outputs.insert(out.name());
    const int declared_outputs = g.output_size();
    for (const auto& node : g.node()) {
      if (node.op_type() != "Gradient" || node.domain() != kGradientDomain) continue;
      std::vector<std::string> xs;
      for (const auto& attr : node.attribute()) {
        if (attr.name() == "xs") xs.assign(attr.strings().begin(), attr.strings().end());
        // The differentiated value, visible too: --profile's phases start from it.
        if (attr.name() == "y" && !attr.s().empty() && outputs.insert(attr.s()).second) {
          g.add_output()->set_name(attr.s());
        }
      }
      for (int k = 0; k < node.output_size(); ++k) {
        const std::string& out = node.output(k);
        if (out.empty()) continue;
        gradients.insert(out);
        auto weight = k < static_cast<int>(xs.size()) ? initial_.find(xs[k]) : initial_.end();
        gradient_sizes.emplace_back(out, weight == initial_.end() ? 0 : weight->second.NumElements());
        if (outputs.insert(out).second) g.add_output()->set_name(out);
      }
    }
    OnnxImportOptions import;
    import.check = false;  // Algorithm graphs lean on the main graph; the whole model was checked.
    import.fixed_input_shapes = false;  // Replicas are fed slices of the batch (replicate.h).
    auto imported = ImportOnnxModel(Standalone(model, g), import);
    SL_RETURN_IF_ERROR(imported.status(), "training_info ", i, " algorithm");
    OnnxGraph a = *std::move(imported);
    const std::string prefix = absl::StrCat("algorithm_", i, "/");
    PrefixNodes(prefix, &a.graph);
    algorithm_prefixes_.push_back(prefix);
    {
      // Phases for --profile: the loss's ancestors are the forward pass, what the gradients
      // feed is the update, and the rest (the expanded Gradient nodes) the backward pass.
      absl::flat_hash_map<std::string, const NodeDef*> by_name;
      for (const NodeDef& n : a.graph.node()) by_name[n.name()] = &n;
      std::vector<std::string> stack;
      for (const auto& node : g.node()) {
        if (node.op_type() != "Gradient" || node.domain() != kGradientDomain) continue;
        for (const auto& attr : node.attribute()) {
          if (attr.name() != "y") continue;
          for (const OnnxValue& out : a.outputs) {
            if (out.name == attr.s()) stack.push_back(NodeOf(prefix + out.tensor));
          }
        }
      }
      while (!stack.empty()) {
        const std::string name = stack.back();
        stack.pop_back();
        auto it = by_name.find(name);
        if (it == by_name.end() || !phases_.emplace(name, "forward").second) continue;
        for (const std::string& in : it->second->input()) stack.push_back(NodeOf(in));
      }
      absl::flat_hash_map<std::string, std::vector<std::string>> consumers;
      for (const NodeDef& n : a.graph.node()) {
        for (const std::string& in : n.input()) consumers[NodeOf(in)].push_back(n.name());
      }
      for (const OnnxValue& out : a.outputs) {
        if (!gradients.contains(out.name)) continue;
        for (const std::string& c : consumers[NodeOf(prefix + out.tensor)]) stack.push_back(c);
      }
      while (!stack.empty()) {
        const std::string name = stack.back();
        stack.pop_back();
        auto [it, added] = phases_.emplace(name, "update");
        if (!added) continue;
        for (const std::string& c : consumers[name]) stack.push_back(c);
      }
    }

    // Initializers become reads of their variables; the defaults they carried go.
    absl::flat_hash_map<std::string, std::string> read_of;  // Initializer -> read node.
    absl::flat_hash_set<std::string> dropped, split_inputs;
    for (const OnnxValue& in : a.inputs) {
      if (initial_.count(in.name) == 0) continue;
      const std::string node = prefix + in.tensor;
      read_of[in.name] = node;
      for (NodeDef& n : *a.graph.mutable_node()) {
        if (n.name() != node) continue;
        for (const std::string& d : n.input()) dropped.insert(NodeOf(d));
        const DataType dt = n.attr().at("dtype").type();
        n.clear_input();
        n.set_op("ReadVariable");
        n.mutable_attr()->clear();
        n.set_device(variable_device_);
        AddNodeAttr("shared_name", var_prefix + in.name, &n);
        AddNodeAttr("dtype", dt, &n);
        AddNodeAttr("shape", PartialShape(initial_[in.name].shape()), &n);
      }
    }
    {
      GraphDef kept;
      for (NodeDef& n : *a.graph.mutable_node()) {
        if (dropped.contains(n.name())) continue;
        // The convolutions' weights change every step: their kernels skip Winograd from the
        // first step on (kConvWeightsVaryAttr in kernels/dnnl_conv.h).
        if (n.op() == "Onnx>Conv") AddNodeAttr("_weights_vary", true, &n);
        *kept.add_node() = std::move(n);
      }
      *kept.mutable_library() = a.graph.library();
      *kept.mutable_versions() = a.graph.versions();
      a.graph = std::move(kept);
    }

    Algorithm algo;
    absl::flat_hash_map<std::string, std::string> tensor_of_output;  // ONNX output -> imported tensor.
    for (const OnnxValue& out : a.outputs) tensor_of_output[out.name] = out.tensor;
    // Fed inputs: split over the replicas unless they are scalars.
    std::vector<std::pair<const OnnxValue*, bool>> fed;
    for (const OnnxValue& in : a.inputs) {
      if (initial_.count(in.name) > 0) continue;
      const bool split = parallel && (in.shape.unknown_rank() || in.shape.rank() > 0);
      if (split) split_inputs.insert(prefix + in.tensor);
      fed.emplace_back(&in, split);
    }
    absl::flat_hash_set<std::string> bound;  // Outputs that update_binding assigns.
    for (const auto& b : info.update_binding()) bound.insert(b.value());
    std::function<std::string(const std::string&)> tensor_of = [](const std::string& t) { return t; };
    std::function<std::string(const std::string&, int)> replica_tensor;  // All-reduce only.
    if (allreduce) {
      AllReducePlan plan;
      plan.split_inputs = split_inputs;
      for (int k = 0; k < declared_outputs; ++k) {
        if (!bound.contains(a.outputs[k].name)) plan.reported.push_back(prefix + a.outputs[k].tensor);
      }
      // The backward pass makes the last layer's gradients first.
      for (auto it = gradient_sizes.rbegin(); it != gradient_sizes.rend(); ++it) {
        auto t = tensor_of_output.find(it->first);
        if (t != tensor_of_output.end()) plan.gradients.emplace_back(prefix + t->second, it->second);
      }
      for (const auto& binding : info.update_binding()) {
        auto t = tensor_of_output.find(binding.value());
        auto weight = initial_.find(binding.key());
        if (t != tensor_of_output.end() && weight != initial_.end()) {
          plan.written.emplace_back(prefix + t->second, weight->second.NumElements());
        }
      }
      plan.replica_devices = replica_devices_;
      plan.bucket_bytes = train_.bucket_bytes;
      SL_RETURN_IF_ERROR(ReplicateAllReduce(plan, &a.graph, &tensor_of, &replica_tensor), "training_info ", i,
                         " algorithm, made data-parallel with all-reduce");
    } else if (parallel) {
      ReplicaPlan plan;
      plan.split_inputs = split_inputs;
      for (int k = 0; k < declared_outputs; ++k) {
        if (!bound.contains(a.outputs[k].name)) plan.reported.push_back(prefix + a.outputs[k].tensor);
      }
      for (const OnnxValue& out : a.outputs) {
        if (gradients.contains(out.name)) plan.gradients.insert(ShortTensorName(prefix + out.tensor));
      }
      plan.replica_devices = replica_devices_;
      plan.update_device = variable_device_;
      SL_RETURN_IF_ERROR(Replicate(plan, &a.graph, &tensor_of), "training_info ", i,
                             " algorithm, made data-parallel");
    }
    for (const auto& [in, split] : fed) {
      auto fixed = train_.fixed_feeds.find(in->name);
      // An input with a default (PlaceholderWithDefault) is fed as usual.
      Input input;
      input.name = in->name;
      input.has_default = in->has_default;
      if (split || allreduce) {
        for (size_t r = 0; r < replica_devices_.size(); ++r) {
          input.tensors.push_back(absl::StrCat("replica_", r, "/", prefix, in->tensor));
        }
        input.broadcast = !split;  // All-reduce replicas each have their own copy.
      } else {
        input.tensors.push_back(prefix + in->tensor);  // One, read by every replica (ps).
      }
      if (parallel && fixed != train_.fixed_feeds.end() && !in->has_default) {
        SL_RETURN_IF_ERROR(MakeResident(*in, input.tensors, split, fixed->second, &a.graph), "training_info ", i);
        continue;
      }
      algo.inputs.push_back(std::move(input));
    }
    // The outputs' tensors, averaged over replicas where replicated; made on demand.
    auto fetchable = [&](const OnnxValue& out) -> absl::StatusOr<std::string> {
      std::string t = tensor_of(prefix + out.tensor);
      if (t.empty()) {
        return absl::UnimplementedError(absl::StrCat(
            "training_info ", i, " output '", out.name,
            "' is computed per replica and never averaged (only tensors an update reads are)"));
      }
      return t;
    };
    for (const auto& b : info.update_binding()) {
      if (initial_.count(b.key()) == 0) {
        return absl::InvalidArgumentError(absl::StrCat("update_binding names '", b.key(),
                                                       "', which is not an initializer of the model"));
      }
      const OnnxValue* produced = nullptr;
      for (int k = 0; k < declared_outputs; ++k) {
        if (a.outputs[k].name == b.value()) produced = &a.outputs[k];
      }
      if (produced == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("update_binding reads '", b.value(),
                                                       "', which the algorithm does not output"));
      }
      if (allreduce) {
        // Each replica writes its own copy, from its own (identical) update.
        auto read = read_of.find(b.key());
        for (size_t r = 0; r < replica_devices_.size(); ++r) {
          const std::string at = absl::StrCat("replica_", r, "/");
          NodeDef assign;
          assign.set_name(absl::StrCat(at, prefix, "update/", var_nodes_.at(b.key())));
          assign.set_op("AssignVariable");
          assign.set_device(replica_devices_[r]);
          assign.add_input(replica_tensor(prefix + produced->tensor, static_cast<int>(r)));
          if (read != read_of.end()) assign.add_input("^" + at + read->second);
          AddNodeAttr("shared_name", absl::StrCat(var_prefix, b.key(), "/replica_", r), &assign);
          AddNodeAttr("dtype", initial_[b.key()].dtype(), &assign);
          algo.assign_nodes.push_back(assign.name());
          *a.graph.add_node() = std::move(assign);
        }
        continue;
      }
      SL_ASSIGN_OR_RETURN(std::string value, fetchable(*produced));
      NodeDef assign;
      assign.set_name(absl::StrCat(prefix, "update/", var_nodes_.at(b.key())));
      assign.set_op("AssignVariable");
      assign.set_device(variable_device_);
      assign.add_input(value);
      // Every read of the variable in this step comes before its assign.
      auto read = read_of.find(b.key());
      if (read != read_of.end()) assign.add_input("^" + read->second);
      AddNodeAttr("shared_name", var_prefix + b.key(), &assign);
      AddNodeAttr("dtype", initial_[b.key()].dtype(), &assign);
      algo.assign_nodes.push_back(assign.name());
      *a.graph.add_node() = std::move(assign);
    }
    for (int k = 0; k < declared_outputs; ++k) {
      if (bound.contains(a.outputs[k].name)) continue;
      SL_ASSIGN_OR_RETURN(std::string t, fetchable(a.outputs[k]));
      algo.report_names.push_back(a.outputs[k].name);
      algo.report_tensors.push_back(t);
    }
    for (NodeDef& n : *a.graph.mutable_node()) *graph.add_node() = std::move(n);
    for (auto& f : *a.graph.mutable_library()->mutable_function()) {
      *graph.mutable_library()->add_function() = std::move(f);
    }
    if (a.graph.has_versions()) *graph.mutable_versions() = a.graph.versions();
    algorithms_.push_back(std::move(algo));
  }
  return session_->Create(graph);
}

OnnxTrainer::~OnnxTrainer() {
  if (session_ == nullptr) return;
  std::vector<std::string> targets;
  for (const auto& [name, base] : var_nodes_) {
    for (const std::string& copy : VarCopies(name)) targets.push_back(VarDestroy(copy));
  }
  std::vector<Tensor> out;
  // Best effort: a cluster that went away has nothing left to free.
  session_->Run({}, {}, targets, &out).IgnoreError();
  session_->Close().IgnoreError();
}

absl::Status OnnxTrainer::PushVariables(const std::map<std::string, Tensor>& values) {
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> targets;
  for (const auto& [name, value] : values) {
    auto base = var_nodes_.find(name);
    if (base == var_nodes_.end()) return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not an initializer"));
    feeds.emplace_back(VarInit(base->second), value);
    for (const std::string& copy : VarCopies(name)) targets.push_back(VarAssign(copy));
  }
  std::vector<Tensor> out;
  return session_->Run(feeds, {}, targets, &out);
}

absl::StatusOr<std::map<std::string, Tensor>> OnnxTrainer::Initializers() {
  std::vector<std::string> fetches;
  for (const auto& [name, value] : initial_) fetches.push_back(VarRead(VarCopies(name)[0]));
  std::vector<Tensor> out;
  SL_RETURN_IF_ERROR(session_->Run({}, fetches, {}, &out));
  std::map<std::string, Tensor> values;
  size_t k = 0;
  for (const auto& [name, value] : initial_) values[name] = out[k++];
  return values;
}

absl::Status OnnxTrainer::Initialize() {
  std::map<std::string, Tensor> state;
  for (int i = 0; i < model_.training_info_size(); ++i) {
    const auto& info = model_.training_info(i);
    if (!info.has_initialization() || info.initialization().node_size() == 0) continue;
    if (state.empty()) {
      SL_ASSIGN_OR_RETURN(state, Initializers());
    }
    auto g = ImportOnnxModel(Standalone(model_, info.initialization()));
    SL_RETURN_IF_ERROR(g.status(), "training_info ", i, " initialization");
    SL_ASSIGN_OR_RETURN(auto session, NewSession(options_));
    SL_RETURN_IF_ERROR(session->Create(g->graph));
    SL_ASSIGN_OR_RETURN(std::vector<Tensor> out, RunGraph(session.get(), *g, state));
    for (const auto& b : info.initialization_binding()) {
      bool found = false;
      for (size_t k = 0; k < g->outputs.size(); ++k) {
        if (g->outputs[k].name != b.value()) continue;
        if (state.count(b.key()) == 0) {
          return absl::InvalidArgumentError(absl::StrCat("initialization_binding names '", b.key(),
                                                         "', which is not an initializer"));
        }
        state[b.key()] = out[k];
        found = true;
      }
      if (!found) {
        return absl::InvalidArgumentError(absl::StrCat("initialization_binding reads '", b.value(),
                                                       "', which the initialization does not output"));
      }
    }
  }
  if (state.empty()) return absl::OkStatus();
  return PushVariables(state);
}

std::string OnnxTrainer::PhaseOf(const std::string& node) const {
  absl::string_view name = node;
  if (absl::StartsWith(name, "allreduce/")) return "all-reduce";
  if (absl::StartsWith(name, "average/")) return "update";
  if (absl::ConsumePrefix(&name, "replica_")) {
    const size_t slash = name.find('/');
    if (slash == absl::string_view::npos) return "other";
    name.remove_prefix(slash + 1);
  }
  auto it = phases_.find(std::string(name));
  if (it != phases_.end()) return it->second;
  for (const std::string& prefix : algorithm_prefixes_) {
    if (absl::StartsWith(name, prefix)) {
      return absl::StartsWith(name.substr(prefix.size()), "update/") ? "update" : "backward";
    }
  }
  return "other";
}

absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> OnnxTrainer::Step(
    const std::vector<std::pair<std::string, Tensor>>& feeds) {
  return TracedStep(feeds, nullptr);
}

absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> OnnxTrainer::TracedStep(
    const std::vector<std::pair<std::string, Tensor>>& feeds, RunMetadata* metadata) {
  std::vector<std::pair<std::string, Tensor>> reported;
  for (const Algorithm& a : algorithms_) {
    std::vector<std::pair<std::string, Tensor>> run_feeds;
    for (const Input& in : a.inputs) {
      const Tensor* value = nullptr;
      for (const auto& [name, t] : feeds) {
        if (name == in.name) value = &t;
      }
      if (value == nullptr) {
        if (in.has_default) continue;
        return absl::InvalidArgumentError(absl::StrCat("no value for input '", in.name, "'"));
      }
      if (in.tensors.size() == 1 || in.broadcast) {
        for (const std::string& t : in.tensors) run_feeds.emplace_back(t, *value);
        continue;
      }
      SL_ASSIGN_OR_RETURN(std::vector<Tensor> parts,
                          SplitBatch(in.name, *value, static_cast<int>(in.tensors.size())));
      for (size_t r = 0; r < parts.size(); ++r) run_feeds.emplace_back(in.tensors[r], parts[r]);
    }
    std::vector<Tensor> out;
    if (metadata == nullptr) {
      SL_RETURN_IF_ERROR(session_->Run(run_feeds, a.report_tensors, a.assign_nodes, &out));
    } else {
      RunOptions trace;
      trace.set_trace_level(RunOptions::FULL_TRACE);
      RunMetadata one;
      SL_RETURN_IF_ERROR(session_->Run(trace, run_feeds, a.report_tensors, a.assign_nodes, &out, &one));
      for (auto& dev : *one.mutable_step_stats()->mutable_dev_stats()) {
        *metadata->mutable_step_stats()->add_dev_stats() = std::move(dev);
      }
    }
    for (size_t k = 0; k < out.size(); ++k) reported.emplace_back(a.report_names[k], out[k]);
  }
  return reported;
}

absl::StatusOr<std::string> OnnxTrainer::SerializeState() {
  SL_ASSIGN_OR_RETURN(auto state, Initializers());
  onnx::ModelProto m = model_;
  for (auto& init : *m.mutable_graph()->mutable_initializer()) {
    auto it = state.find(init.name());
    if (it == state.end()) continue;
    const std::string name = init.name();
    SL_RETURN_IF_ERROR(TensorToOnnx(it->second, name, &init));
  }
  std::string bytes;
  if (!m.SerializeToString(&bytes)) return absl::InternalError("the trained model does not serialize (over 2 GiB?)");
  return bytes;
}

absl::Status OnnxTrainer::Save(const std::string& path) {
  SL_ASSIGN_OR_RETURN(std::string bytes, SerializeState());
  std::ofstream out(path, std::ios::binary);
  if (!out || !out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  }
  return absl::OkStatus();
}

absl::Status OnnxTrainer::Restore(const std::string& path) {
  SL_ASSIGN_OR_RETURN(onnx::ModelProto saved, LoadOnnxModel(path));
  std::map<std::string, Tensor> values;
  for (const auto& init : saved.graph().initializer()) {
    auto expected = initial_.find(init.name());
    if (expected == initial_.end()) continue;
    SL_ASSIGN_OR_RETURN(Tensor t, TensorFromOnnx(init), "'", path, "' initializer '", init.name(), "'");
    if (t.dtype() != expected->second.dtype() || t.shape() != expected->second.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", path, "' has initializer '", init.name(), "' as ", DataTypeString(t.dtype()), t.shape().DebugString(),
          " where the model has ", DataTypeString(expected->second.dtype()), expected->second.shape().DebugString()));
    }
    values[init.name()] = std::move(t);
  }
  for (const auto& [name, value] : initial_) {
    if (values.count(name) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("'", path, "' has no initializer '", name, "'"));
    }
  }
  return PushVariables(values);
}

}  // namespace sluice
