#include "frontend/onnx/trainer.h"

#include <fstream>

#include "absl/container/flat_hash_set.h"

#include "absl/strings/str_cat.h"
#include "framework/status.h"
#include "frontend/onnx/model_loader.h"
#include "frontend/onnx/onnx_tensor.h"

namespace sluice {
namespace {

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

}  // namespace

absl::StatusOr<std::unique_ptr<OnnxTrainer>> OnnxTrainer::Load(const std::string& path,
                                                               const SessionOptions& options) {
  auto trainer = std::unique_ptr<OnnxTrainer>(new OnnxTrainer());
  SL_ASSIGN_OR_RETURN(trainer->model_, LoadOnnxModel(path));
  trainer->options_ = options;
  const onnx::ModelProto& model = trainer->model_;
  if (model.training_info_size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' has no training_info to train with"));
  }
  for (const auto& init : model.graph().initializer()) {
    auto t = TensorFromOnnx(init);
    if (!t.ok()) return AddContext(t.status(), absl::StrCat("initializer '", init.name(), "'"));
    trainer->state_[init.name()] = *t;
  }
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
    Algorithm a;
    OnnxImportOptions import;
    import.check = false;  // Algorithm graphs lean on the main graph; the whole model was checked.
    auto imported = ImportOnnxModel(Standalone(model, g), import);
    if (!imported.ok()) return AddContext(imported.status(), absl::StrCat("training_info ", i, " algorithm"));
    a.graph = *std::move(imported);
    for (const auto& b : info.update_binding()) {
      if (!trainer->state_.count(b.key()) > 0) {
        return absl::InvalidArgumentError(absl::StrCat("update_binding names '", b.key(),
                                                       "', which is not an initializer of the model"));
      }
      bool produced = false;
      for (const auto& out : a.graph.outputs) produced |= out.name == b.value();
      if (!produced) {
        return absl::InvalidArgumentError(absl::StrCat("update_binding reads '", b.value(),
                                                       "', which the algorithm does not output"));
      }
      a.update_binding[b.key()] = b.value();
    }
    SL_ASSIGN_OR_RETURN(a.session, NewSession(options));
    SL_RETURN_IF_ERROR(a.session->Create(a.graph.graph));
    trainer->algorithms_.push_back(std::move(a));
  }
  return trainer;
}

absl::Status OnnxTrainer::Initialize() {
  for (int i = 0; i < model_.training_info_size(); ++i) {
    const auto& info = model_.training_info(i);
    if (!info.has_initialization() || info.initialization().node_size() == 0) continue;
    auto g = ImportOnnxModel(Standalone(model_, info.initialization()));
    if (!g.ok()) return AddContext(g.status(), absl::StrCat("training_info ", i, " initialization"));
    SL_ASSIGN_OR_RETURN(auto session, NewSession(options_));
    SL_RETURN_IF_ERROR(session->Create(g->graph));
    SL_ASSIGN_OR_RETURN(std::vector<Tensor> out, RunGraph(session.get(), *g, state_));
    for (const auto& b : info.initialization_binding()) {
      bool found = false;
      for (size_t k = 0; k < g->outputs.size(); ++k) {
        if (g->outputs[k].name != b.value()) continue;
        if (state_.count(b.key()) == 0) {
          return absl::InvalidArgumentError(absl::StrCat("initialization_binding names '", b.key(),
                                                         "', which is not an initializer"));
        }
        state_[b.key()] = out[k];
        found = true;
      }
      if (!found) {
        return absl::InvalidArgumentError(absl::StrCat("initialization_binding reads '", b.value(),
                                                       "', which the initialization does not output"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<std::string, Tensor>>> OnnxTrainer::Step(
    const std::vector<std::pair<std::string, Tensor>>& feeds) {
  std::vector<std::pair<std::string, Tensor>> reported;
  for (Algorithm& a : algorithms_) {
    std::map<std::string, Tensor> values = state_;
    for (const auto& [name, t] : feeds) values[name] = t;
    SL_ASSIGN_OR_RETURN(std::vector<Tensor> out, RunGraph(a.session.get(), a.graph, values));
    std::map<std::string, const Tensor*> by_name;
    for (size_t k = 0; k < out.size(); ++k) by_name[a.graph.outputs[k].name] = &out[k];
    absl::flat_hash_set<std::string> bound;
    for (const auto& [init, output] : a.update_binding) {
      const Tensor& v = *by_name.at(output);
      if (v.dtype() != state_[init].dtype() || v.shape() != state_[init].shape()) {
        return absl::InvalidArgumentError(absl::StrCat("update of '", init, "' from '", output, "' is ",
                                                       DataTypeString(v.dtype()), " ", v.shape().DebugString(),
                                                       ", the initializer is ", DataTypeString(state_[init].dtype()),
                                                       " ", state_[init].shape().DebugString()));
      }
      state_[init] = v;
      bound.insert(output);
    }
    for (size_t k = 0; k < out.size(); ++k) {
      if (!bound.contains(a.graph.outputs[k].name)) reported.emplace_back(a.graph.outputs[k].name, out[k]);
    }
  }
  return reported;
}

absl::Status OnnxTrainer::Save(const std::string& path) const {
  onnx::ModelProto m = model_;
  for (auto& init : *m.mutable_graph()->mutable_initializer()) {
    auto it = state_.find(init.name());
    if (it == state_.end()) continue;
    const std::string name = init.name();
    SL_RETURN_IF_ERROR(TensorToOnnx(it->second, name, &init));
  }
  std::ofstream out(path, std::ios::binary);
  if (!out || !m.SerializeToOstream(&out)) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

}  // namespace sluice
