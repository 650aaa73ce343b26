// Functions through the C API: a graph's operations made into a FunctionDef of the kind
// Sluice's runtime runs (_Arg and _Retval nodes in a GraphDef-syntax body, as the ONNX
// importer writes the branches of If and the bodies of Loop and Scan), and graphs' libraries.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "c_api/c_api.h"
#include "c_api/c_api_internal.h"
#include "framework/node_def_util.h"
#include "framework/status.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/message_differencer.h"
#include "proto/function.pb.h"

// A FunctionDef, owned by the handle.
struct TF_Function {
  sluice::FunctionDef fdef;
};

namespace sluice {
namespace {

// A stable 64-bit FNV-1a hash (absl::Hash changes between processes).
uint64_t Fnv1a(const std::string& bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// An argument name the signature can hold: lower case letters, digits and '_', starting with
// a letter.
std::string ArgName(absl::string_view raw, absl::string_view fallback) {
  std::string out;
  for (char c : raw) out.push_back(absl::ascii_isalnum(c) ? absl::ascii_tolower(c) : '_');
  if (out.empty() || !absl::ascii_isalpha(out[0])) out = std::string(fallback);
  return out;
}

// `base`, or `base_1`, `base_2`, ..., the first not in `taken`; then taken.
std::string Unique(std::string base, absl::flat_hash_set<std::string>* taken) {
  std::string name = base;
  for (int i = 1; taken->contains(name); ++i) name = absl::StrCat(base, "_", i);
  taken->insert(name);
  return name;
}

// The bytes of `f` with map entries in key order, so equal functions compare equal (a copy of a
// map may iterate in another order).
std::string DeterministicBytes(const FunctionDef& f) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.SetSerializationDeterministic(true);
    f.SerializeToCodedStream(&out);
  }
  return bytes;
}

std::string TensorName(const Node* node, int index) {
  return index == 0 ? node->name() : absl::StrCat(node->name(), ":", index);
}

struct FunctionSpec {
  const TF_Graph* body = nullptr;
  const char* name = nullptr;
  bool append_hash = false;
  int num_opers = -1;
  const TF_Operation* const* opers = nullptr;
  int ninputs = 0;
  const TF_Output* inputs = nullptr;
  int noutputs = 0;
  const TF_Output* outputs = nullptr;
  const char* const* output_names = nullptr;
  int ncontrol_outputs = 0;
  const TF_Operation* const* control_outputs = nullptr;
  const char* const* control_output_names = nullptr;
  const TF_FunctionOptions* opts = nullptr;
  const char* description = nullptr;
};

absl::StatusOr<FunctionDef> GraphToFunctionDef(const FunctionSpec& spec) {
  constexpr char kFn[] = "TF_GraphToFunction";
  if (spec.body == nullptr) return NullArgument(kFn, "fn_body");
  if (spec.name == nullptr || spec.name[0] == '\0') {
    return absl::InvalidArgumentError(absl::StrCat(kFn, ": fn_name is null or empty"));
  }
  if (spec.opts != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(kFn, ": no TF_FunctionOptions are defined; pass NULL"));
  }
  if (spec.ninputs < 0 || spec.noutputs < 0 || spec.ncontrol_outputs < 0 || spec.num_opers < -1) {
    return absl::InvalidArgumentError(absl::StrCat(kFn, ": a negative count"));
  }
  if ((spec.ninputs > 0 && spec.inputs == nullptr) || (spec.noutputs > 0 && spec.outputs == nullptr) ||
      (spec.num_opers > 0 && spec.opers == nullptr) ||
      (spec.ncontrol_outputs > 0 &&
       (spec.control_outputs == nullptr || spec.control_output_names == nullptr))) {
    return absl::InvalidArgumentError(absl::StrCat(kFn, ": a null array with a nonzero count"));
  }
  const TF_Graph& g = *spec.body;
  absl::ReaderMutexLock lock(&g.mu);

  // Inputs: each tensor of the body graph becomes argument i.
  absl::flat_hash_map<std::pair<const Node*, int>, int> input_index;
  absl::flat_hash_set<const Node*> input_nodes;
  for (int i = 0; i < spec.ninputs; ++i) {
    SL_RETURN_IF_ERROR(CheckOutput(g, spec.inputs[i], absl::StrCat(kFn, ": input ", i)));
    const Node* n = spec.inputs[i].oper->node;
    if (!input_index.emplace(std::make_pair(n, spec.inputs[i].index), i).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": input ", i, " (", OutputName(spec.inputs[i]), ") is given twice"));
    }
    input_nodes.insert(n);
  }

  // The body, in the graph's order (each operation after its inputs).
  std::vector<const TF_Operation*> body;
  if (spec.num_opers == -1) {
    for (const auto& op : g.ops) {
      if (op == nullptr || g.OperationOf(op->node) != op.get()) continue;
      if (input_nodes.contains(op->node)) {
        if (op->node->num_outputs() != 1) {
          return absl::InvalidArgumentError(absl::StrCat(
              kFn, ": with num_opers -1, an operation whose output is an input must have one "
                   "output; '", op->node->name(), "' has ", op->node->num_outputs()));
        }
        continue;
      }
      body.push_back(op.get());
    }
  } else {
    absl::flat_hash_set<const TF_Operation*> chosen;
    for (int i = 0; i < spec.num_opers; ++i) {
      if (!InGraph(g, spec.opers[i])) {
        return absl::InvalidArgumentError(
            absl::StrCat(kFn, ": opers[", i, "] is null or not an operation of fn_body"));
      }
      chosen.insert(spec.opers[i]);
    }
    for (const auto& op : g.ops) {
      if (op != nullptr && chosen.contains(op.get())) body.push_back(op.get());
    }
  }
  absl::flat_hash_set<const Node*> in_body;
  absl::flat_hash_set<std::string> names;
  for (const TF_Operation* op : body) {
    in_body.insert(op->node);
    names.insert(op->node->name());
  }

  FunctionDef fdef;
  OpDef* sig = fdef.mutable_signature();
  if (spec.description != nullptr) sig->set_summary(spec.description);

  // One _Arg node per input; the tensors they replace.
  absl::flat_hash_set<std::string> arg_names;
  std::vector<std::string> arg_node(spec.ninputs);
  for (int i = 0; i < spec.ninputs; ++i) {
    const Node* n = spec.inputs[i].oper->node;
    const DataType dt = n->output_types()[spec.inputs[i].index];
    std::string arg = Unique(ArgName(spec.inputs[i].index == 0 ? n->name() : "", absl::StrCat("input", i)),
                             &arg_names);
    OpDef::ArgDef* a = sig->add_input_arg();
    a->set_name(arg);
    a->set_type(dt);
    NodeDef node;
    node.set_name(Unique(arg, &names));
    node.set_op("_Arg");
    AddNodeAttr("T", dt, &node);
    AddNodeAttr("index", static_cast<int64_t>(i), &node);
    arg_node[i] = node.name();
    *fdef.add_node_def() = std::move(node);
  }
  // What a body tensor reads as inside the function.
  auto body_tensor = [&](const Node* src, int index) -> absl::StatusOr<std::string> {
    auto it = input_index.find(std::make_pair(src, index));
    if (it != input_index.end()) return arg_node[it->second];
    if (in_body.contains(src)) return TensorName(src, index);
    return absl::InvalidArgumentError(absl::StrCat(
        kFn, ": '", TensorName(src, index), "' is read in the body but is neither a function "
             "input nor an output of a body operation"));
  };

  for (const TF_Operation* op : body) {
    NodeDef node = op->node->def();
    node.clear_input();
    std::vector<const Edge*> data;  // By input index.
    std::vector<const Edge*> control;
    for (const Edge* e : op->node->in_edges()) {
      if (e->IsControl()) {
        if (in_body.contains(e->src)) control.push_back(e);
      } else {
        if (static_cast<size_t>(e->dst_input) >= data.size()) data.resize(e->dst_input + 1, nullptr);
        data[e->dst_input] = e;
      }
    }
    for (size_t i = 0; i < data.size(); ++i) {
      if (data[i] == nullptr) {
        return absl::InternalError(absl::StrCat(kFn, ": input ", i, " of '", node.name(), "' has no edge"));
      }
      SL_ASSIGN_OR_RETURN(std::string t, body_tensor(data[i]->src, data[i]->src_output),
                          "input ", i, " of '", node.name(), "'");
      node.add_input(std::move(t));
    }
    for (const Edge* e : control) node.add_input(absl::StrCat("^", e->src->name()));
    *fdef.add_node_def() = std::move(node);
  }

  // One _Retval node per output.
  absl::flat_hash_set<std::string> out_names;
  for (int i = 0; i < spec.noutputs; ++i) {
    SL_RETURN_IF_ERROR(CheckOutput(g, spec.outputs[i], absl::StrCat(kFn, ": output ", i)));
    const Node* n = spec.outputs[i].oper->node;
    const DataType dt = n->output_types()[spec.outputs[i].index];
    SL_ASSIGN_OR_RETURN(std::string t, body_tensor(n, spec.outputs[i].index), "output ", i);
    std::string out = absl::StrCat("output", i);
    if (spec.output_names != nullptr) {
      if (spec.output_names[i] == nullptr || spec.output_names[i][0] == '\0') {
        return absl::InvalidArgumentError(absl::StrCat(kFn, ": output_names[", i, "] is null or empty"));
      }
      out = spec.output_names[i];
    }
    if (!out_names.insert(out).second) {
      return absl::InvalidArgumentError(absl::StrCat(kFn, ": two outputs are named '", out, "'"));
    }
    OpDef::ArgDef* a = sig->add_output_arg();
    a->set_name(out);
    a->set_type(dt);
    NodeDef node;
    node.set_name(Unique(absl::StrCat(out, "_retval"), &names));
    node.set_op("_Retval");
    node.add_input(std::move(t));
    AddNodeAttr("T", dt, &node);
    AddNodeAttr("index", static_cast<int64_t>(i), &node);
    *fdef.add_node_def() = std::move(node);
  }

  for (int i = 0; i < spec.ncontrol_outputs; ++i) {
    const TF_Operation* op = spec.control_outputs[i];
    const char* name = spec.control_output_names[i];
    if (op == nullptr || !in_body.contains(op->node)) {
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": control_outputs[", i, "] is null or not a body operation"));
    }
    if (name == nullptr || name[0] == '\0') {
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": control_output_names[", i, "] is null or empty"));
    }
    if (fdef.control_ret().contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(kFn, ": two control outputs are named '", name, "'"));
    }
    sig->add_control_output(name);
    (*fdef.mutable_control_ret())[name] = op->node->name();
  }

  std::string name = spec.name;
  if (spec.append_hash) {
    sig->set_name(name);
    name = absl::StrFormat("%s_%016x", name, Fnv1a(DeterministicBytes(fdef)));
  }
  sig->set_name(name);
  return fdef;
}

TF_Function* NewFunction(const FunctionSpec& spec, TF_Status* status) {
  absl::StatusOr<FunctionDef> fdef = GraphToFunctionDef(spec);
  if (!fdef.ok()) {
    SetStatus(status, fdef.status());
    return nullptr;
  }
  SetStatus(status, absl::OkStatus());
  return new TF_Function{*std::move(fdef)};
}

}  // namespace
}  // namespace sluice

using sluice::SetStatus;

TF_Function* TF_GraphToFunction(const TF_Graph* fn_body, const char* fn_name,
                                unsigned char append_hash_to_fn_name, int num_opers,
                                const TF_Operation* const* opers, int ninputs,
                                const TF_Output* inputs, int noutputs, const TF_Output* outputs,
                                const char* const* output_names, const TF_FunctionOptions* opts,
                                const char* description, TF_Status* status) {
  return TF_GraphToFunctionWithControlOutputs(fn_body, fn_name, append_hash_to_fn_name, num_opers,
                                              opers, ninputs, inputs, noutputs, outputs,
                                              output_names, 0, nullptr, nullptr, opts, description,
                                              status);
}

TF_Function* TF_GraphToFunctionWithControlOutputs(
    const TF_Graph* fn_body, const char* fn_name, unsigned char append_hash_to_fn_name,
    int num_opers, const TF_Operation* const* opers, int ninputs, const TF_Output* inputs,
    int noutputs, const TF_Output* outputs, const char* const* output_names,
    int ncontrol_outputs, const TF_Operation* const* control_outputs,
    const char* const* control_output_names, const TF_FunctionOptions* opts,
    const char* description, TF_Status* status) {
  sluice::FunctionSpec spec;
  spec.body = fn_body;
  spec.name = fn_name;
  spec.append_hash = append_hash_to_fn_name != 0;
  spec.num_opers = num_opers;
  spec.opers = opers;
  spec.ninputs = ninputs;
  spec.inputs = inputs;
  spec.noutputs = noutputs;
  spec.outputs = outputs;
  spec.output_names = output_names;
  spec.ncontrol_outputs = ncontrol_outputs;
  spec.control_outputs = control_outputs;
  spec.control_output_names = control_output_names;
  spec.opts = opts;
  spec.description = description;
  return sluice::NewFunction(spec, status);
}

const char* TF_FunctionName(TF_Function* func) {
  return func == nullptr ? nullptr : func->fdef.signature().name().c_str();
}

void TF_FunctionToFunctionDef(TF_Function* func, TF_Buffer* output_func_def, TF_Status* status) {
  if (func == nullptr || output_func_def == nullptr) {
    SetStatus(status, sluice::NullArgument("TF_FunctionToFunctionDef",
                                           func == nullptr ? "func" : "output_func_def"));
    return;
  }
  SetStatus(status, sluice::AddContext(sluice::MessageToBuffer(func->fdef, output_func_def),
                                       "TF_FunctionToFunctionDef"));
}

TF_Function* TF_FunctionImportFunctionDef(const void* proto, size_t proto_len, TF_Status* status) {
  sluice::FunctionDef fdef;
  if ((proto == nullptr && proto_len > 0) || !sluice::ParseFromBytes(proto, proto_len, &fdef)) {
    SetStatus(status, absl::InvalidArgumentError(
                          "TF_FunctionImportFunctionDef: the bytes are not a serialized FunctionDef"));
    return nullptr;
  }
  if (fdef.signature().name().empty()) {
    SetStatus(status, absl::InvalidArgumentError(
                          "TF_FunctionImportFunctionDef: the FunctionDef's signature has no name"));
    return nullptr;
  }
  SetStatus(status, absl::OkStatus());
  return new TF_Function{std::move(fdef)};
}

void TF_FunctionSetAttrValueProto(TF_Function* func, const char* attr_name, const void* proto,
                                  size_t proto_len, TF_Status* status) {
  constexpr char kFn[] = "TF_FunctionSetAttrValueProto";
  if (func == nullptr || attr_name == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, func == nullptr ? "func" : "attr_name"));
    return;
  }
  sluice::AttrValue value;
  if ((proto == nullptr && proto_len > 0) || !sluice::ParseFromBytes(proto, proto_len, &value)) {
    SetStatus(status, absl::InvalidArgumentError(
                          absl::StrCat(kFn, ": the bytes are not a serialized AttrValue")));
    return;
  }
  (*func->fdef.mutable_attr())[attr_name] = std::move(value);
  SetStatus(status, absl::OkStatus());
}

void TF_FunctionGetAttrValueProto(TF_Function* func, const char* attr_name,
                                  TF_Buffer* output_attr_value, TF_Status* status) {
  constexpr char kFn[] = "TF_FunctionGetAttrValueProto";
  if (func == nullptr || attr_name == nullptr || output_attr_value == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, func == nullptr        ? "func"
                                                : attr_name == nullptr ? "attr_name"
                                                                       : "output_attr_value"));
    return;
  }
  auto it = func->fdef.attr().find(attr_name);
  if (it == func->fdef.attr().end()) {
    SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                          kFn, ": function '", func->fdef.signature().name(), "' has no attr '",
                          attr_name, "'")));
    return;
  }
  SetStatus(status, sluice::AddContext(sluice::MessageToBuffer(it->second, output_attr_value), kFn));
}

void TF_DeleteFunction(TF_Function* func) { delete func; }

void TF_GraphCopyFunction(TF_Graph* g, const TF_Function* func, const TF_Function* grad,
                          TF_Status* status) {
  constexpr char kFn[] = "TF_GraphCopyFunction";
  if (g == nullptr || func == nullptr) {
    SetStatus(status, sluice::NullArgument(kFn, g == nullptr ? "g" : "func"));
    return;
  }
  absl::MutexLock lock(&g->mu);
  sluice::FunctionDefLibrary* library = g->graph.mutable_library();
  // Each function is added unless the same is there; a different one of its name is an error.
  auto needs_adding = [&](const sluice::FunctionDef& f) -> absl::StatusOr<bool> {
    for (const sluice::FunctionDef& existing : library->function()) {
      if (existing.signature().name() != f.signature().name()) continue;
      if (google::protobuf::util::MessageDifferencer::Equals(existing, f)) return false;
      return absl::InvalidArgumentError(absl::StrCat(
          kFn, ": the graph already has a different function named '", f.signature().name(), "'"));
    }
    return true;
  };
  absl::StatusOr<bool> add_func = needs_adding(func->fdef);
  absl::StatusOr<bool> add_grad = grad == nullptr ? false : needs_adding(grad->fdef);
  if (!add_func.ok() || !add_grad.ok()) {
    SetStatus(status, add_func.ok() ? add_grad.status() : add_func.status());
    return;
  }
  if (grad != nullptr) {
    const std::string& name = func->fdef.signature().name();
    for (const sluice::GradientDef& gd : library->gradient()) {
      if (gd.function_name() == name && gd.gradient_func() != grad->fdef.signature().name()) {
        SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                              kFn, ": function '", name, "' already has gradient '",
                              gd.gradient_func(), "'")));
        return;
      }
    }
  }
  if (*add_func) *library->add_function() = func->fdef;
  if (grad != nullptr) {
    if (*add_grad && grad->fdef.signature().name() != func->fdef.signature().name()) {
      *library->add_function() = grad->fdef;
    }
    bool known = false;
    for (const sluice::GradientDef& gd : library->gradient()) {
      known = known || gd.function_name() == func->fdef.signature().name();
    }
    if (!known) {
      sluice::GradientDef* gd = library->add_gradient();
      gd->set_function_name(func->fdef.signature().name());
      gd->set_gradient_func(grad->fdef.signature().name());
    }
  }
  SetStatus(status, absl::OkStatus());
}

int TF_GraphNumFunctions(TF_Graph* g) {
  if (g == nullptr) return 0;
  absl::ReaderMutexLock lock(&g->mu);
  return g->graph.library().function_size();
}

int TF_GraphGetFunctions(TF_Graph* g, TF_Function** funcs, int max_func, TF_Status* status) {
  constexpr char kFn[] = "TF_GraphGetFunctions";
  if (g == nullptr || (funcs == nullptr && max_func > 0)) {
    SetStatus(status, sluice::NullArgument(kFn, g == nullptr ? "g" : "funcs"));
    return 0;
  }
  absl::ReaderMutexLock lock(&g->mu);
  const sluice::FunctionDefLibrary& library = g->graph.library();
  const int n = std::min(std::max(max_func, 0), library.function_size());
  for (int i = 0; i < n; ++i) funcs[i] = new TF_Function{library.function(i)};
  SetStatus(status, absl::OkStatus());
  return n;
}
