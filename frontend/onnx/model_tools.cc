#include "frontend/onnx/model_tools.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "framework/status.h"
#include "frontend/onnx/attr_checks.h"
#include "frontend/onnx/isolated_inference.h"
#include "frontend/onnx/onnx_errors.h"
#include "frontend/onnx/onnx_tensor.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

namespace sluice {
namespace fs = std::filesystem;
namespace {

// Runs a call into the ONNX library, which reports errors by throwing.
// Names a subgraph (If branch, Loop or Scan body) reads from enclosing graphs.
void CollectOuterNames(const onnx::GraphProto& g, std::set<std::string>* outer) {
  absl::flat_hash_set<std::string> local;
  for (const auto& v : g.input()) local.insert(v.name());
  for (const auto& t : g.initializer()) local.insert(t.name());
  for (const auto& t : g.sparse_initializer()) local.insert(t.values().name());
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) local.insert(o);
  }
  for (const auto& n : g.node()) {
    std::set<std::string> reads(n.input().begin(), n.input().end());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectOuterNames(a.g(), &reads);
      for (const auto& sub : a.graphs()) CollectOuterNames(sub, &reads);
    }
    for (const auto& r : reads) {
      if (!r.empty() && !local.contains(r)) outer->insert(r);
    }
  }
}

// The tensors a node reads: its inputs and what its subgraphs capture.
std::set<std::string> NodeReads(const onnx::NodeProto& n) {
  std::set<std::string> reads;
  for (const auto& in : n.input()) {
    if (!in.empty()) reads.insert(in);
  }
  for (const auto& a : n.attribute()) {
    if (a.has_g()) CollectOuterNames(a.g(), &reads);
    for (const auto& sub : a.graphs()) CollectOuterNames(sub, &reads);
  }
  return reads;
}

void CollectOpTypes(const onnx::GraphProto& g, std::set<std::pair<std::string, std::string>>* ops) {
  for (const auto& n : g.node()) {
    ops->emplace(n.domain(), n.op_type());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectOpTypes(a.g(), ops);
      for (const auto& sub : a.graphs()) CollectOpTypes(sub, ops);
    }
  }
}

// Model-local functions that `graph` calls, directly or through other functions.
void KeepCalledFunctions(const onnx::ModelProto& model, const onnx::GraphProto& graph,
                         onnx::ModelProto* out) {
  std::set<std::pair<std::string, std::string>> called;
  CollectOpTypes(graph, &called);
  std::vector<bool> kept(model.functions_size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = 0; i < model.functions_size(); ++i) {
      const auto& f = model.functions(i);
      if (kept[i] || !called.count({f.domain(), f.name()})) continue;
      kept[i] = changed = true;
      for (const auto& n : f.node()) called.emplace(n.domain(), n.op_type());
    }
  }
  for (int i = 0; i < model.functions_size(); ++i) {
    if (kept[i]) *out->add_functions() = model.functions(i);
  }
}

bool HasElemType(const onnx::ValueInfoProto& vi) {
  return vi.type().value_case() != onnx::TypeProto::VALUE_NOT_SET &&
         (!vi.type().has_tensor_type() || vi.type().tensor_type().elem_type() != 0);
}

// A name safe as a file name on any common file system.
std::string SanitizeFileName(const std::string& name) {
  std::string out;
  for (char c : name.substr(0, 200)) {
    out += (absl::ascii_isalnum(c) || c == '_' || c == '-' || c == '.') ? c : '_';
  }
  if (out.empty() || out[0] == '.') out = "tensor_" + out;
  return out;
}

// `location` must stay inside `dir`, and nothing on the way may be a symbolic link (the
// loader refuses those, and writing through one could clobber a file elsewhere).
absl::Status CheckLocation(const fs::path& dir, const std::string& location) {
  auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("external data location '", location, "' ", why));
  };
  if (location.empty()) return refuse("is empty");
  fs::path rel(location);
  if (rel.is_absolute()) return refuse("is absolute; it must be relative to the model's folder");
  for (const auto& part : rel) {
    if (part == "..") return refuse("leaves the model's folder");
  }
  fs::path walk = dir;
  for (const auto& part : rel) {
    walk /= part;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(walk, ec))) return refuse("is or passes through a symbolic link");
  }
  return absl::OkStatus();
}

void CollectTensors(onnx::GraphProto* g, std::vector<onnx::TensorProto*>* out) {
  for (auto& t : *g->mutable_initializer()) out->push_back(&t);
  for (auto& n : *g->mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_t()) out->push_back(a.mutable_t());
      for (auto& t : *a.mutable_tensors()) out->push_back(&t);
      if (a.has_g()) CollectTensors(a.mutable_g(), out);
      for (auto& sub : *a.mutable_graphs()) CollectTensors(&sub, out);
    }
  }
}

// The tensor's bytes as raw_data (typed fields converted); false for tensors that cannot be
// stored externally (strings, types Sluice does not know).
bool MakeRaw(onnx::TensorProto* t) {
  if (t->data_type() == onnx::TensorProto::STRING) return false;
  if (t->has_raw_data()) return true;
  auto value = TensorFromOnnx(*t);
  if (!value.ok()) return false;
  onnx::TensorProto converted;
  if (!TensorToOnnx(*value, t->name(), &converted).ok() || !converted.has_raw_data()) return false;
  t->clear_float_data();
  t->clear_int32_data();
  t->clear_int64_data();
  t->clear_double_data();
  t->clear_uint64_data();
  t->set_raw_data(std::move(*converted.mutable_raw_data()));
  return true;
}

void SetExternal(onnx::TensorProto* t, const std::string& location, int64_t offset) {
  const int64_t length = static_cast<int64_t>(t->raw_data().size());
  t->clear_external_data();
  for (auto [key, value] : {std::pair<const char*, std::string>{"location", location},
                            {"offset", absl::StrCat(offset)},
                            {"length", absl::StrCat(length)}}) {
    auto* kv = t->add_external_data();
    kv->set_key(key);
    kv->set_value(value);
  }
  t->clear_raw_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
}

absl::Status WriteAll(std::ofstream& out, const std::string& data, const fs::path& file) {
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) return absl::InternalError(absl::StrCat("cannot write '", file.string(), "'"));
  return absl::OkStatus();
}

// ONNX 1.17's downgrade adapters that turn an input into an attribute (the axes of the
// Reduce ops and Squeeze/Unsqueeze, Split's split, Reshape's shape) read an initializer's
// int64_data only: axes in raw_data became no axes at all, a reduction over every axis. Small
// int64 initializers go to the converter in int64_data instead, the same values.
constexpr int kMaxInt64InitializerToRetype = 1024;

void Int64InitializersAsTypedData(onnx::GraphProto* g) {
  for (auto& t : *g->mutable_initializer()) {
    if (t.data_type() != onnx::TensorProto::INT64 || !t.has_raw_data() || t.raw_data().size() % 8 != 0 ||
        t.raw_data().size() / 8 > kMaxInt64InitializerToRetype) {
      continue;
    }
    std::vector<int64_t> values(t.raw_data().size() / 8);
    if (!values.empty()) std::memcpy(values.data(), t.raw_data().data(), t.raw_data().size());
    t.clear_raw_data();
    for (int64_t v : values) t.add_int64_data(v);
  }
  for (auto& n : *g->mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) Int64InitializersAsTypedData(a.mutable_g());
      for (auto& sub : *a.mutable_graphs()) Int64InitializersAsTypedData(&sub);
    }
  }
}

}  // namespace

absl::Status CheckOnnxModel(const onnx::ModelProto& model, bool full) {
  SL_RETURN_IF_ERROR(CheckAttrsBeforeOnnx(model));
  SL_RETURN_IF_ERROR(CallOnnx("ONNX checker", [&] { onnx::checker::check_model(model); }));
  if (full) {
    onnx::ModelProto copy = model;
    SL_RETURN_IF_ERROR(InferOnnxShapes(&copy, /*strict=*/true));
  }
  return absl::OkStatus();
}

absl::Status InferOnnxShapes(onnx::ModelProto* model, bool strict) {
  SL_RETURN_IF_ERROR(CheckAttrsBeforeOnnx(*model));
  onnx::ShapeInferenceOptions options(/*check_type_val=*/strict, /*strict_mode_val=*/strict ? 1 : 0);
  return InferShapesIsolated(model, "ONNX shape inference", [options](onnx::ModelProto& m) {
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), options);
  });
}

absl::StatusOr<onnx::ModelProto> ConvertOnnxVersion(onnx::ModelProto model, int opset) {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const int newest = ranges.count("") ? ranges.at("").second : 0;
  if (opset < 1 || opset > newest) {
    return absl::InvalidArgumentError(
        absl::StrCat("opset ", opset, " is outside the ai.onnx opsets the ONNX version converter knows (1 to ", newest, ")"));
  }
  bool imports_onnx = false;
  for (const auto& imp : model.opset_import()) imports_onnx |= imp.domain().empty() || imp.domain() == "ai.onnx";
  if (!imports_onnx) return absl::InvalidArgumentError("the model imports no ai.onnx opset to convert from");
  // The converter trusts its input as shape inference does; the checker sees the model first.
  SL_RETURN_IF_ERROR(CheckOnnxModel(model));
  Int64InitializersAsTypedData(model.mutable_graph());
  onnx::ModelProto converted;
  SL_RETURN_IF_ERROR(CallOnnx(absl::StrCat("the ONNX version converter to opset ", opset), [&] {
    converted = onnx::version_conversion::ConvertVersion(model, opset);
  }));
  return converted;
}

absl::StatusOr<onnx::ModelProto> ExtractOnnxModel(const onnx::ModelProto& model,
                                                  const std::vector<std::string>& inputs,
                                                  const std::vector<std::string>& outputs) {
  const onnx::GraphProto& g = model.graph();
  if (outputs.empty()) return absl::InvalidArgumentError("no outputs given to extract");
  absl::flat_hash_map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i) {
    for (const auto& o : g.node(i).output()) {
      if (!o.empty()) producer[o] = i;
    }
  }
  absl::flat_hash_map<std::string, int> initializer;
  for (int i = 0; i < g.initializer_size(); ++i) initializer[g.initializer(i).name()] = i;
  absl::flat_hash_set<std::string> graph_inputs;
  for (const auto& v : g.input()) graph_inputs.insert(v.name());
  auto exists = [&](const std::string& name) {
    return producer.contains(name) || initializer.contains(name) || graph_inputs.contains(name);
  };
  absl::flat_hash_set<std::string> given;
  for (const auto& [names, kind] : {std::pair{&inputs, "input"}, std::pair{&outputs, "output"}}) {
    absl::flat_hash_set<std::string> seen;
    for (const std::string& name : *names) {
      if (!exists(name)) {
        return absl::NotFoundError(absl::StrCat(kind, " '", name, "': no tensor of that name in the model's graph"));
      }
      if (!seen.insert(name).second) return absl::InvalidArgumentError(absl::StrCat(kind, " '", name, "' given twice"));
    }
  }
  given.insert(inputs.begin(), inputs.end());

  // Walk back from each output to the given inputs.
  std::vector<bool> keep_node(g.node_size(), false);
  std::vector<bool> keep_init(g.initializer_size(), false);
  absl::flat_hash_set<std::string> visited;
  absl::flat_hash_map<std::string, std::string> read_for;  // Tensor -> the node output that needs it.
  // The nearest tensors on the way from `name` to the output, for error messages.
  auto path = [&](const std::string& name) {
    std::vector<std::string> via;
    auto it = read_for.find(name);
    for (; it != read_for.end() && via.size() < 3; it = read_for.find(it->second)) {
      via.push_back(absl::StrCat("'", it->second, "'"));
    }
    if (via.empty()) return std::string();
    return absl::StrCat(" (needed for ", absl::StrJoin(via, " <- "), it != read_for.end() ? " <- ...)" : ")");
  };
  for (const std::string& out : outputs) {
    std::vector<std::string> stack = {out};
    while (!stack.empty()) {
      std::string name = std::move(stack.back());
      stack.pop_back();
      if (given.contains(name) || !visited.insert(name).second) continue;
      if (auto p = producer.find(name); p != producer.end()) {
        keep_node[p->second] = true;
        for (const std::string& in : NodeReads(g.node(p->second))) {
          if (!visited.contains(in)) read_for.emplace(in, name);
          stack.push_back(in);
        }
      } else if (auto i = initializer.find(name); i != initializer.end()) {
        keep_init[i->second] = true;
      } else if (graph_inputs.contains(name)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "output '", out, "' depends on '", name, "'", path(name),
            ", an input of the model that is not among the given inputs"));
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            "output '", out, "' depends on '", name, "'", path(name),
            ", which no node computes and which is neither an initializer nor a given input"));
      }
    }
  }

  // Types of the new inputs and outputs come from the model, then from shape inference.
  onnx::ModelProto inferred = model;
  SL_RETURN_IF_ERROR(InferOnnxShapes(&inferred));
  absl::flat_hash_map<std::string, const onnx::ValueInfoProto*> value_info;
  for (const auto* list : {&inferred.graph().input(), &inferred.graph().output(), &inferred.graph().value_info()}) {
    for (const auto& vi : *list) value_info.emplace(vi.name(), &vi);
  }
  auto typed = [&](const std::string& name, const char* kind) -> absl::StatusOr<onnx::ValueInfoProto> {
    auto it = value_info.find(name);
    if (it != value_info.end() && HasElemType(*it->second)) return *it->second;
    if (auto i = initializer.find(name); i != initializer.end()) {
      const onnx::TensorProto& t = g.initializer(i->second);
      onnx::ValueInfoProto vi;
      vi.set_name(name);
      auto* tt = vi.mutable_type()->mutable_tensor_type();
      tt->set_elem_type(t.data_type());
      for (int64_t d : t.dims()) tt->mutable_shape()->add_dim()->set_dim_value(d);
      return vi;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        kind, " '", name, "': its type is unknown (the model has no value_info for it and shape inference "
        "could not infer it)"));
  };

  onnx::ModelProto result;
  result.set_ir_version(model.ir_version());
  *result.mutable_opset_import() = model.opset_import();
  result.set_producer_name(model.producer_name());
  result.set_producer_version(model.producer_version());
  result.set_domain(model.domain());
  result.set_model_version(model.model_version());
  result.set_doc_string(model.doc_string());
  *result.mutable_metadata_props() = model.metadata_props();
  onnx::GraphProto* sub = result.mutable_graph();
  sub->set_name(g.name());
  absl::flat_hash_set<std::string> io(given.begin(), given.end());
  io.insert(outputs.begin(), outputs.end());
  for (const std::string& name : inputs) {
    SL_ASSIGN_OR_RETURN(*sub->add_input(), typed(name, "input"));
  }
  for (const std::string& name : outputs) {
    SL_ASSIGN_OR_RETURN(*sub->add_output(), typed(name, "output"));
  }
  absl::flat_hash_set<std::string> used;
  for (int i = 0; i < g.node_size(); ++i) {
    if (!keep_node[i]) continue;
    *sub->add_node() = g.node(i);
    for (const auto& in : g.node(i).input()) used.insert(in);
    for (const auto& o : g.node(i).output()) used.insert(o);
  }
  for (int i = 0; i < g.initializer_size(); ++i) {
    if (!keep_init[i]) continue;
    *sub->add_initializer() = g.initializer(i);
    // Before IR version 4 every initializer is also a graph input.
    if (model.ir_version() < 4 && graph_inputs.contains(g.initializer(i).name())) {
      SL_ASSIGN_OR_RETURN(*sub->add_input(), typed(g.initializer(i).name(), "initializer"));
    }
  }
  for (const auto& vi : inferred.graph().value_info()) {
    if (used.contains(vi.name()) && !io.contains(vi.name()) && !initializer.contains(vi.name())) {
      *sub->add_value_info() = vi;
    }
  }
  KeepCalledFunctions(model, *sub, &result);
  SL_RETURN_IF_ERROR(CheckOnnxModel(result), "the extracted model");
  return result;
}

absl::StatusOr<std::vector<OnnxDim>> ParseOnnxDims(absl::string_view spec) {
  std::vector<OnnxDim> dims;
  if (absl::StripAsciiWhitespace(spec).empty()) return dims;  // A scalar.
  for (absl::string_view part : absl::StrSplit(spec, ',')) {
    part = absl::StripAsciiWhitespace(part);
    OnnxDim d;
    int64_t v;
    if (part == "?" || part == "-1") {
      // Unknown.
    } else if (absl::SimpleAtoi(part, &v)) {
      if (v < 0) return absl::InvalidArgumentError(absl::StrCat("bad dim '", part, "' in '", spec, "'"));
      d.value = v;
    } else if (!part.empty() && (absl::ascii_isalpha(part[0]) || part[0] == '_') &&
               std::all_of(part.begin(), part.end(), [](char c) {
                 return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '-';
               })) {
      d.param = std::string(part);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad dim '", part, "' in '", spec, "': want an integer >= 0, a name, or -1 / ? for unknown"));
    }
    dims.push_back(std::move(d));
  }
  return dims;
}

absl::Status SetOnnxDims(const OnnxDimsByName& inputs, const OnnxDimsByName& outputs,
                         onnx::ModelProto* model) {
  onnx::ModelProto work = *model;
  onnx::GraphProto* g = work.mutable_graph();
  std::set<std::string> params;  // Symbolic dims in use, so that new ones are unique.
  for (const auto* list : {&g->input(), &g->output()}) {
    for (const auto& vi : *list) {
      for (const auto& d : vi.type().tensor_type().shape().dim()) {
        if (d.has_dim_param()) params.insert(d.dim_param());
      }
    }
  }
  for (const auto& [name, dims] : inputs) {
    for (const auto& d : dims) params.insert(d.param);
  }
  for (const auto& [name, dims] : outputs) {
    for (const auto& d : dims) params.insert(d.param);
  }
  std::set<int> named_outputs;
  auto apply = [&](const OnnxDimsByName& specs, bool is_input) -> absl::Status {
    const char* kind = is_input ? "input" : "output";
    auto* list = is_input ? g->mutable_input() : g->mutable_output();
    std::set<std::string> seen;
    for (const auto& [name, dims] : specs) {
      if (!seen.insert(name).second) return absl::InvalidArgumentError(absl::StrCat(kind, " '", name, "' given twice"));
      int index = -1;
      for (int i = 0; i < list->size(); ++i) {
        if (list->Get(i).name() == name) index = i;
      }
      if (index < 0) {
        std::vector<std::string> names;
        for (const auto& vi : *list) names.push_back(vi.name());
        return absl::NotFoundError(absl::StrCat("the model has no ", kind, " named '", name, "' (its ", kind,
                                                "s: ", absl::StrJoin(names, ", "), ")"));
      }
      if (!is_input) named_outputs.insert(index);
      onnx::ValueInfoProto* vi = list->Mutable(index);
      if (!vi->type().has_tensor_type()) {
        return absl::InvalidArgumentError(absl::StrCat(kind, " '", name, "' is not a tensor"));
      }
      auto* tt = vi->mutable_type()->mutable_tensor_type();
      if (tt->has_shape() && tt->shape().dim_size() != static_cast<int>(dims.size())) {
        return absl::InvalidArgumentError(absl::StrCat(kind, " '", name, "' has rank ", tt->shape().dim_size(),
                                                       " in the model, but ", dims.size(), " dims were given"));
      }
      if (!tt->has_shape()) {
        for (size_t i = 0; i < dims.size(); ++i) tt->mutable_shape()->add_dim();
      }
      for (size_t i = 0; i < dims.size(); ++i) {
        auto* d = tt->mutable_shape()->mutable_dim(static_cast<int>(i));
        if (dims[i].value >= 0) {
          d->set_dim_value(dims[i].value);
        } else if (!dims[i].param.empty()) {
          d->set_dim_param(dims[i].param);
        } else {
          std::string fresh = absl::StrCat(name, "_", i);
          for (int k = 2; params.count(fresh); ++k) fresh = absl::StrCat(name, "_", i, "_", k);
          params.insert(fresh);
          d->set_dim_param(fresh);
        }
      }
    }
    return absl::OkStatus();
  };
  SL_RETURN_IF_ERROR(apply(inputs, true));
  SL_RETURN_IF_ERROR(apply(outputs, false));

  // value_info holds shapes derived from the old dims; outputs not named get theirs again
  // from inference (the old one back where inference finds none).
  g->clear_value_info();
  std::map<int, onnx::TensorShapeProto> old_shapes;
  for (int i = 0; i < g->output_size(); ++i) {
    if (named_outputs.count(i) || !g->output(i).type().tensor_type().has_shape()) continue;
    auto* tt = g->mutable_output(i)->mutable_type()->mutable_tensor_type();
    old_shapes[i] = tt->shape();
    tt->clear_shape();
  }
  onnx::ModelProto before_strict = work;
  absl::Status strict = InferOnnxShapes(&work, /*strict=*/true);
  if (!strict.ok()) {
    // A model that strict inference rejects even without the new dims gets the lenient kind;
    // otherwise the new dims are what it trips over.
    onnx::ModelProto original = *model;
    if (InferOnnxShapes(&original, /*strict=*/true).ok()) {
      return AddContext(strict, "the new dims do not fit the model");
    }
    work = std::move(before_strict);
    SL_RETURN_IF_ERROR(InferOnnxShapes(&work, /*strict=*/false));
    g = work.mutable_graph();
  }
  for (auto& [i, shape] : old_shapes) {
    auto* tt = g->mutable_output(i)->mutable_type()->mutable_tensor_type();
    if (!tt->has_shape()) *tt->mutable_shape() = shape;
  }
  SL_RETURN_IF_ERROR(CheckOnnxModel(work));
  *model = std::move(work);
  return absl::OkStatus();
}

absl::Status SaveOnnxModel(const onnx::ModelProto& model, const std::string& path) {
  const size_t size = model.ByteSizeLong();
  if (size > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the model is ", size, " bytes, past protobuf's 2 GiB limit; store its tensors as external data"));
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !model.SerializeToOstream(&out) || !out.flush()) {
    return absl::InternalError(absl::StrCat("cannot write '", path, "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ExternalizeSummary> SaveOnnxModelExternal(onnx::ModelProto model, const std::string& path,
                                                         const ExternalizeOptions& options) {
  if (options.threshold < 0) {
    return absl::InvalidArgumentError(absl::StrCat("threshold ", options.threshold, " is negative"));
  }
  if (options.file_per_tensor && !options.location.empty()) {
    return absl::InvalidArgumentError("one file's location and a file per tensor were both asked for");
  }
  const fs::path model_path(path);
  const std::string model_file = model_path.filename().string();
  if (model_file.empty()) return absl::InvalidArgumentError(absl::StrCat("'", path, "' names no file"));
  fs::path dir = model_path.parent_path();
  if (dir.empty()) dir = ".";

  std::vector<onnx::TensorProto*> tensors, moving;
  CollectTensors(model.mutable_graph(), &tensors);
  ExternalizeSummary summary;
  for (onnx::TensorProto* t : tensors) {
    if (t->data_location() == onnx::TensorProto::EXTERNAL) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", t->name(), "' already has external data; load the model with its data first"));
    }
    if (!t->has_raw_data() && t->data_type() != onnx::TensorProto::STRING) {
      // Only convert typed fields that could reach the threshold (at least a byte a value).
      int64_t values = t->float_data_size() + t->int32_data_size() + t->int64_data_size() +
                       t->double_data_size() + t->uint64_data_size();
      if (values * 8 < options.threshold) continue;
    }
    if (!MakeRaw(t) || static_cast<int64_t>(t->raw_data().size()) < options.threshold) continue;
    moving.push_back(t);
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create folder '", dir.string(), "': ", ec.message()));

  auto open = [&](const std::string& location, std::ofstream* out) -> absl::Status {
    SL_RETURN_IF_ERROR(CheckLocation(dir, location));
    if (fs::path(location).lexically_normal() == fs::path(model_file)) {
      return absl::InvalidArgumentError(absl::StrCat("external data location '", location, "' is the model file itself"));
    }
    fs::path file = dir / location;
    if (file.has_parent_path()) fs::create_directories(file.parent_path(), ec);
    out->open(file, std::ios::binary | std::ios::trunc);
    if (!*out) return absl::InternalError(absl::StrCat("cannot write '", file.string(), "'"));
    summary.files.push_back(location);
    return absl::OkStatus();
  };
  if (!moving.empty() && !options.file_per_tensor) {
    const std::string location = options.location.empty() ? model_file + ".data" : options.location;
    std::ofstream out;
    SL_RETURN_IF_ERROR(open(location, &out));
    int64_t offset = 0;
    for (onnx::TensorProto* t : moving) {
      const int64_t aligned = (offset + kExternalAlignment - 1) / kExternalAlignment * kExternalAlignment;
      SL_RETURN_IF_ERROR(WriteAll(out, std::string(aligned - offset, '\0'), dir / location));
      SL_RETURN_IF_ERROR(WriteAll(out, t->raw_data(), dir / location));
      offset = aligned + static_cast<int64_t>(t->raw_data().size());
      summary.bytes += static_cast<int64_t>(t->raw_data().size());
      SetExternal(t, location, aligned);
      ++summary.tensors;
    }
    if (!out.flush()) return absl::InternalError(absl::StrCat("cannot write '", (dir / location).string(), "'"));
  } else if (!moving.empty()) {
    // Tensor names as file names, made unique ignoring case (for case-insensitive file systems).
    std::set<std::string> taken = {absl::AsciiStrToLower(model_file)};
    for (onnx::TensorProto* t : moving) {
      const std::string base = SanitizeFileName(t->name());
      std::string location = base;
      for (int k = 1; taken.count(absl::AsciiStrToLower(location)); ++k) location = absl::StrCat(base, ".", k);
      taken.insert(absl::AsciiStrToLower(location));
      std::ofstream out;
      SL_RETURN_IF_ERROR(open(location, &out));
      SL_RETURN_IF_ERROR(WriteAll(out, t->raw_data(), dir / location));
      if (!out.flush()) return absl::InternalError(absl::StrCat("cannot write '", (dir / location).string(), "'"));
      summary.bytes += static_cast<int64_t>(t->raw_data().size());
      SetExternal(t, location, 0);
      ++summary.tensors;
    }
  }
  SL_RETURN_IF_ERROR(SaveOnnxModel(model, path));
  return summary;
}

}  // namespace sluice
