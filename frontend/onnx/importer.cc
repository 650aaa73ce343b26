#include "frontend/onnx/importer.h"

#include <cctype>
#include <optional>
#include <memory>
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "framework/checked_size.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "frontend/onnx/attr_checks.h"
#include "frontend/onnx/isolated_inference.h"
#include "frontend/onnx/model_loader.h"
#include "frontend/onnx/onnx_errors.h"
#include "ops/op_registry.h"
#include "frontend/onnx/onnx_tensor.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace sluice {
namespace {

// The newest default-domain opset this build converts: ONNX 1.17 knows opsets to 22, but the
// converters stop at 18; a newer model fails here with a clear error instead of reaching
// converters that would read its ops with opset 18's meaning.
constexpr int kMaxOpset = 22;

std::string Sanitize(absl::string_view name) {
  std::string out;
  for (char c : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-';
    out.push_back(ok ? c : '_');
  }
  if (out.empty() || out[0] == '.' || out[0] == '/' || out[0] == '-') out = "n" + out;
  return out;
}

std::string CanonicalDomain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

PartialShape ShapeOf(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return PartialShape();
  DimVector dims;
  for (const auto& d : type.tensor_type().shape().dim()) {
    dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  return PartialShape(dims);
}

// The Sluice dtype of a value of ONNX type `type`: sequences and optionals are variants.
absl::StatusOr<DataType> DtypeOfOnnxType(const onnx::TypeProto& type, const std::string& name) {
  if (type.has_tensor_type()) {
    auto dt = DataTypeFromOnnx(type.tensor_type().elem_type());
    SL_RETURN_IF_ERROR(dt.status(), "value '", name, "'");
    return dt;
  }
  if (type.has_sequence_type() || type.has_optional_type()) return DT_VARIANT;
  return absl::UnimplementedError(
      absl::StrCat("value '", name, "' is a map or sparse tensor, which Sluice does not support"));
}

// Records the types of the graph's values: shapes of tensors, whole types of the rest.
void RecordTypes(const onnx::GraphProto& g, absl::flat_hash_map<std::string, PartialShape>* shapes,
                 absl::flat_hash_map<std::string, onnx::TypeProto>* value_types) {
  for (const auto* list : {&g.value_info(), &g.input(), &g.output()}) {
    for (const auto& vi : *list) {
      (*shapes)[vi.name()] = ShapeOf(vi.type());
      if (vi.type().has_sequence_type() || vi.type().has_optional_type()) (*value_types)[vi.name()] = vi.type();
    }
  }
}

// Renames, per `rename`, the names `g` and its subgraphs read from enclosing graphs; names a
// graph defines itself (inputs, initializers, node outputs) shadow outer ones and stay.
void RenameOuterNames(onnx::GraphProto* g, const absl::flat_hash_map<std::string, std::string>& rename,
                      absl::flat_hash_set<std::string> defined) {
  for (const auto& in : g->input()) defined.insert(in.name());
  for (const auto& init : g->initializer()) defined.insert(init.name());
  for (const auto& n : g->node()) defined.insert(n.output().begin(), n.output().end());
  for (auto& n : *g->mutable_node()) {
    for (auto& in : *n.mutable_input()) {
      auto it = rename.find(in);
      if (!in.empty() && !defined.contains(in) && it != rename.end()) in = it->second;
    }
    for (auto& a : *n.mutable_attribute()) {
      if (a.type() == onnx::AttributeProto::GRAPH) RenameOuterNames(a.mutable_g(), rename, defined);
    }
  }
  for (auto& out : *g->mutable_output()) {
    auto it = rename.find(out.name());
    if (!defined.contains(out.name()) && it != rename.end()) out.set_name(it->second);
  }
}

// An initializer as a Sluice TensorProto, moving raw bytes instead of copying them.
absl::Status InitializerToProto(onnx::TensorProto* init, TensorProto* out) {
  auto type = DataTypeFromOnnx(init->data_type());
  SL_RETURN_IF_ERROR(type.status(), "initializer '", init->name(), "'");
  const DataType dt = *type;
  // 4-bit values arrive two to a byte and are held one per byte: TensorFromOnnx unpacks them.
  if (init->has_raw_data() && dt != DT_STRING && dt != DT_INT4 && dt != DT_UINT4) {
    std::vector<int64_t> dims(init->dims().begin(), init->dims().end());
    SL_ASSIGN_OR_RETURN(TensorShape shape, TensorShape::FromDims(dims));
    const size_t want = static_cast<size_t>(shape.num_elements()) * DataTypeSize(dt);
    if (init->raw_data().size() != want) {
      return absl::InvalidArgumentError(absl::StrCat(
          "initializer '", init->name(), "' of ", DataTypeString(dt), " ", shape.DebugString(),
          " needs ", want, " bytes of raw_data but has ", init->raw_data().size()));
    }
    out->set_dtype(dt);
    shape.AsProto(out->mutable_tensor_shape());
    out->mutable_tensor_content()->swap(*init->mutable_raw_data());
    return absl::OkStatus();
  }
  auto t = TensorFromOnnx(*init);
  SL_RETURN_IF_ERROR(t.status(), "initializer '", init->name(), "'");
  t->AsProtoTensorContent(out);
  return absl::OkStatus();
}

}  // namespace

const OnnxImporter::TensorInfo* OnnxImporter::Find(const std::string& onnx_name) {
  auto it = onnx_tensors_.find(onnx_name);
  if (it != onnx_tensors_.end()) return &it->second;
  if (parent_ == nullptr || onnx_name.empty()) return nullptr;
  const TensorInfo* outer = parent_->Find(onnx_name);
  if (outer == nullptr) return nullptr;
  // An outer value read by this subgraph: it arrives as one more function argument.
  NodeDef arg;
  arg.set_name(UniqueNodeName(onnx_name + "/captured"));
  arg.set_op("_Arg");
  AddNodeAttr("T", outer->dtype, &arg);
  AddNodeAttr("index", static_cast<int64_t>(first_capture_index_ + captured_.size()), &arg);
  std::string tensor = arg.name();
  DataType dt = outer->dtype;
  onnx::TypeProto type = outer->type;
  captured_.push_back(outer->tensor);
  captured_types_.push_back(dt);
  AppendNode(std::move(arg), {dt});
  Bind(onnx_name, {tensor, dt, std::move(type)});
  return &onnx_tensors_[onnx_name];
}

const onnx::TypeProto* OnnxImporter::ValueType(const std::string& onnx_name) {
  const TensorInfo* info = Find(onnx_name);
  if (info != nullptr && info->type.value_case() != onnx::TypeProto::VALUE_NOT_SET) return &info->type;
  for (OnnxImporter* imp = this; imp != nullptr; imp = imp->parent_) {
    auto it = imp->onnx_value_types_.find(onnx_name);
    if (it != imp->onnx_value_types_.end()) return &it->second;
  }
  return nullptr;
}

void OnnxImporter::SetValueType(const std::string& onnx_name, onnx::TypeProto type) {
  auto it = onnx_tensors_.find(onnx_name);
  if (it != onnx_tensors_.end()) it->second.type = std::move(type);
}

absl::StatusOr<OnnxImporter::Subgraph> OnnxImporter::ImportSubgraph(
    const onnx::GraphProto& g, absl::string_view hint, const DataTypeVector& formal_types,
    const DataTypeVector& prior_capture_types) {
  OnnxImporter child(opsets_);
  child.parent_ = this;
  child.root_ = root_;
  child.first_capture_index_ = g.input_size() + static_cast<int>(prior_capture_types.size());
  RecordTypes(g, &child.onnx_shapes_, &child.onnx_value_types_);
  DataTypeVector arg_types;
  for (int i = 0; i < g.input_size(); ++i) {
    const auto& in = g.input(i);
    DataType dt = i < static_cast<int>(formal_types.size()) ? formal_types[i] : DT_INVALID;
    if (dt == DT_INVALID) {
      SL_ASSIGN_OR_RETURN(dt, DtypeOfOnnxType(in.type(), in.name()));
    }
    NodeDef arg;
    arg.set_name(child.UniqueNodeName(in.name()));
    arg.set_op("_Arg");
    AddNodeAttr("T", dt, &arg);
    AddNodeAttr("index", static_cast<int64_t>(i), &arg);
    std::string tensor = arg.name();
    child.AppendNode(std::move(arg), {dt});
    child.Bind(in.name(), {tensor, dt, dt == DT_VARIANT ? in.type() : onnx::TypeProto()});
    arg_types.push_back(dt);
  }
  for (const auto& init : g.initializer()) {
    onnx::TensorProto copy = init;
    auto t = TensorFromOnnx(copy);
    SL_RETURN_IF_ERROR(t.status(), "initializer '", init.name(), "'");
    std::string tensor = child.AddConst(*t, init.name());
    child.Bind(init.name(), {tensor, t->dtype()});
  }
  for (const auto& node : g.node()) SL_RETURN_IF_ERROR(child.ConvertNode(node, opsets_));
  Subgraph result;
  for (int i = 0; i < g.output_size(); ++i) {
    const TensorInfo* info = child.Find(g.output(i).name());
    if (info == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("subgraph output '", g.output(i).name(), "' is not produced"));
    }
    NodeDef ret;
    ret.set_name(child.UniqueNodeName(g.output(i).name() + "/retval"));
    ret.set_op("_Retval");
    ret.add_input(info->tensor);
    AddNodeAttr("T", info->dtype, &ret);
    AddNodeAttr("index", static_cast<int64_t>(i), &ret);
    result.output_types.push_back(info->dtype);
    const onnx::TypeProto* value_type = info->dtype == DT_VARIANT ? child.ValueType(g.output(i).name()) : nullptr;
    result.output_value_types.push_back(value_type != nullptr ? *value_type : onnx::TypeProto());
    child.AppendNode(std::move(ret), {});
  }
  // Name the function uniquely in the root library.
  std::string name = Sanitize(absl::StrCat(hint));
  std::string candidate = name;
  for (int i = 1; root_->function_names_.contains(candidate); ++i) candidate = absl::StrCat(name, "_", i);
  root_->function_names_.insert(candidate);
  FunctionDef* f = root_->graph_.mutable_library()->add_function();
  f->mutable_signature()->set_name(candidate);
  auto add_arg = [&](DataType dt) {
    auto* a = f->mutable_signature()->add_input_arg();
    a->set_name(absl::StrCat("arg", f->signature().input_arg_size() - 1));
    a->set_type(dt);
  };
  for (DataType dt : arg_types) add_arg(dt);
  for (DataType dt : prior_capture_types) add_arg(dt);
  for (DataType dt : child.captured_types_) add_arg(dt);
  for (size_t i = 0; i < result.output_types.size(); ++i) {
    auto* o = f->mutable_signature()->add_output_arg();
    o->set_name(absl::StrCat("ret", i));
    o->set_type(result.output_types[i]);
  }
  for (auto& n : *child.graph_.mutable_node()) *f->add_node_def() = std::move(n);
  result.function = candidate;
  result.captured = child.captured_;
  result.captured_types = child.captured_types_;
  return result;
}

DataType OnnxImporter::DtypeOf(const std::string& tensor) const {
  auto it = sluice_dtypes_.find(tensor);
  return it == sluice_dtypes_.end() ? DT_INVALID : it->second;
}

PartialShape OnnxImporter::OnnxShape(const std::string& onnx_name) const {
  auto it = onnx_shapes_.find(onnx_name);
  return it == onnx_shapes_.end() ? PartialShape() : it->second;
}

const Tensor* OnnxImporter::ConstantValue(const std::string& tensor) {
  auto v = const_values_.find(tensor);
  if (v != const_values_.end()) return &v->second;
  auto p = const_protos_.find(tensor);
  if (p == const_protos_.end()) return nullptr;
  auto t = Tensor::FromProto(*p->second);
  if (!t.ok()) return nullptr;
  return &(const_values_[tensor] = *std::move(t));
}

std::string OnnxImporter::UniqueNodeName(absl::string_view base) {
  std::string name = Sanitize(base);
  std::string candidate = name;
  for (int i = 1; node_names_.contains(candidate); ++i) candidate = absl::StrCat(name, "_", i);
  node_names_.insert(candidate);
  return candidate;
}

void OnnxImporter::AppendNode(NodeDef node, const DataTypeVector& output_types) {
  for (size_t k = 0; k < output_types.size(); ++k) {
    sluice_dtypes_[TensorId{node.name(), static_cast<int>(k)}.ToString()] = output_types[k];
  }
  *graph_.add_node() = std::move(node);
}

std::string OnnxImporter::AddConst(const Tensor& value, absl::string_view base) {
  NodeDef node;
  node.set_name(UniqueNodeName(base));
  node.set_op("Const");
  AddNodeAttr("dtype", value.dtype(), &node);
  AddNodeAttr("value", value, &node);
  std::string tensor = node.name();
  const_values_[tensor] = value;
  AppendNode(std::move(node), {value.dtype()});
  return tensor;
}

absl::StatusOr<OnnxGraph> OnnxImporter::Import(onnx::ModelProto* model) {
  onnx::GraphProto* g = model->mutable_graph();
  OnnxGraph result;
  RecordTypes(*g, &onnx_shapes_, &onnx_value_types_);
  absl::flat_hash_map<std::string, onnx::TensorProto*> initializers;
  for (auto& init : *g->mutable_initializer()) initializers[init.name()] = &init;

  auto add_const_initializer = [&](onnx::TensorProto* init, const std::string& node_name) -> absl::StatusOr<std::string> {
    NodeDef node;
    node.set_name(node_name);
    node.set_op("Const");
    TensorProto* value = (*node.mutable_attr())["value"].mutable_tensor();
    SL_RETURN_IF_ERROR(InitializerToProto(init, value));
    AddNodeAttr("dtype", value->dtype(), &node);
    DataType dt = value->dtype();
    AppendNode(std::move(node), {dt});
    const NodeDef& added = graph_.node(graph_.node_size() - 1);
    const_protos_[added.name()] = &added.attr().at("value").tensor();
    return added.name();
  };

  absl::flat_hash_set<std::string> input_names;
  for (const auto& in : g->input()) {
    input_names.insert(in.name());
    SL_ASSIGN_OR_RETURN(DataType dt, DtypeOfOnnxType(in.type(), in.name()));
    OnnxValue v;
    v.name = in.name();
    v.dtype = dt;
    v.shape = dt == DT_VARIANT ? PartialShape::Scalar() : ShapeOf(in.type());
    v.type = in.type();
    auto init = initializers.find(in.name());
    NodeDef node;
    node.set_name(UniqueNodeName(in.name()));
    if (init != initializers.end()) {
      // Feedable, with the initializer as its default.
      SL_ASSIGN_OR_RETURN(std::string def, add_const_initializer(init->second, UniqueNodeName(in.name() + "/default")));
      node.set_op("PlaceholderWithDefault");
      node.add_input(def);
      v.has_default = true;
    } else {
      node.set_op("Placeholder");
    }
    AddNodeAttr("dtype", dt, &node);
    AddNodeAttr("shape", v.shape, &node);
    v.tensor = node.name();
    AppendNode(std::move(node), {dt});
    Bind(in.name(), {v.tensor, dt, dt == DT_VARIANT ? in.type() : onnx::TypeProto()});
    result.inputs.push_back(v);
  }
  for (auto& [name, init] : initializers) {
    if (input_names.contains(name)) continue;
    SL_ASSIGN_OR_RETURN(std::string tensor, add_const_initializer(init, UniqueNodeName(name)));
    Bind(name, {tensor, DtypeOf(tensor)});
  }
  for (const auto& node : g->node()) SL_RETURN_IF_ERROR(ConvertNode(node, opsets_));
  for (const auto& out : g->output()) {
    const TensorInfo* info = Find(out.name());
    if (info == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph output '", out.name(), "' is not produced by any node"));
    }
    OnnxValue v;
    v.name = out.name();
    v.tensor = info->tensor;
    v.dtype = info->dtype;
    v.shape = ShapeOf(out.type());
    v.type = out.type();
    result.outputs.push_back(v);
  }
  // Graph outputs' declared shapes are not used: nothing checks them against what runs.
  for (const auto* list : {&g->value_info(), &g->input()}) {
    for (const auto& vi : *list) {
      if (!vi.type().has_tensor_type()) continue;
      PartialShape ps = ShapeOf(vi.type());
      auto it = onnx_tensors_.find(vi.name());
      if (ps.unknown_rank() || it == onnx_tensors_.end() || it->second.dtype == DT_VARIANT) continue;
      auto id = ParseTensorName(it->second.tensor);
      if (id.ok()) result.shapes[TensorId{id->node, id->index}.ToString()] = ps;
    }
  }
  graph_.mutable_versions()->set_producer(1);
  result.graph = std::move(graph_);
  return result;
}

absl::Status OnnxImporter::ConvertNode(const onnx::NodeProto& node,
                                       const std::unordered_map<std::string, int>& opsets) {
  const std::string domain = CanonicalDomain(node.domain());
  const std::string label = absl::StrCat("ONNX node '", node.name().empty() ? (node.output_size() ? node.output(0) : "") : node.name(),
                                         "' (", node.op_type(), ")");
  auto opset = opsets.find(domain);
  if (opset == opsets.end()) {
    return absl::InvalidArgumentError(absl::StrCat(label, " uses domain '", domain,
                                                   "', which the model does not import"));
  }
  for (const std::string& in : node.input()) {
    if (!in.empty() && Find(in) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          label, " reads tensor '", in, "', which no node produces and is neither a graph input nor an initializer"));
    }
  }
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), opset->second, domain);
  const int since = schema != nullptr ? schema->SinceVersion() : opset->second;
  std::string base = node.name();
  if (base.empty()) {
    for (const auto& o : node.output()) {
      if (!o.empty()) {
        base = o;
        break;
      }
    }
  }
  if (base.empty()) base = node.op_type();

  if (const OnnxConverterEntry* entry = OnnxConverterRegistry::Global()->Find(domain, node.op_type(), since)) {
    OnnxNodeContext ctx(this, node, since, UniqueNodeName(base));
    // A converter that throws (bad_alloc for a size taken from the model) fails this node.
    absl::Status s = CatchExceptions([&] { return entry->fn(&ctx); });
    SL_RETURN_IF_ERROR(s, label, ", version ", since);
    for (int i = 0; i < node.output_size(); ++i) {
      if (node.output(i).empty()) continue;
      const TensorInfo* out = Find(node.output(i));
      if (out == nullptr) {
        return absl::InternalError(absl::StrCat(label, ": its converter did not produce output ", i));
      }
      // A sequence or optional whose converter did not type it (Identity, If, Loop): the
      // type ONNX inference gave it, else (Identity) its input's.
      if (out->dtype == DT_VARIANT && out->type.value_case() == onnx::TypeProto::VALUE_NOT_SET) {
        const onnx::TypeProto* type = ValueType(node.output(i));
        if (type == nullptr && node.input_size() == 1 && node.output_size() == 1) type = ValueType(node.input(0));
        if (type != nullptr) SetValueType(node.output(i), *type);
      }
    }
    return absl::OkStatus();
  }
  if (schema != nullptr && (schema->HasFunction() || schema->HasContextDependentFunction())) {
    onnx::FunctionProto function;
    // ONNX keeps one function body per opset where the ops of a body changed meaning (opset
    // 18's ReduceMax takes axes as an input): take the body written for the model's opset.
    const onnx::FunctionProto* body = schema->HasFunction() ? schema->GetFunction(opset->second) : nullptr;
    if (body != nullptr) {
      function = *body;
    } else if (!schema->HasContextDependentFunction()) {
      return absl::UnimplementedError(absl::StrCat(label, ", version ", since, ": no converter, and no ONNX function body for opset ",
                                                   opset->second));
    } else {
      std::vector<onnx::TypeProto> types;
      for (const std::string& in : node.input()) {
        onnx::TypeProto t;
        const onnx::TypeProto* value_type = in.empty() || Find(in)->dtype != DT_VARIANT ? nullptr : ValueType(in);
        if (value_type != nullptr) {
          t = *value_type;  // A sequence or optional (SequenceMap's inputs).
        } else if (!in.empty()) {
          auto onnx_type = DataTypeToOnnx(Find(in)->dtype);
          if (onnx_type.ok()) t.mutable_tensor_type()->set_elem_type(*onnx_type);
          onnx::TensorShapeProto* shape = t.mutable_tensor_type()->mutable_shape();
          PartialShape ps = OnnxShape(in);
          if (!ps.unknown_rank()) {
            for (int64_t d : ps.dims()) {
              if (d >= 0) shape->add_dim()->set_dim_value(d); else shape->add_dim();
            }
          } else {
            t.mutable_tensor_type()->clear_shape();
          }
        }
        types.push_back(t);
      }
      onnx::FunctionBodyBuildContextImpl build_ctx(node, types);
      bool built = false;
      SL_RETURN_IF_ERROR(CallOnnx(absl::StrCat(label, ": expanding its function body failed"), [&] {
        built = schema->BuildContextDependentFunction(build_ctx, function, opset->second);
      }));
      if (!built) {
        return absl::UnimplementedError(absl::StrCat(label, ", version ", since,
                                                     ": no converter, and its function body does not apply here"));
      }
    }
    SL_RETURN_IF_ERROR(ExpandFunction(node, function, opsets), label, ", version ", since,
                           " (expanded from its ONNX function body)");
    return absl::OkStatus();
  }
  if (schema == nullptr) {
    return absl::NotFoundError(absl::StrCat(label, ": no operator '", node.op_type(), "' in domain '",
                                            domain, "' at opset ", opset->second));
  }
  return absl::UnimplementedError(absl::StrCat(label, ", version ", since, " is not supported by Sluice"));
}

absl::Status OnnxImporter::ExpandFunction(const onnx::NodeProto& node, const onnx::FunctionProto& f,
                                          const std::unordered_map<std::string, int>& opsets) {
  // Function-local names become unique graph names; formal inputs and outputs become the
  // caller's.
  const std::string prefix = absl::StrCat("__fn", function_counter_++, "/");
  absl::flat_hash_map<std::string, std::string> rename;
  for (int i = 0; i < f.input_size(); ++i) rename[f.input(i)] = i < node.input_size() ? node.input(i) : "";
  for (int i = 0; i < f.output_size(); ++i) {
    rename[f.output(i)] = i < node.output_size() && !node.output(i).empty() ? node.output(i)
                                                                              : prefix + f.output(i);
  }
  auto map_name = [&](const std::string& n) -> std::string {
    if (n.empty()) return n;
    auto it = rename.find(n);
    if (it != rename.end()) return it->second;
    return rename[n] = prefix + n;
  };
  absl::flat_hash_map<std::string, const onnx::AttributeProto*> caller_attrs;
  for (const auto& a : node.attribute()) caller_attrs[a.name()] = &a;
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(
      node.op_type(), opsets.at(CanonicalDomain(node.domain())), CanonicalDomain(node.domain()));

  std::unordered_map<std::string, int> body_opsets = opsets;
  for (const auto& imp : f.opset_import()) body_opsets[CanonicalDomain(imp.domain())] = static_cast<int>(imp.version());

  for (const onnx::NodeProto& body : f.node()) {
    onnx::NodeProto n = body;
    for (auto& in : *n.mutable_input()) in = map_name(in);
    for (auto& out : *n.mutable_output()) out = map_name(out);
    if (n.name().empty() && n.output_size() > 0) n.set_name(n.output(0));
    // Attributes that refer to the caller's: take the caller's value, else the schema default.
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> attrs;
    for (const auto& a : n.attribute()) {
      if (a.ref_attr_name().empty()) {
        *attrs.Add() = a;
        continue;
      }
      const onnx::AttributeProto* value = nullptr;
      auto it = caller_attrs.find(a.ref_attr_name());
      if (it != caller_attrs.end()) {
        value = it->second;
      } else if (schema != nullptr) {
        auto d = schema->attributes().find(a.ref_attr_name());
        if (d != schema->attributes().end() && d->second.default_value.type() != onnx::AttributeProto::UNDEFINED) {
          value = &d->second.default_value;
        }
      }
      if (value == nullptr) continue;  // Unset and no default: the attribute is omitted.
      onnx::AttributeProto copy = *value;
      copy.set_name(a.name());
      *attrs.Add() = copy;
    }
    *n.mutable_attribute() = attrs;
    // Subgraphs (a Loop body in SequenceMap's) read the function's names too.
    for (auto& a : *n.mutable_attribute()) {
      if (a.type() == onnx::AttributeProto::GRAPH) RenameOuterNames(a.mutable_g(), rename, {});
    }
    SL_RETURN_IF_ERROR(ConvertNode(n, body_opsets));
  }
  return absl::OkStatus();
}

namespace {

// Writes what ONNX shape inference (and the graph inputs' declarations) know of each node's
// outputs as the node's `_output_shapes` attr, TensorFlow's annotation: the master's optimizer
// starts from it (optimizer/graph_item.h), wherever the GraphDef goes.
void AnnotateOutputShapes(OnnxGraph* graph) {
  if (graph->shapes.empty()) return;
  for (NodeDef& n : *graph->graph.mutable_node()) {
    auto op = OpRegistry::Global()->LookUpOpDef(n.op());
    int num_outputs = 0;
    if (!op.ok() || !NumOutputsForNode(n, **op, &num_outputs).ok() || num_outputs <= 0) continue;
    bool any = false;
    std::vector<const PartialShape*> known(num_outputs, nullptr);
    for (int k = 0; k < num_outputs; ++k) {
      auto it = graph->shapes.find(TensorId{n.name(), k}.ToString());
      if (it != graph->shapes.end()) known[k] = &it->second;
      any = any || known[k] != nullptr;
    }
    if (!any) continue;
    AttrValue::ListValue* list = (*n.mutable_attr())["_output_shapes"].mutable_list();
    for (int k = 0; k < num_outputs; ++k) {
      TensorShapeProto* shape = list->add_shape();
      if (known[k] == nullptr) {
        shape->set_unknown_rank(true);
      } else {
        known[k]->AsProto(shape);
      }
    }
  }
}

}  // namespace

OnnxGraphEnds EndsOf(const OnnxGraph& graph) {
  OnnxGraphEnds ends;
  for (const auto& in : graph.inputs) {
    ends.inputs.push_back(in.tensor);
    if (!in.has_default) ends.feed_shapes[in.tensor] = in.shape;
  }
  for (const auto& out : graph.outputs) ends.outputs.push_back(out.tensor);
  return ends;
}

absl::StatusOr<OnnxGraph> ImportOnnxModel(onnx::ModelProto model, const OnnxImportOptions& options) {
  std::unordered_map<std::string, int> opsets;
  for (const auto& imp : model.opset_import()) {
    opsets[CanonicalDomain(imp.domain())] = static_cast<int>(imp.version());
  }
  auto onnx_opset = opsets.find("");
  if (onnx_opset != opsets.end() && onnx_opset->second > kMaxOpset) {
    return absl::UnimplementedError(absl::StrCat("the model needs ai.onnx opset ", onnx_opset->second,
                                                 "; Sluice supports opsets up to ", kMaxOpset));
  }
  // Before the ONNX library: it divides by some attributes unchecked (a stride of 0 is SIGFPE).
  SL_RETURN_IF_ERROR(CheckAttrsBeforeOnnx(model));
  if (options.check) {
    SL_RETURN_IF_ERROR(CallOnnx("the ONNX checker rejects the model",
                                [&] { onnx::checker::check_model(model); }));
  }
  if (options.infer_shapes) {
    // In a child process: the ONNX library crashes on some malformed models.
    SL_RETURN_IF_ERROR(InferShapesIsolated(&model, "ONNX shape inference failed",
                                           [](onnx::ModelProto& m) { onnx::shape_inference::InferShapes(m); }));
  }
  OnnxImporter importer(std::move(opsets));
  SL_ASSIGN_OR_RETURN(OnnxGraph graph, importer.Import(&model));
  if (!options.fixed_input_shapes) {
    for (auto& [tensor, shape] : graph.shapes) shape = PartialShape(std::vector<int64_t>(shape.rank(), -1));
  }
  AnnotateOutputShapes(&graph);
  return graph;
}

absl::StatusOr<OnnxGraph> ImportOnnxFile(const std::string& path, const OnnxImportOptions& options) {
  SL_ASSIGN_OR_RETURN(onnx::ModelProto model, LoadOnnxModel(path));
  auto g = ImportOnnxModel(std::move(model), options);
  SL_RETURN_IF_ERROR(g.status(), path);
  return g;
}

}  // namespace sluice
